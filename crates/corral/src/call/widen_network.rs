//! A call that failed on a domain the proxy refused: the result names the domain, and
//! under the `on-request` and `on-failure` approval modes the person is asked "allow
//! `registry.npmjs.org` for this run?" — a wider box, never a run outside it. A yes adds
//! the domain to the run's allow-list and reruns the call in the sandbox; a no is kept
//! for the run too, so the same domain is not asked about again. Both are recorded as
//! policy events (`layer = 'sandbox'`). With the network off (the proxy has no
//! allow-list), nothing is asked: the result names the hosts tried and what to ask for.

use corral_policy::{Act, ApprovalMode};
use corral_trace::{NewNetworkEvent, NewPolicyEvent};

use super::CallOptions;
use super::Prepared;
use crate::clock::now_ms;
use crate::ctx::Ctx;
use crate::error::Result;
use crate::gate::{Decided, SandboxAnswer, SandboxQuestion};
use crate::outcome::{Outcome, StepRef};
use crate::sandbox::proxy::Mark;
use crate::sandbox::shared::DomainAnswer;

/// How long a call's end waits for its connections through the proxy to end.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// `a`, `b` as `` `a`, `b` ``.
fn quoted(hosts: &[String]) -> String {
    hosts
        .iter()
        .map(|h| format!("`{h}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Ctx {
    /// The proxy's mark before a call (`None`: no proxy).
    pub(crate) fn proxy_mark(&self) -> Option<Mark> {
        self.sandbox.proxy.as_ref().map(|p| p.mark())
    }

    /// After a call that began at `mark`: wait (briefly) for its connections to end, so
    /// their decisions and bytes are recorded with it.
    pub(crate) fn settle_proxy(&self, mark: Option<Mark>) {
        if let (Some(proxy), Some(mark)) = (&self.sandbox.proxy, mark) {
            proxy.settle(mark, SETTLE);
        }
    }

    /// After a sandboxed call that started at `mark`: name the refused domains in a
    /// failed call's result, and offer to allow the first for the run (see the module
    /// docs).
    pub(crate) fn after_refusals(
        &self,
        mut outcome: Outcome,
        mark: Option<Mark>,
        retry: Prepared,
        step: StepRef,
        cancel: Option<crate::cancel::Cancel>,
    ) -> Result<Outcome> {
        let (Some(proxy), Some(mark)) = (self.sandbox.proxy.as_ref(), mark) else {
            return Ok(outcome);
        };
        let refused = proxy.refused_since(mark);
        if refused.is_empty() {
            return Ok(outcome);
        }
        if proxy.is_off() {
            // The network is off for the run: a person opens it when starting corral, not
            // by an answer here. The result names what the command tried.
            let line = format!(
                "sandbox: the command tried {}; {}.",
                quoted(&refused),
                crate::sandbox::relay::off_line(&refused[0])
            );
            outcome.observation =
                super::sandbox_rerun::insert_after_sandbox_line(&outcome.observation, &line);
            if let Some(report) = outcome.sandbox.as_mut() {
                report.refused_hosts = refused;
            }
            return Ok(outcome);
        }
        if outcome.status.success() {
            // Nothing to rerun, but a refusal a command swallowed is still worth saying.
            let line = format!(
                "sandbox: the network proxy refused {} (not in the allow-list). {}",
                quoted(&refused),
                crate::sandbox::relay::refusal_text(&refused[0])
            );
            outcome.observation =
                super::sandbox_rerun::insert_after_sandbox_line(&outcome.observation, &line);
            if let Some(report) = outcome.sandbox.as_mut() {
                report.refused_hosts = refused;
            }
            return Ok(outcome);
        }
        let host = refused[0].clone();
        let earlier = self.sandbox.domain_answer(&host);
        let asked = match earlier {
            None => self.offer_domain(step, &retry, &host, &refused)?,
            Some(_) => None,
        };
        if asked == Some(DomainAnswer::Allowed) {
            return self.rerun_allowing(retry, step, cancel, &host);
        }
        let why = match (earlier, asked) {
            (Some(DomainAnswer::Declined), _) => {
                "A person declined it earlier in this run. ".to_string()
            }
            (_, Some(DomainAnswer::Declined)) => "A person declined it. ".to_string(),
            _ => String::new(),
        };
        let line = format!(
            "sandbox: the network proxy refused {} (not in the allow-list). {why}{}",
            quoted(&refused),
            crate::sandbox::relay::refusal_text(&host)
        );
        outcome.observation =
            super::sandbox_rerun::insert_after_sandbox_line(&outcome.observation, &line);
        if let Some(report) = outcome.sandbox.as_mut() {
            report.refused_hosts = refused;
        }
        Ok(outcome)
    }

    /// Rerun `prepared` in the sandbox with `host` allowed (it already is, for the run).
    fn rerun_allowing(
        &self,
        prepared: Prepared,
        step: StepRef,
        cancel: Option<crate::cancel::Cancel>,
        host: &str,
    ) -> Result<Outcome> {
        let options = CallOptions {
            cancel: cancel.clone(),
            ..CallOptions::default()
        };
        let mark = self.proxy_mark();
        let retry = prepared.clone();
        let mut again = self.run_plan(
            prepared,
            step,
            options,
            &self.config.sandbox,
            crate::spawn::NamespaceAhead::default(),
        )?;
        self.settle_proxy(mark);
        if let Some(report) = again.sandbox.as_mut() {
            report.rerun_allowing = Some(host.to_string());
            let line = report.status();
            again.observation =
                super::sandbox_rerun::replace_sandbox_line(&again.observation, &line);
        }
        self.sandbox_with_end(step, again.sandbox.as_ref());
        self.record_reach(step, again.sandbox.as_ref())?;
        self.after_refusals(again, mark, retry, step, cancel)
    }

    /// Ask (in `on-request` and `on-failure` only) whether to allow `host` for the run;
    /// remember and record the answer. `None`: not asked.
    fn offer_domain(
        &self,
        step: StepRef,
        prepared: &Prepared,
        host: &str,
        refused: &[String],
    ) -> Result<Option<DomainAnswer>> {
        if !matches!(
            self.gate.mode,
            ApprovalMode::OnRequest | ApprovalMode::OnFailure
        ) {
            return Ok(None);
        }
        let Some(stage) = prepared.plan.stages().next() else {
            return Ok(None);
        };
        let command = prepared
            .line
            .clone()
            .unwrap_or_else(|| corral_line::display_argv(&stage.argv));
        let others = if refused.len() > 1 {
            format!(" (it also asked for {})", refused[1..].join(", "))
        } else {
            String::new()
        };
        let target = format!(
            "Allow `{host}` for this run? `{command}` failed: the sandbox's network proxy refused \
             {host}{others}. Yes reruns it in the sandbox with {host} reachable"
        );
        let question = SandboxQuestion {
            tool: "allow-domain",
            act: Act::Exec,
            stage,
            line: prepared.line.clone(),
            path: None,
            target: target.clone(),
        };
        let (answer, aborted) = match self.gate.ask_sandbox(question, &self.workspace) {
            SandboxAnswer::Approved | SandboxAnswer::ApprovedForRun => {
                (DomainAnswer::Allowed, None)
            }
            SandboxAnswer::Declined(_) => (DomainAnswer::Declined, None),
            SandboxAnswer::Aborted(err) => (DomainAnswer::Declined, Some(err)),
        };
        if answer == DomainAnswer::Allowed
            && let Some(proxy) = &self.sandbox.proxy
            && proxy.allow(host).is_err()
        {
            return Ok(Some(DomainAnswer::Declined));
        }
        self.sandbox.remember_domain(host, answer);
        self.store().record_policy_event(&NewPolicyEvent {
            run_id: self.id.clone(),
            step_id: Some(step.id),
            at_ms: now_ms(),
            act: "network".into(),
            target,
            effect: "ask".into(),
            rule: None,
            layer: Some("sandbox".into()),
            origin: None,
            decision: match (answer, &aborted) {
                (_, Some(_)) => Decided::DomainAborted,
                (DomainAnswer::Allowed, None) => Decided::DomainAllowedForRun,
                (DomainAnswer::Declined, None) => Decided::DomainDeclinedForRun,
            }
            .word()
            .into(),
            answered_by: Some(self.gate.approver.name().to_string()),
            reason: Some(format!("the proxy refused {host}")),
        })?;
        if let Some(err) = aborted {
            self.abort();
            return Err(err);
        }
        Ok(Some(answer))
    }

    /// Beside a call's sandbox rows: a denied read (a `denial` row of level `read`), and
    /// the proxy's decisions since the last call.
    pub(crate) fn record_reach(
        &self,
        step: StepRef,
        report: Option<&crate::sandbox::SandboxReport>,
    ) -> Result<()> {
        if let Some(report) = report
            && let Some(read) = &report.denied_read
        {
            self.store()
                .record_sandbox_event(&corral_trace::NewSandboxEvent {
                    run_id: self.id.clone(),
                    step_id: Some(step.id),
                    at_ms: now_ms(),
                    mode: report.mode.name().into(),
                    network: report.network,
                    layer: "denial".into(),
                    level: "read".into(),
                    detail: read.clone(),
                })?;
        }
        self.record_network(step)
    }

    /// Put the proxy's decisions since the last call in the trace, under `step`.
    fn record_network(&self, step: StepRef) -> Result<()> {
        let Some(proxy) = &self.sandbox.proxy else {
            return Ok(());
        };
        let events = proxy.take_events();
        if events.is_empty() {
            return Ok(());
        }
        let store = self.store();
        for e in events {
            store.record_network_event(&NewNetworkEvent {
                run_id: self.id.clone(),
                step_id: Some(step.id),
                at_ms: e.at_ms,
                mode: self.config.sandbox.mode.name().into(),
                host: e.host,
                port: e.port,
                allowed: e.allowed,
                bytes: e.bytes,
                detail: e.detail,
            })?;
        }
        Ok(())
    }
}
