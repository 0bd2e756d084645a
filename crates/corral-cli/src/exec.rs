//! `corral exec`: like `timeout(1)`, with the trace. Also the call path `corral shell`
//! shares: open a run, make one call, close it, choose the exit status.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use corral::{
    CallOptions, Cancel, ExecRequest, Outcome, Run, Status, approve::ApproveAll,
    approve::TerminalApprover,
};

use crate::args::{ExecArgs, PolicyArgs};
use crate::exit::Done;
use crate::passthrough::Passthrough;

pub fn run(store: Option<PathBuf>, args: ExecArgs) -> anyhow::Result<Done> {
    let mut request = ExecRequest::new(args.argv);
    request.cwd = args.cwd.map(Into::into);
    request.timeout = args.timeout;
    request.env = args.env.into_iter().map(|(k, v)| (k, v.into())).collect();
    call(
        store,
        args.workspace,
        &args.policy,
        &args.sandbox,
        None,
        args.json,
        |run, options| {
            corral::tools::EXEC
                .call_with(run, request.clone(), options)
                .map(|answer| answer.into_outcome().expect("exec answers an outcome"))
        },
    )
}

/// How many commands a command line's run starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calls {
    /// One (`exec`, `shell`): what opening the run does besides recording it, and the
    /// call's containment, are made beside the store's open and the call (see
    /// `RunBuilder::housekeeping_in_background`).
    One,
    /// None, or several: the run opens as a library's does.
    Other,
}

/// Open the run a command typed by a person gets: the workspace (default: the current
/// directory), the policy from files and flags, the sandbox flags, and an approver that
/// asks on the terminal (or approves everything, with `--yes`).
pub fn open_run(
    store: Option<PathBuf>,
    workspace: Option<PathBuf>,
    policy: &PolicyArgs,
    sandbox: &crate::sandbox::SandboxArgs,
    host_shell: Option<&crate::args::HostShellArgs>,
    calls: Calls,
) -> anyhow::Result<Run> {
    let workspace = crate::workspace::workspace_or_cwd(workspace)?;
    // The command line's posture; with `--caller model`, `corral mcp`'s (its sandbox
    // default too, unless `--sandbox` names one).
    let posture = crate::policy::posture(
        corral::Surface::Cli,
        &workspace,
        policy,
        &[],
        sandbox.config(&workspace)?,
        sandbox.mode,
    )?;
    let corral::Posture {
        surface,
        policy: built,
        approval: mode,
        files,
        mut config,
        ..
    } = posture;
    for notice in built.notices() {
        eprintln!("corral: note: {notice}");
    }
    // A person reads the rest of an output with a command, not a tool.
    config.read_more = corral::config::ReadMore::Command;
    if let Some(host_shell) = host_shell {
        config.host_shell = host_shell.resolve(&files, surface.host_shell())?;
    }
    crate::policy::apply_file_settings(&files, &mut config, sandbox.memory.is_some())?;
    // A command-line run is short: the close's checkpoint and its fsyncs would cost more
    // than its calls, so the log stays for the next checkpoint.
    let mut builder = Run::builder(workspace)
        .config(config)
        .policy(built)
        .approval(mode)
        .keep_trace_log();
    if calls == Calls::One {
        builder = builder.housekeeping_in_background();
    }
    builder = if policy.yes {
        builder.approver(ApproveAll)
    } else {
        builder.approver(TerminalApprover)
    };
    if let Some(store) = store {
        builder = builder.store(store);
    }
    let run = builder.open()?;
    report_abandoned(&run);
    Ok(run)
}

/// Close `run` for the process's exit (see [`Run::close_for_exit`]), saying what went
/// wrong rather than failing: the command's result stands whatever the close reports (the
/// store could not record the run's end, a full disk, which the next corral to open it
/// does; old captures could not be pruned).
pub fn close_reporting(run: Run) {
    if let Err(e) = run.close_for_exit() {
        eprintln!("corral: {e}");
    }
}

/// Say, once, which runs a corral that died had left open and this one closed.
pub fn report_abandoned(run: &Run) {
    for gone in run.abandoned() {
        eprintln!(
            "corral: closed run {} as aborted: its corral (pid {}) had ended without closing it ({} call{} and {} handle{} left running)",
            gone.run_id,
            gone.pid,
            gone.steps,
            if gone.steps == 1 { "" } else { "s" },
            gone.handles,
            if gone.handles == 1 { "" } else { "s" },
        );
    }
}

/// Write a stream's window: its head, a count of what was left out, its tail.
fn print_window(window: &corral::Window, out: &mut impl Write) -> std::io::Result<()> {
    out.write_all(window.head.as_bytes())?;
    if window.is_elided() {
        writeln!(
            out,
            "\n[corral: {} bytes ({} lines) left out]",
            window.omitted_bytes, window.omitted_lines
        )?;
        out.write_all(window.tail.as_bytes())?;
    }
    out.flush()
}

/// Open a run, make one call with the output passed through (or kept for `--json`) and
/// SIGINT/SIGTERM/SIGHUP turned into a cancel, close the run, render, choose the status.
/// When the reader of corral's output goes away, the call is cancelled and corral exits
/// 141, as the last stage of a pipeline ended by SIGPIPE would.
pub fn call(
    store: Option<PathBuf>,
    workspace: Option<PathBuf>,
    policy: &PolicyArgs,
    sandbox: &crate::sandbox::SandboxArgs,
    host_shell: Option<&crate::args::HostShellArgs>,
    json: bool,
    make: impl FnOnce(&Run, CallOptions) -> corral::Result<Outcome>,
) -> anyhow::Result<Done> {
    let run = open_run(store, workspace, policy, sandbox, host_shell, Calls::One)?;

    let cancel = Cancel::new().context("creating a cancel token")?;
    let signal = forward_signals(&cancel)?;
    let mut options = CallOptions {
        cancel: Some(cancel),
        ..CallOptions::default()
    };
    let closed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    if !json {
        let cancel = options.cancel.clone().expect("made above");
        options.stdout = Some(Box::new(Passthrough::new(
            std::io::stdout(),
            cancel.clone(),
            closed.clone(),
        )));
        options.stderr = Some(Box::new(Passthrough::new(
            std::io::stderr(),
            cancel,
            closed.clone(),
        )));
    }
    let outcome = make(&run, options);
    close_reporting(run);
    let outcome = outcome?;
    if closed.load(std::sync::atomic::Ordering::Acquire) {
        // What read corral's output is gone: the command was ended as SIGPIPE would end
        // it, and there is no one left to tell.
        return Ok(Done::Status(i32::from(crate::exit::OUTPUT_CLOSED)));
    }

    if json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &outcome)?;
        writeln!(out)?;
    } else if let Some(report) = outcome
        .sandbox
        .as_ref()
        .filter(|r| r.mode != corral::sandbox::SandboxMode::Full)
    {
        if report.rerun_with.is_some() || report.rerun_allowing.is_some() {
            // What passed through was the first attempt's; the rerun's output is in the
            // outcome only.
            eprintln!("corral: the sandbox was widened and the command ran again; its output:");
            print_window(&outcome.stdout.window, &mut std::io::stdout().lock())?;
            print_window(&outcome.stderr.window, &mut std::io::stderr().lock())?;
        }
        eprintln!("corral: {}", report.status());
        if !report.refused_hosts.is_empty() {
            eprintln!(
                "corral: the sandbox's network proxy refused {}: not in the allow-list \
                 (to allow it: --network allow={})",
                report.refused_hosts.join(", "),
                allow_words(&report.network_allow, &report.refused_hosts)
            );
        }
        if let Some(read) = &report.denied_read {
            eprintln!("corral: the sandbox denied {read}");
        } else if let Some(hidden) = &report.hidden_home {
            eprintln!("corral: {hidden}");
        } else if let Some(write) = &report.denied_write {
            // The command's own error passed through above: the path, once, not its line.
            let what = write.split(" (").next().unwrap_or(write);
            eprintln!("corral: the sandbox refused {what}");
        } else if let Some(denial) = &report.suspected_denial {
            // The guess without the stderr line it quotes, which passed through above.
            let guess = match denial.split_once("): ") {
                Some((guess, _)) => format!("{guess}) in the error above"),
                None => denial.clone(),
            };
            eprintln!("corral: this may have been refused by the sandbox, {guess}");
        }
    }
    if !json && !matches!(outcome.status, Status::Exited { .. }) {
        // What the command printed already passed through; say what it could not.
        if let Some(first) = outcome.observation.lines().next() {
            eprintln!("corral: {first}");
        }
    }
    let code = match (&outcome.status, signal.received()) {
        (Status::Cancelled, Some(sig)) => 128 + sig,
        (status, _) => status.cli_exit_code(),
    };
    Ok(Done::Status(code))
}

/// SIGINT, SIGTERM and SIGHUP end the command (and its whole group) instead of leaving it
/// running without its parent; corral then exits 128+N like the shell would.
struct Forwarded(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl Forwarded {
    fn received(&self) -> Option<i32> {
        match self.0.load(std::sync::atomic::Ordering::Acquire) {
            0 => None,
            sig => i32::try_from(sig).ok(),
        }
    }
}

/// The handlers fire `cancel` themselves (its flag, then its wake-up pipe), so no thread
/// waits for a signal that almost never comes.
fn forward_signals(cancel: &Cancel) -> anyhow::Result<Forwarded> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let received = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (fired, waker) = cancel
        .from_signal_handler()
        .context("making the cancel token's signal handlers")?;
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        let number = usize::try_from(sig).expect("signal numbers are positive");
        // In this order: the handlers run as registered, and the watch that the waker
        // wakes must find the token fired.
        signal_hook::flag::register_usize(sig, received.clone(), number)
            .and_then(|_| signal_hook::flag::register(sig, fired.clone()))
            .and_then(|_| signal_hook::low_level::pipe::register(sig, waker.try_clone()?))
            .context("installing signal handlers")?;
    }
    corral_sys::escalation::answered_here(true);
    Ok(Forwarded(received))
}

/// What `--network allow=` takes to open `refused` too: the allowed names, then each
/// refused host's preset (`npm`) or the host itself, each once.
fn allow_words(allowed: &[String], refused: &[String]) -> String {
    let mut words: Vec<String> = allowed.to_vec();
    for word in refused
        .iter()
        .map(|h| corral::sandbox::domains::allow_word(h))
    {
        if !words.contains(&word) {
            words.push(word);
        }
    }
    words.join(",")
}
