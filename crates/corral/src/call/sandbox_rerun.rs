//! A foreground call in its sandbox, the record of what the sandbox enforced, and, when
//! the sandbox denied a write, what happens next: in the `on-failure` approval mode the
//! approver is offered a rerun **in the sandbox** with exactly the denied path added as a
//! writable root; otherwise (or when the approver says no) the result says what was denied
//! and what a person would have to allow. A call is never rerun without its sandbox.
//!
//! The denied path comes from evidence (see [`crate::sandbox::denied`]): a write redirect outside
//! the box (certain: corral opens redirects itself), or a path a failed command's stderr
//! names beside a permission error (inferred, and labelled so). A failure that looks like
//! the sandbox's doing but names no such path is reported as a suspected denial only.

use std::path::PathBuf;

use corral_policy::snippet::{Snippet, Value};
use corral_policy::{Act, ApprovalMode};
use corral_trace::{NewPolicyEvent, NewSandboxEvent};

use super::CallOptions;
use super::Prepared;
use super::never_granted::Never;
use crate::clock::now_ms;
use crate::ctx::Ctx;
use crate::error::{Error, ErrorKind, Result};
use crate::gate::{Decided, SandboxAnswer, SandboxQuestion};
use crate::outcome::{Outcome, StepRef};
use crate::sandbox::SandboxReport;
use crate::sandbox::denied::{self, DeniedWrite};
use crate::spawn::NamespaceAhead;

/// What the approver said about a rerun with a path added.
enum Rerun {
    /// Rerun with the path writable (for the rest of the run too, when the person said so).
    Approved,
    /// No rerun; the reason, when one was given.
    Declined(Option<String>),
    /// The approval mode does not offer reruns.
    NotOffered,
}

impl Ctx {
    /// Run `prepared` in the run's sandbox; on a denied write, offer the rerun described
    /// in the module docs.
    pub(crate) fn run_sandboxed(
        &self,
        prepared: Prepared,
        step: StepRef,
        options: CallOptions,
        ahead: NamespaceAhead,
    ) -> Result<Outcome> {
        let config = &self.config.sandbox;
        if !config.mode.is_sandboxed() {
            let outcome = self.run_plan(prepared, step, options, config, ahead)?;
            self.sandbox_with_end(step, outcome.sandbox.as_ref());
            return Ok(outcome);
        }
        let (_, protected) = crate::sandbox::roots(config, &self.workspace, &self.sandbox);
        let (roots, own) = crate::sandbox::redirect_roots(config, &self.workspace, &self.sandbox);
        let cancel = options.cancel.clone();
        // A redirect outside the box: nothing has run yet.
        if let Some(denied) = denied::redirect_outside(&prepared.plan, &roots, &protected, &own) {
            let never = self.never_granted(&denied);
            let grantable = never.is_none() && !under(&denied.path, &protected);
            return match grantable
                .then(|| self.offer_rerun(step, &prepared, &denied))
                .transpose()?
            {
                Some(Rerun::Approved) => self.rerun(prepared, step, cancel, &denied),
                answer => Err(Error::new(
                    ErrorKind::Refused,
                    format!(
                        "sandbox: {}. Nothing ran. {}",
                        denied.describe(),
                        to_allow(
                            &denied,
                            grantable,
                            never.as_ref(),
                            answer.as_ref(),
                            config.git_write
                        )
                    ),
                )),
            };
        }
        let retry = prepared.clone();
        let plan = prepared.plan.clone();
        // What git did is told from its files before and after (see `git_result`).
        let git = config
            .git_write
            .then(|| super::git_result::Before::of(&self.workspace))
            .flatten();
        let mark = self.proxy_mark();
        let outcome = self.run_plan(prepared, step, options, config, ahead)?;
        self.settle_proxy(mark);
        self.sandbox_with_end(step, outcome.sandbox.as_ref());
        self.record_reach(step, outcome.sandbox.as_ref())?;
        let mut outcome = self.after_sandboxed(step, retry, mark, outcome, cancel)?;
        if let Some(git) = git {
            git.annotate(&plan, &mut outcome);
        }
        Ok(outcome)
    }

    /// What follows a sandboxed call that ran: the domains its network proxy refused
    /// (asked about, and rerun with one allowed), or a write the box denied (asked about,
    /// and rerun with it writable); else `outcome` as it is. The same for a call that ran
    /// in the foreground and one that yielded and ended within its wait. `mark` is the
    /// proxy's log before it started.
    pub(crate) fn after_sandboxed(
        &self,
        step: StepRef,
        retry: Prepared,
        mark: Option<crate::sandbox::proxy::Mark>,
        mut outcome: Outcome,
        cancel: Option<crate::cancel::Cancel>,
    ) -> Result<Outcome> {
        let config = &self.config.sandbox;
        let (_, protected) = crate::sandbox::roots(config, &self.workspace, &self.sandbox);
        if let (Some(proxy), Some(m)) = (&self.sandbox.proxy, mark)
            && !proxy.refused_since(m).is_empty()
        {
            return self.after_refusals(outcome, mark, retry, step, cancel);
        }
        let Some(report) = outcome.sandbox.as_ref() else {
            return Ok(outcome);
        };
        if report.suspected_denial.is_none() || report.denied_read.is_some() {
            return Ok(outcome);
        }
        let text = outcome.what_it_said_of_failing();
        let Some(denied) = denied::from_stderr(
            &text,
            &report.writable,
            &protected,
            &report.own_dirs,
            crate::sandbox::home().as_deref(),
        ) else {
            return Ok(outcome);
        };
        // Only what the kernel refuses in a box like the call's is the box's doing.
        let refused = crate::sandbox::probe::box_refuses_write(
            config,
            &self.workspace,
            &self.sandbox,
            &retry.plan,
            &denied.path,
        );
        if refused == Some(false) {
            if let Some(report) = outcome.sandbox.as_mut() {
                report.denied_write = None;
            }
            return Ok(outcome);
        }
        let never = self.never_granted(&denied);
        let grantable = never.is_none() && !under(&denied.path, &protected);
        let answer = if grantable {
            self.offer_rerun(step, &retry, &denied)?
        } else {
            Rerun::NotOffered
        };
        if let Rerun::Approved = answer {
            return self.rerun(retry, step, cancel, &denied);
        }
        let line = format!(
            "sandbox: denied {}. {}",
            denied.describe_beside(&outcome.observation),
            to_allow(
                &denied,
                grantable,
                never.as_ref(),
                Some(&answer),
                config.git_write
            )
        );
        // The denial said once: in place of the guess it makes certain, and without the
        // stderr line the result shows already.
        let guess = outcome
            .sandbox
            .as_ref()
            .and_then(|r| r.suspected_denial.as_deref());
        outcome.observation = match guess {
            Some(guess) => replace_guess(&outcome.observation, guess, &line),
            None => insert_after_sandbox_line(&outcome.observation, &line),
        };
        if let Some(report) = outcome.sandbox.as_mut() {
            report.denied_write = Some(denied.describe());
        }
        Ok(outcome)
    }

    /// Why a rerun with `denied`'s grant writable is never offered, if it is not (see
    /// [`super::never_granted`]).
    fn never_granted(&self, denied: &DeniedWrite) -> Option<Never> {
        super::never_granted::never(
            &denied.grant,
            &self.protected,
            crate::sandbox::home().as_deref(),
            std::env::var_os("PATH").as_deref(),
        )
    }

    /// Run `prepared` again in the sandbox with the denied path writable.
    fn rerun(
        &self,
        prepared: Prepared,
        step: StepRef,
        cancel: Option<crate::cancel::Cancel>,
        denied: &DeniedWrite,
    ) -> Result<Outcome> {
        let mut widened = self.config.sandbox.clone();
        widened.writable_roots.push(denied.grant.clone());
        let options = CallOptions {
            cancel,
            ..CallOptions::default()
        };
        let mut again =
            self.run_plan(prepared, step, options, &widened, NamespaceAhead::default())?;
        if let Some(report) = again.sandbox.as_mut() {
            report.rerun_with = Some(denied.grant.clone());
            let line = report.status();
            again.observation = replace_sandbox_line(&again.observation, &line);
        }
        self.sandbox_with_end(step, again.sandbox.as_ref());
        Ok(again)
    }

    /// Ask the approver (in `on-failure` only) whether to rerun with `denied.grant`
    /// writable; record the question and the answer.
    fn offer_rerun(
        &self,
        step: StepRef,
        prepared: &Prepared,
        denied: &DeniedWrite,
    ) -> Result<Rerun> {
        if self.gate.mode != ApprovalMode::OnFailure {
            return Ok(Rerun::NotOffered);
        }
        let Some(stage) = prepared.plan.stages().next() else {
            return Ok(Rerun::NotOffered);
        };
        let command = prepared
            .line
            .clone()
            .unwrap_or_else(|| corral_line::display_argv(&stage.argv));
        let target = format!(
            "rerun `{command}` in the sandbox with {} writable; the sandbox denied {}",
            denied.grant_words(),
            denied.describe()
        );
        let question = SandboxQuestion {
            tool: "rerun-sandboxed",
            act: Act::Write,
            stage,
            line: prepared.line.clone(),
            path: Some(denied.grant.clone()),
            target: target.clone(),
        };
        let (rerun, decision, aborted) = match self.gate.ask_sandbox(question, &self.workspace) {
            SandboxAnswer::Approved => (Rerun::Approved, Decided::RerunApproved, None),
            SandboxAnswer::ApprovedForRun => {
                self.sandbox.allow(denied.grant.clone());
                (Rerun::Approved, Decided::RerunApprovedForRun, None)
            }
            SandboxAnswer::Declined(r) => (Rerun::Declined(r), Decided::RerunDenied, None),
            SandboxAnswer::Aborted(err) => {
                (Rerun::Declined(None), Decided::RerunAborted, Some(err))
            }
        };
        let reason = match &rerun {
            Rerun::Declined(Some(r)) => r.clone(),
            _ => denied.describe(),
        };
        self.store().record_policy_event(&NewPolicyEvent {
            run_id: self.id.clone(),
            step_id: Some(step.id),
            at_ms: now_ms(),
            act: "write".into(),
            target,
            effect: "ask".into(),
            rule: None,
            layer: Some("sandbox".into()),
            origin: None,
            decision: decision.word().into(),
            answered_by: Some(self.gate.approver.name().to_string()),
            reason: Some(reason),
        })?;
        if let Some(err) = aborted {
            self.abort();
            return Err(err);
        }
        Ok(rerun)
    }

    /// One `sandbox_events` row per layer, one for the caches, and one for a denial,
    /// written now, in one transaction (a handle's, whose step ends at its start).
    pub(crate) fn record_sandbox(
        &self,
        step: StepRef,
        report: Option<&SandboxReport>,
    ) -> Result<()> {
        match self.write_rows(&self.sandbox_rows(step, report)) {
            // The command ran: its result (which carries the same report) must not be
            // lost to a lock another writer holds or a full disk; these rows are.
            Err(e) if e.is_transient() => Ok(()),
            other => other.map_err(Into::into),
        }
    }

    /// The same rows as [`Self::record_sandbox`], written with the step's end, in its
    /// transaction (see [`Run::with_step_end`]): for a call whose step ends when it
    /// returns.
    pub(crate) fn sandbox_with_end(&self, step: StepRef, report: Option<&SandboxReport>) {
        self.with_step_end(self.sandbox_rows(step, report));
    }

    fn sandbox_rows(&self, step: StepRef, report: Option<&SandboxReport>) -> Vec<NewSandboxEvent> {
        let Some(report) = report else {
            return Vec::new();
        };
        let at_ms = now_ms();
        let event = |layer: &str, level: &str, detail: String| NewSandboxEvent {
            run_id: self.id.clone(),
            step_id: Some(step.id),
            at_ms,
            mode: report.mode.name().into(),
            network: report.network || !report.mode.is_sandboxed(),
            layer: layer.into(),
            level: level.into(),
            detail,
        };
        let mut rows = Vec::new();
        if report.layers.is_empty() {
            let detail = format!("sandbox mode {}: corral applied none", report.mode);
            rows.push(event("mode", "none", detail));
        }
        for l in &report.layers {
            rows.push(event(l.layer.name(), l.level.name(), l.detail.clone()));
        }
        if let Some(dir) = &report.caches {
            let detail = format!("build tool caches in {}", dir.display());
            rows.push(event("caches", "full", detail));
        }
        if let Some(path) = &report.rerun_with {
            let detail = format!("rerun with {} writable, approved", path.display());
            rows.push(event("rerun", "approved", detail));
        }
        if let Some(denial) = &report.suspected_denial {
            rows.push(event("denial", "suspected", denial.clone()));
        }
        rows
    }
}

fn under(path: &std::path::Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|r| path.starts_with(r))
}

/// What a person would have to allow, and why it was not.
fn to_allow(
    denied: &DeniedWrite,
    grantable: bool,
    never: Option<&Never>,
    answer: Option<&Rerun>,
    git_write: bool,
) -> String {
    if let Some(never) = never {
        return never.explain(&denied.grant);
    }
    let in_git = denied.path.components().any(|c| c.as_os_str() == ".git");
    if !grantable && in_git && !git_write {
        // The sentence before names the path.
        let snippet = Snippet::new().set("sandbox", "git_write", Value::Bool(true));
        return format!(
            "It is in the repository's git metadata, which the sandbox keeps read-only (a \
             changed hook or config would run code on your machine): run git's writing \
             commands (`git commit`, `git checkout`) outside corral, or let git write (its \
             hooks and config stay read-only) with `--git-write`, or with these lines in a \
             trusted policy file; {}",
            snippet.pasting()
        );
    }
    if !grantable {
        return "It is protected in the workspace (read-only in the sandbox): change it outside \
             corral"
            .to_string();
    }
    let why = match answer {
        Some(Rerun::Declined(Some(reason))) => format!("The rerun was not approved: {reason}. "),
        Some(Rerun::Declined(None)) => "The rerun was not approved. ".to_string(),
        _ => String::new(),
    };
    format!(
        "{why}To allow it, a person approves a rerun with {} writable (approval mode on-failure), \
         or starts corral with `--writable {}`",
        denied.grant_words(),
        denied.grant.display()
    )
}

/// Put `line` in place of the observation's line saying the sandbox may have refused
/// what `guess` says, or after the sandbox status line where there is none.
fn replace_guess(observation: &str, guess: &str, line: &str) -> String {
    let mut lines: Vec<&str> = observation.split('\n').collect();
    match lines
        .iter()
        .position(|l| l.starts_with("sandbox: ") && l.ends_with(guess))
    {
        Some(i) => {
            lines[i] = line;
            lines.join("\n")
        }
        None => insert_after_sandbox_line(observation, line),
    }
}

/// Put `line` after the observation's sandbox status line, or (a run shows that line only
/// when it changes) after its first line.
pub(super) fn insert_after_sandbox_line(observation: &str, line: &str) -> String {
    let mut lines: Vec<&str> = observation.split('\n').collect();
    let at = lines
        .iter()
        .position(|l| SandboxReport::is_status(l))
        .map_or(1, |i| i + 1)
        .min(lines.len());
    lines.insert(at, line);
    lines.join("\n")
}

/// Put `line`, a rerun's status line, in place of the observation's status line, or after
/// its first line where the run did not repeat it.
pub(super) fn replace_sandbox_line(observation: &str, line: &str) -> String {
    let mut lines: Vec<&str> = observation.split('\n').collect();
    match lines.iter().position(|l| SandboxReport::is_status(l)) {
        Some(i) => lines[i] = line,
        None => lines.insert(1.min(lines.len()), line),
    }
    lines.join("\n")
}
