//! `corral`: run commands the way an agent harness runs them, from a terminal or a script.
//!
//! Thin on purpose: parse the arguments, call the library, render, exit. Exit statuses
//! follow `timeout(1)`: the command's own status, 124 when it timed out, 127 when the
//! program is unavailable, 128+N when signal N ended it; 2 for a bad request and 125 when
//! corral itself failed.

#![forbid(unsafe_code)]

mod args;
mod cli;
mod exec;
mod exit;
mod init;
mod interrupt;
mod mcp;
mod otel;
mod passthrough;
mod patch;
mod policy;
mod review;
mod sandbox;
mod shell;
mod task;
mod trace;
mod trace_show;
mod undo;
mod workspace;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    if let Some(dir) = &cli.state {
        corral::use_state_dir(dir.clone());
    }
    // Only the commands that run things have records to export.
    let runs_things = matches!(
        cli.command,
        cli::Command::Exec(_)
            | cli::Command::Shell(_)
            | cli::Command::Mcp(_)
            | cli::Command::Run(_)
            | cli::Command::Verify(_)
            | cli::Command::Patch(_)
    );
    // What a command may read of corral's own process: nothing (see
    // `corral_sys::own_process`). Before any thread or namespace of a run is made.
    if runs_things && let Err(e) = corral_sys::own_process::make_private() {
        return exit::report(Err(
            anyhow::Error::new(e).context("keeping corral's own process private")
        ));
    }
    // From here on a second SIGINT/SIGTERM/SIGHUP, or a first one the command leaves
    // unanswered, kills what corral started and exits 128+N (corral_sys::escalation).
    if runs_things && let Err(e) = corral_sys::escalation::install() {
        return exit::report(Err(
            anyhow::Error::new(e).context("installing signal handlers")
        ));
    }
    let otel = match runs_things.then(|| otel::start(cli.otlp.clone(), cli.otlp_output)) {
        Some(Err(e)) => return exit::report(Err(e)),
        Some(Ok(guard)) => Some(guard),
        None => None,
    };
    // `corral mcp` says where spans go among its first lines, after where it listens.
    #[cfg(feature = "otlp")]
    let exporter = match &otel {
        Some(Some(exporter)) => Some(exporter.describe()),
        _ => None,
    };
    #[cfg(not(feature = "otlp"))]
    let exporter = None;
    let result = match cli.command {
        cli::Command::Exec(a) => exec::run(cli.store, a),
        cli::Command::Shell(a) => shell::run(cli.store, a),
        cli::Command::Trace(a) => trace::run(cli.store, a),
        cli::Command::Policy(a) => policy::run(a),
        cli::Command::Sandbox(a) => sandbox::run(a),
        cli::Command::Mcp(a) => mcp::run(cli.store, a, exporter),
        cli::Command::Run(a) => task::run(cli.store, a),
        cli::Command::Verify(a) => task::verify(cli.store, a),
        cli::Command::Patch(a) => patch::run(cli.store, a),
        cli::Command::Init(a) => init::run(a),
        cli::Command::Undo(a) => undo::run(cli.store, a),
        cli::Command::Review(a) => review::run(cli.store, a),
    };
    // Flush the spans before the status is reported and the process ends.
    if let Some(guard) = otel {
        otel::finish(guard);
    }
    exit::report(result)
}
