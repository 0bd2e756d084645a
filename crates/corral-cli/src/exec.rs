//! `corral exec`: like `timeout(1)`, with the trace.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use corral::{CallOptions, Cancel, Config, ExecRequest, Run, Status};

use crate::args::ExecArgs;
use crate::exit::Done;

pub fn run(store: Option<PathBuf>, args: ExecArgs) -> anyhow::Result<Done> {
    let workspace = match args.workspace {
        Some(dir) => dir,
        None => std::env::current_dir().context("reading the current directory")?,
    };
    let mut builder = Run::builder(workspace).config(Config::default());
    if let Some(store) = store {
        builder = builder.store(store);
    }
    let run = builder.open()?;

    let mut request = ExecRequest::new(args.argv);
    request.cwd = args.cwd;
    request.timeout = args.timeout;
    request.env = args.env.into_iter().collect();

    let cancel = Cancel::new().context("creating a cancel token")?;
    let signal = forward_signals(cancel.clone())?;
    let mut options = CallOptions {
        cancel: Some(cancel),
        ..CallOptions::default()
    };
    if !args.json {
        options.stdout = Some(Box::new(std::io::stdout()));
        options.stderr = Some(Box::new(std::io::stderr()));
    }
    let outcome = run.exec_with(&request, options);
    run.close()?;
    let outcome = outcome?;

    if args.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &outcome)?;
        writeln!(out)?;
    } else {
        match &outcome.status {
            Status::Exited { .. } => {}
            // What the command printed already passed through; say what it could not.
            other => eprintln!("corral: {}", status_note(other, &outcome)),
        }
    }
    let code = match (&outcome.status, signal.received()) {
        (Status::Cancelled, Some(sig)) => 128 + sig,
        (status, _) => status.cli_exit_code(),
    };
    Ok(Done::Status(code))
}

fn status_note(status: &Status, outcome: &corral::ExecOutcome) -> String {
    outcome
        .observation
        .lines()
        .next()
        .map_or_else(|| format!("{status:?}"), str::to_string)
}

/// SIGINT, SIGTERM and SIGHUP end the command (and its whole group) instead of leaving it
/// running without its parent; corral then exits 128+N like the shell would.
struct Forwarded(std::sync::Arc<std::sync::atomic::AtomicI32>);

impl Forwarded {
    fn received(&self) -> Option<i32> {
        match self.0.load(std::sync::atomic::Ordering::Acquire) {
            0 => None,
            sig => Some(sig),
        }
    }
}

fn forward_signals(cancel: Cancel) -> anyhow::Result<Forwarded> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let received = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("installing signal handlers")?;
    let seen = received.clone();
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            seen.store(sig, std::sync::atomic::Ordering::Release);
            cancel.cancel();
        }
    });
    Ok(Forwarded(received))
}
