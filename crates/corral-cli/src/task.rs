//! `corral run` and `corral verify`: a model driven to a goal until the verification gate
//! passes, and the gate alone.
//!
//! `corral run` exits 0 when verified, 1 when not (the gate failed, a limit was reached,
//! the provider failed), 2 for a bad request (no model, a bad gate command, a key the
//! provider refuses), 125 when corral itself failed, and 128+N when signal N interrupted
//! it (130 for Ctrl-C; see [`crate::interrupt`]): then the last line says "interrupted"
//! with what the gate said so far and the run id.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use corral::policy::{Act, Effect};
use corral::task::{
    Ending, HttpSettings, ModelErrorKind, TaskContract, TaskEvent, TaskOutcome, ToolCall,
    Verification, drive_until, model_from_spec, project,
};
use corral::{Run, approve::ApproveAll, approve::TerminalApprover};

use crate::args::PolicyArgs;
use crate::exit::Done;
use crate::interrupt::Ended;

/// Exit status of a run or gate that did not verify.
const NOT_VERIFIED: i32 = 1;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// What the model should achieve, e.g. "the test suite is failing; find out why and fix it".
    #[arg(value_name = "GOAL")]
    pub goal: String,
    /// A gate phase: a command that must exit 0 (repeatable, run in order). Default: corral.toml's
    /// [verify], else the project's detected test command.
    #[arg(long = "verify", value_name = "COMMAND")]
    pub verify: Vec<String>,
    /// The model: openai:NAME (any OpenAI-compatible server via OPENAI_BASE_URL), openrouter:NAME,
    /// anthropic:NAME, or script:FILE.jsonl to replay responses.
    #[arg(long, env = "CORRAL_MODEL", value_name = "PROVIDER:NAME")]
    pub model: Option<String>,
    /// The most model turns (default 50).
    #[arg(long, value_name = "N")]
    pub max_steps: Option<usize>,
    /// The most tokens, input and output, over the run.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// The most wall-clock time for the run, e.g. 30m.
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub wall_time: Option<Duration>,
    /// The most one model request may take, e.g. 2m (default 10m).
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub request_timeout: Option<Duration>,
    /// Ask the provider for a streamed answer.
    #[arg(long)]
    pub stream: bool,
    /// Workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Print the outcome as JSON on stdout at the end.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub sandbox: crate::sandbox::SandboxArgs,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// A gate phase: a command that must exit 0 (repeatable, run in order). Default: corral.toml's
    /// [verify], else the project's detected test command.
    #[arg(long = "verify", value_name = "COMMAND")]
    pub verify: Vec<String>,
    /// Workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Wall-clock limit per phase, e.g. 10m (default 15m).
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub timeout: Option<Duration>,
    /// Print the verdict as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

fn duration(text: &str) -> Result<Duration, String> {
    corral::parse_duration(text).map_err(|e| e.to_string())
}

fn bad(message: impl Into<String>) -> anyhow::Error {
    corral::Error::invalid_request(message).into()
}

/// The gate, read once before anything runs, and who set it: the `--verify` commands
/// (the person's), else the workspace's own (a trusted `[verify]` or the detected test
/// command; an untrusted `[verify]` is nobody's, so its phases are asked about).
fn gate(workspace: &std::path::Path, verify: &[String], yes: bool) -> anyhow::Result<PinnedGate> {
    if verify.is_empty() {
        let trust = corral::TrustStore::default_location();
        let (phases, by) = project::pinned_gate(workspace, trust.as_ref())?;
        if by.is_some() {
            return Ok((phases, by));
        }
        return untrusted_gate(workspace, phases, yes);
    }
    let phases = verify
        .iter()
        .map(|c| project::parse_command(c).map_err(Into::into))
        .collect::<anyhow::Result<_>>()?;
    Ok((phases, Some("--verify".into())))
}

/// A gate's phases and who set it (`None`: nobody trusted, so it is asked about).
type PinnedGate = (Vec<Verification>, Option<String>);

/// Why the gate cannot run at all: the run ends before its first turn, not verified.
#[derive(Debug)]
struct CouldNotRun(String);

impl std::fmt::Display for CouldNotRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CouldNotRun {}

/// [`gate`], or the status a gate that cannot run ends the command with, said first.
fn gate_or_end(
    workspace: &std::path::Path,
    verify: &[String],
    yes: bool,
) -> anyhow::Result<Result<PinnedGate, Done>> {
    match gate(workspace, verify, yes) {
        Ok(gate) => Ok(Ok(gate)),
        Err(e) => match e.downcast_ref::<CouldNotRun>() {
            Some(why) => {
                eprintln!("corral: not verified: {why}");
                Ok(Err(Done::Status(NOT_VERIFIED)))
            }
            None => Err(e),
        },
    }
}

/// A `[verify]` from a `corral.toml` nobody trusted: anything that may write the
/// workspace (a model's earlier run among them) may have written it, so it is the
/// person's only once they say so: `--yes`, or a yes on the terminal, naming the file.
fn untrusted_gate(
    workspace: &std::path::Path,
    phases: Vec<Verification>,
    yes: bool,
) -> anyhow::Result<PinnedGate> {
    use std::io::{BufRead, IsTerminal, Write};
    let file = workspace.join("corral.toml");
    let commands: Vec<String> = phases.iter().map(Verification::describe).collect();
    if yes {
        return Ok((phases, Some("--yes".into())));
    }
    let refusal = |why: &str| {
        anyhow::Error::new(CouldNotRun(format!(
            "the gate could not run: {} sets it ([verify]: {}), and that file is not trusted \
             (new or changed since a person last trusted it){why}. Review it, then run \
             `corral policy trust`, or give the gate with --verify 'COMMAND'",
            file.display(),
            commands.join("; ")
        )))
    };
    if !std::io::stdin().is_terminal() {
        return Err(refusal(", and there is no terminal to ask on"));
    }
    eprint!(
        "corral: run the gate {} from {}, which is not trusted? [y/N] ",
        commands.join("; "),
        file.display()
    );
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        Ok((phases, Some("the person, asked on the terminal".into())))
    } else {
        Err(refusal(" and was not approved"))
    }
}

pub fn run(store: Option<PathBuf>, args: RunArgs) -> anyhow::Result<Done> {
    let workspace = crate::workspace::workspace_or_cwd(args.workspace.clone())?;
    let Some(spec) = args.model.as_deref().filter(|m| !m.is_empty()) else {
        return Err(bad(
            "no model: pass --model PROVIDER:NAME or set CORRAL_MODEL (openai:NAME, openrouter:NAME, \
             anthropic:NAME, or script:FILE.jsonl)",
        ));
    };
    let settings = HttpSettings {
        timeout: args
            .request_timeout
            .unwrap_or(HttpSettings::default().timeout),
        stream: args.stream,
        ..HttpSettings::default()
    };
    let (phases, approved_by) = match gate_or_end(&workspace, &args.verify, args.policy.yes)? {
        Ok(gate) => gate,
        Err(done) => return Ok(done),
    };
    let model = model_from_spec(spec, settings).map_err(|e| bad(e.message))?;
    // The model's commands get `corral mcp`'s posture (Surface::Task): a sandbox, the
    // boundary where this host enforces it; reading and writing files in the workspace
    // is the run's work, confined and checked anyway.
    let posture = crate::policy::posture(
        corral::Surface::Task,
        &workspace,
        &args.policy,
        &[],
        args.sandbox.config(&workspace)?,
        args.sandbox.mode,
    )?;
    let mut policy = posture.policy.clone();
    let mut files = corral::policy::Layer::new("task: the run's files");
    for act in [Act::Read, Act::Write] {
        files.push(corral::policy::Rule::new(
            act,
            "**",
            Effect::Allow,
            corral::policy::Origin::Builtin,
        )?);
    }
    // A deny or an ask in any layer still wins over these allows.
    policy.push_layer(files);
    let mode = posture.approval;
    let mut contract = TaskContract::workspace(&args.goal, &workspace)
        .with_config(posture.config.clone())
        .gate_approved_by(approved_by);
    for phase in phases {
        contract = contract.with_verification(phase);
    }
    if let Some(n) = args.max_steps {
        contract = contract.max_steps(n);
    }
    if let Some(n) = args.max_tokens {
        contract = contract.max_tokens(n);
    }
    if let Some(d) = args.wall_time {
        contract = contract.wall_time(d);
    }
    let mut builder = Run::builder(&workspace)
        .config(contract.config.clone())
        .policy(policy)
        .approval(mode);
    builder = if args.policy.yes {
        builder.approver(ApproveAll)
    } else {
        builder.approver(TerminalApprover)
    };
    if let Some(store) = store {
        builder = builder.store(store);
    }
    let run = std::sync::Arc::new(builder.open()?);
    let gate_line: Vec<String> = contract.verification.iter().map(|v| v.describe()).collect();
    eprintln!(
        "corral: run {} · {} · gate: {}",
        run.id(),
        spec,
        gate_line.join(", then ")
    );
    let seen = Seen::shared();
    let interrupt = corral::Cancel::new().context("making the run's interrupt")?;
    // A model request in flight cannot be cut off: the run does not wait for its answer.
    let patience = || {
        let waits_for_model = seen.lock().is_ok_and(|s| s.doing == WAITING_FOR_MODEL);
        if waits_for_model {
            Duration::from_millis(100)
        } else {
            crate::interrupt::WAIT
        }
    };
    let ended = {
        let (run, seen, stop) = (run.clone(), seen.clone(), interrupt.clone());
        crate::interrupt::run(&interrupt, patience, move || {
            let mut live = Live::new(seen);
            drive_until(&run, &contract, model.as_ref(), Some(&stop), &mut |e| {
                live.event(e)
            })
        })?
    };
    let run_id = run.id().to_string();
    let (outcome, signal) = match ended {
        Ended::Finished(outcome) => (outcome, None),
        Ended::Interrupted {
            signal,
            result: Some(outcome),
        } => (outcome, Some(signal)),
        // Still waiting where the interrupt cannot reach (a model request in flight, a
        // question on the terminal): what is known is said, and the run ends without it.
        Ended::Interrupted {
            signal,
            result: None,
        } => {
            let closed = run.close_interrupted();
            let seen = seen.lock().unwrap_or_else(|e| e.into_inner());
            eprintln!(
                "corral: not verified: interrupted {} · {} · run {run_id}",
                seen.doing,
                seen.so_far()
            );
            closed?;
            return Ok(Done::Status(128 + signal));
        }
    };
    let interrupted = matches!(&outcome, Ok(o) if o.ending == Ending::Interrupted);
    if interrupted {
        run.close_interrupted()?;
    } else {
        run.close()?;
    }
    let outcome = match outcome {
        Ok(outcome) => outcome,
        // The person answered "no, and end the run" (`q`): the run ended as they asked,
        // not verified; corral did not fail.
        Err(corral::task::TaskError::Corral(e)) if e.kind() == corral::ErrorKind::Closed => {
            eprintln!("corral: not verified: {e} · run {run_id}");
            return Ok(Done::Status(signal.map_or(NOT_VERIFIED, |sig| 128 + sig)));
        }
        Err(corral::task::TaskError::Corral(e)) => return Err(e.into()),
    };
    report(&outcome, &seen.lock().unwrap_or_else(|e| e.into_inner()));
    if args.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &outcome)?;
        writeln!(out)?;
    }
    Ok(Done::Status(match (&outcome.ending, signal) {
        (Ending::Verified, _) => 0,
        (Ending::Interrupted, Some(sig)) => 128 + sig,
        (Ending::ModelFailed { error }, _)
            if matches!(
                error.kind,
                ModelErrorKind::Auth | ModelErrorKind::BadRequest
            ) =>
        {
            crate::exit::BAD_REQUEST.into()
        }
        _ => NOT_VERIFIED,
    }))
}

fn report(outcome: &TaskOutcome, seen: &Seen) {
    let tokens = outcome.usage.input_tokens + outcome.usage.output_tokens;
    let cost = outcome
        .usage
        .cost_usd
        .map(|c| format!(", ${c:.4}"))
        .unwrap_or_default();
    let verdict = outcome
        .verdict
        .as_ref()
        .map(|v| format!("gate {}", v.summary()))
        .unwrap_or_else(|| "gate not run".into());
    let head = if outcome.verified {
        "verified".to_string()
    } else {
        format!("not verified: {}", outcome.ending.describe())
    };
    eprintln!(
        "corral: {head} · {verdict} · {} turns, {tokens} tokens{cost}{} · run {}",
        outcome.turns,
        seen.not_approved(),
        outcome.run_id
    );
    if outcome.verified
        && let Some(summary) = &outcome.summary
    {
        eprintln!("corral: {}", summary.lines().next().unwrap_or(""));
    }
}

const WAITING_FOR_MODEL: &str = "while waiting for the model";

/// What the person has been shown of a run so far, kept where the command's main thread
/// can read it when the run itself cannot answer (interrupted mid-request).
struct Seen {
    /// What the run was doing: `while waiting for the model`, `while the gate ran`, …
    doing: String,
    turns: usize,
    /// The gate's last verdict, in a line.
    gate: Option<String>,
    /// Calls the approver did not approve (asked and declined, or no terminal to ask on).
    declined: usize,
}

impl Seen {
    fn shared() -> std::sync::Arc<std::sync::Mutex<Seen>> {
        std::sync::Arc::new(std::sync::Mutex::new(Seen {
            doing: WAITING_FOR_MODEL.into(),
            turns: 0,
            gate: None,
            declined: 0,
        }))
    }

    /// The gate's last word and the turns taken, as the last line says them.
    fn so_far(&self) -> String {
        format!(
            "{} · {} turns{}",
            self.gate.as_deref().unwrap_or("gate not run"),
            self.turns,
            self.not_approved()
        )
    }

    /// `, 2 calls were not approved`, or nothing.
    fn not_approved(&self) -> String {
        match self.declined {
            0 => String::new(),
            1 => ", 1 call was not approved".into(),
            n => format!(", {n} calls were not approved"),
        }
    }
}

/// The live lines: one per tool call (tool, what it touched, status, time), one per gate.
struct Live {
    tty: bool,
    seen: std::sync::Arc<std::sync::Mutex<Seen>>,
}

impl Live {
    fn new(seen: std::sync::Arc<std::sync::Mutex<Seen>>) -> Self {
        Self {
            tty: std::io::stderr().is_terminal(),
            seen,
        }
    }

    fn event(&mut self, event: TaskEvent<'_>) {
        self.note(&event);
        let mut err = std::io::stderr().lock();
        match event {
            TaskEvent::Turn { turn, text, .. } => {
                if let Some(t) = text.and_then(|t| t.lines().find(|l| !l.trim().is_empty())) {
                    let _ = writeln!(err, "  [{turn}] {}", clip(t, 100));
                }
            }
            TaskEvent::ToolStarted { call } if self.tty => {
                let _ = write!(err, "  {:<12} {} …", call.name, clip(&what(call), 70));
                let _ = err.flush();
            }
            TaskEvent::ToolDone { call, result } => {
                if self.tty {
                    let _ = write!(err, "\r\x1b[K");
                }
                let _ = writeln!(
                    err,
                    "  {:<12} {}  {} · {:.2}s",
                    call.name,
                    clip(&what(call), 70),
                    result.status,
                    result.wall.as_secs_f64()
                );
            }
            TaskEvent::GateStarted if self.tty => {
                let _ = write!(err, "  gate …");
                let _ = err.flush();
            }
            TaskEvent::Gate { verdict } => {
                if self.tty {
                    let _ = write!(err, "\r\x1b[K");
                }
                let _ = writeln!(err, "  gate         {}", verdict.summary());
            }
            _ => {}
        }
    }
}

impl Live {
    fn note(&self, event: &TaskEvent<'_>) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            TaskEvent::Turn { turn, .. } => seen.turns = *turn,
            TaskEvent::ToolStarted { call } => {
                seen.doing = format!(
                    "while `{}` ran",
                    clip(&format!("{} {}", call.name, what(call)), 70)
                );
            }
            TaskEvent::ToolDone { result, .. } => {
                if result.status == corral::task::tools::NOT_APPROVED {
                    seen.declined += 1;
                }
                seen.doing = WAITING_FOR_MODEL.into();
            }
            TaskEvent::GateStarted => seen.doing = "while the gate ran".into(),
            TaskEvent::Gate { verdict } => {
                seen.gate = Some(format!("gate {}", verdict.summary()));
                seen.doing = WAITING_FOR_MODEL.into();
            }
            _ => {}
        }
    }
}

/// What a call touches, in a few words: an argv, a line, a path.
fn what(call: &ToolCall) -> String {
    let a = &call.arguments;
    let s = |k: &str| a.get(k).and_then(|v| v.as_str()).map(str::to_string);
    match call.name.as_str() {
        "exec" => a
            .get("argv")
            .and_then(|v| serde_json::from_value::<Vec<String>>(v.clone()).ok())
            .map(|argv| corral::line::display_argv(&argv))
            .unwrap_or_default(),
        "shell" | "shell_start" => s("line").unwrap_or_default(),
        "read_file" | "write_file" => s("path").unwrap_or_default(),
        "list_dir" => s("path").unwrap_or_else(|| ".".into()),
        // The paths the patch names, as it is read (inside a here-document, after a
        // `cd`); of a malformed one, its header lines.
        "apply_patch" => s("patch")
            .map(|p| match corral::patch::parse(&p) {
                Ok(patch) => patch
                    .ops
                    .iter()
                    .map(|op| op.path().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                Err(_) => p
                    .lines()
                    .filter_map(|l| {
                        ["*** Add File: ", "*** Update File: ", "*** Delete File: "]
                            .iter()
                            .find_map(|h| l.trim().strip_prefix(h))
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            })
            .unwrap_or_default(),
        _ => a
            .get("handle")
            .map(|h| format!("handle {h}"))
            .unwrap_or_default(),
    }
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

pub fn verify(store: Option<PathBuf>, args: VerifyArgs) -> anyhow::Result<Done> {
    let workspace = crate::workspace::workspace_or_cwd(args.workspace.clone())?;
    let (phases, approved_by) = match gate_or_end(&workspace, &args.verify, args.policy.yes)? {
        Ok(gate) => gate,
        Err(done) => return Ok(done),
    };
    let run = crate::exec::open_run(
        store,
        Some(workspace.clone()),
        &args.policy,
        &crate::sandbox::SandboxArgs::default(),
        None,
        crate::exec::Calls::Other,
    )?;
    let contract = TaskContract::workspace("", &workspace);
    let run = std::sync::Arc::new(run);
    let interrupt = corral::Cancel::new().context("making the gate's interrupt")?;
    let timeout = args.timeout.unwrap_or(contract.gate_timeout);
    let ended = {
        let (run, stop) = (run.clone(), interrupt.clone());
        crate::interrupt::run(
            &interrupt,
            || crate::interrupt::WAIT,
            move || {
                run.verify_approved(
                    &phases,
                    &contract.gate_sandbox,
                    timeout,
                    approved_by.as_deref(),
                    Some(&stop),
                )
            },
        )?
    };
    let verdict = match ended {
        Ended::Finished(verdict) => verdict,
        Ended::Interrupted { signal, result } => {
            let closed = run.close_interrupted();
            let gate = match result {
                Some(Ok(verdict)) => format!("gate {}", verdict.summary()),
                _ => "the gate did not finish".into(),
            };
            eprintln!(
                "corral: not verified: interrupted · {gate} · run {}",
                run.id()
            );
            closed?;
            return Ok(Done::Status(128 + signal));
        }
    };
    run.close()?;
    let verdict = verdict.context("running the gate")?;
    if args.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &verdict)?;
        writeln!(out)?;
    } else {
        for p in &verdict.phases {
            eprintln!(
                "corral: phase {} of {} ({}): {}",
                p.phase,
                verdict.total,
                p.verification.describe(),
                if p.passed { "passed" } else { "failed" }
            );
            if !p.passed {
                eprintln!("{}", p.observation.trim_end());
            }
        }
        eprintln!("corral: gate {} · run {}", verdict.summary(), run.id());
    }
    Ok(Done::Status(if verdict.passed { 0 } else { NOT_VERIFIED }))
}
