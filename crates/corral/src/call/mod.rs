//! What every call shares, whatever the tool: a step row opened before anything else, a
//! plan, the spawn and watch, the rendering, the step row completed.

mod git_result;
mod never_granted;
mod room;
mod sandbox_rerun;
mod stub_refusals;
mod widen_network;

use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use corral_trace::{NewStep, StepDone};

use crate::cancel::Cancel;
use crate::capture::Sink;
use crate::clock::now_ms;
use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::gate::{self, Passage};
use crate::job::{Job, Line, Watching};
use crate::outcome::{Outcome, Status, StepRef};
use crate::pipeline::Outputs;
use crate::plan::Plan;
use crate::spawn;

/// How a call is watched from outside, beyond its request.
#[derive(Default)]
pub struct CallOptions {
    /// Receives every chunk of the command's stdout as it is read, besides the capture.
    /// The CLI passes its own stdout, so a person sees output as it is printed.
    pub stdout: Option<Box<dyn Write + Send>>,
    /// The same for stderr.
    pub stderr: Option<Box<dyn Write + Send>>,
    /// Ends the call when triggered.
    pub cancel: Option<Cancel>,
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("stdout", &self.stdout.is_some())
            .field("stderr", &self.stderr.is_some())
            .field("cancel", &self.cancel)
            .finish()
    }
}

/// Everything a tool decided before the shared path takes over.
#[derive(Clone)]
pub(crate) struct Prepared {
    pub plan: Plan,
    pub env: Vec<crate::env::Var>,
    pub timeout: Duration,
    /// Write "corral: REASON" to a stage's stderr when its program is unavailable, as a
    /// shell would; `exec` reports it in the status line only.
    pub report_unavailable: bool,
    /// The line as asked, for `shell` (shown to an approver).
    pub line: Option<String>,
    /// It runs on a terminal, so programs that need one may start.
    pub terminal: bool,
    /// What it runs reads input a model types later (a terminal's or a stdin pipe's),
    /// which corral cannot check as it checks a line.
    pub typed: bool,
    /// Who approved it already (see [`crate::gate::Context::approved_by`]).
    pub approved_by: Option<String>,
    /// Bytes of output text its result shows: the call's `max_output`, else the run's
    /// [`Config::output_budget`](crate::Config).
    pub output_budget: usize,
}

impl Ctx {
    /// Record the call, prepare it with `prepare` (which may refuse it), run it, record
    /// how it ended. `cwd` is the working directory as requested.
    pub(crate) fn call(
        &self,
        tool: &str,
        call_json: String,
        cwd: Option<&std::path::Path>,
        options: CallOptions,
        prepare: impl FnOnce(PathBuf) -> Result<Prepared>,
    ) -> Result<Outcome> {
        // The call's PID namespace is made on another thread while its step is recorded
        // and its line planned and checked; ended unused if the call runs nothing.
        let ahead = self.namespace_ahead();
        self.checked(
            tool,
            call_json,
            cwd,
            prepare,
            |prepared, step| {
                let writes = crate::recorded::may_write(&prepared.plan);
                let (mut outcome, note) = self.recorded(step, writes, || {
                    self.run_sandboxed(prepared, step, options, ahead)
                })?;
                crate::recorded::with_note(&mut outcome.observation, note);
                self.record_stub_refusals(&outcome);
                Ok(outcome)
            },
            |outcome| done(tool, outcome),
        )
    }

    /// The PID namespace for a call about to start: the one the run started as it opened,
    /// for its first call, or one started now, where the call gets one.
    fn namespace_ahead(&self) -> spawn::NamespaceAhead {
        let early = self
            .first_call_namespace
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(early) = early {
            return early;
        }
        let sandboxed = self.config.sandbox.mode.is_sandboxed();
        if self.config.pid_namespace && spawn::namespace_for(sandboxed) {
            spawn::NamespaceAhead::start(sandboxed.then(|| self.sandbox.mounts.current()).flatten())
        } else {
            spawn::NamespaceAhead::default()
        }
    }

    /// The shared path of every tool call: a step row opened first, the request prepared
    /// (parsed, planned) and passed through the gate, then `act`, then the row completed
    /// by `record` (or with the error, which is returned).
    pub(crate) fn checked<T>(
        &self,
        tool: &str,
        call_json: String,
        cwd: Option<&std::path::Path>,
        prepare: impl FnOnce(PathBuf) -> Result<Prepared>,
        act: impl FnOnce(Prepared, StepRef) -> Result<T>,
        record: impl FnOnce(&T) -> StepDone,
    ) -> Result<T> {
        self.ensure_open()?;
        let _ = self.flush_pending();
        let cwd = self.resolve_cwd(cwd);
        let begun = NewStep {
            run_id: self.id.clone(),
            tool: tool.into(),
            call_json,
            cwd: match &cwd {
                Ok(dir) => crate::os_text::escape_path(dir).into_owned(),
                Err(_) => String::new(),
            },
            started_at_ms: self.stamp(),
        };
        let ids = self.begin_recorded(&begun)?;
        let step = StepRef {
            id: ids.id,
            seq: ids.seq,
        };
        let started = Instant::now();
        let prepared = cwd.and_then(prepare);
        if let Err(err) = &prepared {
            // Read from the call's arguments only for a refusal: most calls have none.
            self.record_early_refusal(step, &called_target(&begun.call_json), err);
        }
        let result = prepared
            .map(|prepared| self.in_box(prepared))
            .and_then(|prepared| self.pass_gate(tool, step, &prepared).map(|()| prepared))
            .and_then(|prepared| act(prepared, step));
        match result {
            Ok(value) => {
                self.record_end(step.id, record(&value))?;
                Ok(value)
            }
            Err(err) => {
                self.record_end(step.id, refused(&err, started.elapsed()))?;
                Err(err)
            }
        }
    }

    /// A refusal made before the policy was asked (by the grammar, the terminal check, a
    /// `cd` out of the workspace) as a `policy_events` row of `step`, as the policy's own
    /// refusals are: `corral trace refused` and the spans list every refusal.
    fn record_early_refusal(&self, step: StepRef, target: &str, err: &Error) {
        let Some(denial) = err
            .denial()
            .filter(|_| err.kind() == crate::ErrorKind::Refused)
        else {
            return;
        };
        let layer = denial.layer.clone().unwrap_or_else(|| "grammar".into());
        // The result stands whatever the store says: a busy store loses this row only.
        let _ = self
            .store()
            .record_policy_event(&corral_trace::NewPolicyEvent {
                run_id: self.id.clone(),
                step_id: Some(step.id),
                at_ms: crate::clock::now_ms(),
                act: "exec".into(),
                target: target.to_string(),
                effect: "deny".into(),
                rule: denial.rule.clone(),
                layer: Some(layer.clone()),
                origin: None,
                decision: "refused".into(),
                answered_by: Some(layer),
                reason: Some(err.to_string()),
            });
    }

    /// A call whose arguments could not be read (a missing or mistyped field, an unknown
    /// one): a step of its own, ended `invalid` with the error the model was given, so
    /// the trace holds every call a client made.
    pub(crate) fn record_invalid_call(&self, tool: &str, call_json: String, err: &Error) {
        if self.ensure_open().is_err() {
            return;
        }
        let begun = self.store().begin_step(&NewStep {
            run_id: self.id.clone(),
            tool: tool.into(),
            call_json,
            cwd: crate::os_text::escape_path(&self.workspace).into_owned(),
            started_at_ms: self.stamp(),
        });
        if let Ok(ids) = begun {
            let _ = self.record_end(
                ids.id,
                StepDone {
                    argv_json: "null".into(),
                    outcome: "invalid".into(),
                    observation: format!("error: {err}"),
                    error: Some(err.to_string()),
                    ..StepDone::default()
                },
            );
        }
    }

    /// `prepared` as it runs in the run's box (see [`Plan::in_box`]).
    pub(crate) fn in_box(&self, mut prepared: Prepared) -> Prepared {
        prepared.plan = prepared.plan.in_box(self.config.sandbox.mode);
        prepared
    }

    /// Check the plan against the policy and ask the approver; record every refusal and
    /// answer. An approver's abort ends the run.
    pub(crate) fn pass_gate(&self, tool: &str, step: StepRef, prepared: &Prepared) -> Result<()> {
        let unrecorded = self.unrecorded(crate::recorded::may_write(&prepared.plan));
        let ctx = gate::Context {
            unrecorded: unrecorded.as_deref(),
            run_id: &self.id,
            step_id: step.id,
            tool,
            line: prepared.line.as_deref(),
            terminal: prepared.terminal,
            env: &prepared.env,
            typed: prepared.typed,
            workspace: &self.workspace,
            now_ms: now_ms(),
            nothing: "Nothing ran.",
            approved_by: prepared.approved_by.as_deref(),
        };
        self.gated(&ctx, |gate, ctx, record| {
            gate.check(&prepared.plan, ctx, record)
        })
    }

    /// Ask the gate (`decide`), record every refusal and answer it gave, and end the run
    /// when the approver aborted: the one way a call, a file tool and a patch pass it.
    pub(crate) fn gated(
        &self,
        ctx: &gate::Context<'_>,
        decide: impl FnOnce(
            &gate::Gate,
            &gate::Context<'_>,
            &mut dyn FnMut(corral_trace::NewPolicyEvent),
        ) -> Result<Passage>,
    ) -> Result<()> {
        let mut events = Vec::new();
        let passage = decide(&self.gate, ctx, &mut |e| events.push(e));
        if !events.is_empty() {
            self.store().batch(|store| {
                events
                    .iter()
                    .try_for_each(|event| store.record_policy_event(event).map(drop))
            })?;
        }
        match passage? {
            Passage::Pass => Ok(()),
            Passage::Abort(err) => {
                self.abort();
                Err(err)
            }
        }
    }

    /// Run `prepared` as a foreground job under `sandbox`, on this thread, to its end or
    /// its timeout; its output captured for `step` (and teed where `options` say).
    pub(crate) fn run_plan(
        &self,
        prepared: Prepared,
        step: StepRef,
        options: CallOptions,
        sandbox: &crate::sandbox::SandboxConfig,
        ahead: spawn::NamespaceAhead,
    ) -> Result<Outcome> {
        let Prepared {
            plan,
            mut env,
            timeout,
            report_unavailable,
            output_budget,
            ..
        } = prepared;
        let mut sinks = [
            self.sink(step, "stdout", options.stdout),
            self.sink(step, "stderr", options.stderr),
        ];
        let (out_r, out_w) =
            std::io::pipe().map_err(|e| Error::io("creating an output pipe", e))?;
        let (err_r, err_w) =
            std::io::pipe().map_err(|e| Error::io("creating an output pipe", e))?;
        let since = crate::sandbox::setid::Since::now();
        let absent = crate::sandbox::appeared::Absent::before(sandbox, &self.workspace);
        let mut job = Job::start(
            self,
            &format!("step-{}", step.seq),
            sandbox,
            &plan,
            &mut env,
            ahead,
            false,
        )?;
        let held = job.take_held();
        let report = job.report().clone();
        self.housekeep();
        let line = Line {
            plan: &plan,
            env: &env,
            outputs: Outputs {
                stdout: out_w.into(),
                stderr: err_w.into(),
            },
            readers: vec![(OwnedFd::from(out_r), 0), (OwnedFd::from(err_r), 1)],
            stdin: None,
            report_unavailable,
        };
        let watching = Watching {
            timeout: Some(timeout),
            kill_grace: self.config.kill_grace,
            drain_grace: self.config.drain_grace,
            cancel: options.cancel.as_ref(),
        };
        let ended = job.wait(line, &mut sinks, watching, || (), |unit| self.retire(unit));
        let ended_in = ended.ended_in.clone();
        let [out, err] = sinks.map(Sink::finish);
        let mut outcome = self.outcome(step, ended, [out, err], output_budget);
        crate::sandbox::annotate(&mut outcome, report, &self.sandbox_shown);
        since.clear_after(&mut outcome, sandbox, &self.workspace);
        let quarantine = self.quarantine_dir(step);
        absent.report_appeared(&mut outcome, quarantine.as_deref());
        self.settle_held(held, step, &mut outcome);
        self.keep_cwd(&plan.start.logical, ended_in, &mut outcome);
        Ok(outcome)
    }

    /// Where git metadata a call created in the workspace is moved (see
    /// `sandbox::appeared`): `quarantine/RUN/STEP` beside the trace, hidden from the box
    /// as the trace is.
    pub(crate) fn quarantine_dir(&self, step: StepRef) -> Option<PathBuf> {
        let state = self.capture_dir.parent()?.parent()?;
        Some(
            state
                .join("quarantine")
                .join(&self.id)
                .join(step.seq.to_string()),
        )
    }

    /// Hold what a call changed in the files host programs run (see `autorun`), and say
    /// so in its result.
    pub(crate) fn settle_held(
        &self,
        held: Option<crate::autorun::copies::Copies>,
        step: StepRef,
        outcome: &mut Outcome,
    ) {
        let (Some(copies), Some(state)) = (held, self.state_dir()) else {
            return;
        };
        let store = crate::held::HeldStore::in_state_dir(&state);
        let mut settled = copies.settle(&store, &self.id, step.seq, &self.nested_git);
        self.ask_held(&store, &mut settled);
        if let Some(line) = settled.line() {
            outcome.observation = outcome
                .observation
                .replacen('\n', &format!("\n{line}\n"), 1);
        }
    }

    /// Ask the person, once at the call's end, whether to apply each change held: a
    /// change whose diff is too long for a question is left to `corral review`, since
    /// the person would approve what they did not see.
    pub(crate) fn ask_held(
        &self,
        store: &crate::held::HeldStore,
        settled: &mut crate::autorun::copies::Settled,
    ) {
        /// The most lines and bytes of a diff a question shows.
        const MAX_LINES: usize = 60;
        const MAX_BYTES: usize = 6000;
        let mut kept = Vec::new();
        for note in std::mem::take(&mut settled.held) {
            let asked = match store.diff(&note.id) {
                Ok(diff) if diff.lines().count() <= MAX_LINES && diff.len() <= MAX_BYTES => {
                    self.gate.ask_held(
                        &self.workspace.join(&note.rel),
                        note.runs,
                        diff,
                        &self.workspace,
                    )
                }
                _ => false,
            };
            match asked.then(|| store.apply(&note.id)) {
                Some(Ok(_)) => {
                    settled
                        .applied
                        .push(format!("{} as {}", note.rel.display(), note.id))
                }
                Some(Err(e)) => {
                    settled.problems.push(format!(
                        "{} was approved but not applied: {e}",
                        note.rel.display()
                    ));
                    kept.push(note);
                }
                None => kept.push(note),
            }
        }
        settled.held = kept;
    }

    /// The directory the trace and what lives beside it are in.
    pub(crate) fn state_dir(&self) -> Option<PathBuf> {
        Some(self.capture_dir.parent()?.parent()?.to_path_buf())
    }

    fn sink(
        &self,
        step: StepRef,
        stream: &str,
        tee: Option<Box<dyn std::io::Write + Send>>,
    ) -> Sink {
        let mut sink = Sink::new(
            self.capture_dir.join(format!("{}.{stream}", step.seq)),
            self.config.capture_cap,
        );
        if self.config.failure_lines {
            sink = sink.scanning();
        }
        match tee {
            Some(tee) => sink.with_tee(tee),
            None => sink,
        }
    }
}

fn path_string(p: &Option<PathBuf>) -> Option<String> {
    p.as_ref().map(|p| p.display().to_string())
}

pub(crate) fn done(tool: &str, outcome: &Outcome) -> StepDone {
    let (exit_code, signal) = outcome.status.code_and_signal();
    let argv_json = match (tool, outcome.stages.as_slice()) {
        ("exec", [stage]) if stage.program.is_none() => "null".into(),
        ("exec", [stage]) => serde_json::to_string(&stage.argv).unwrap_or_default(),
        _ => serde_json::to_string(&outcome.stages.iter().map(|s| &s.argv).collect::<Vec<_>>())
            .unwrap_or_default(),
    };
    let spawned = argv_json != "null";
    StepDone {
        argv_json,
        containment: spawned.then(|| outcome.containment.to_string()),
        duration_ms: outcome.wall.as_millis() as i64,
        exit_code,
        signal,
        timed_out: matches!(outcome.status, Status::TimedOut { .. }),
        // A call that became a handle is over (the handle's own row follows it): its step
        // is `yielded`, as only a step whose call still runs reads `running`.
        outcome: match outcome.status {
            Status::Running { .. } => "yielded".into(),
            ref status => status.outcome().into(),
        },
        stdout_bytes: outcome.stdout.bytes,
        stderr_bytes: outcome.stderr.bytes,
        stdout_path: path_string(&outcome.stdout.capture),
        stderr_path: path_string(&outcome.stderr.capture),
        observation: outcome.observation.clone(),
        error: match &outcome.status {
            Status::Unavailable { reason, .. } => Some(reason.clone()),
            _ => None,
        },
    }
}

fn refused(err: &Error, elapsed: Duration) -> StepDone {
    StepDone {
        argv_json: "null".into(),
        duration_ms: elapsed.as_millis() as i64,
        exit_code: None,
        signal: None,
        timed_out: false,
        outcome: if err.kind() == crate::ErrorKind::Refused {
            "refused"
        } else {
            "invalid"
        }
        .into(),
        stdout_bytes: 0,
        stderr_bytes: 0,
        stdout_path: None,
        stderr_path: None,
        observation: format!("error: {err}"),
        error: Some(err.to_string()),
        containment: None,
    }
}

/// What a call asked to run, from its arguments: the line, or the joined argv.
fn called_target(call_json: &str) -> String {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(call_json) else {
        return String::new();
    };
    if let Some(line) = value.get("line").and_then(|l| l.as_str()) {
        return line.to_string();
    }
    value
        .get("argv")
        .and_then(|a| a.as_array())
        .map(|words| {
            words
                .iter()
                .map(|w| w.as_str().map_or_else(|| w.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}
