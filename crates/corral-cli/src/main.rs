//! `corral`: run commands the way an agent harness runs them, from a terminal or a script.
//!
//! Thin on purpose: parse the arguments, call the library, render, exit. Exit statuses
//! follow `timeout(1)`: the command's own status, 124 when it timed out, 127 when the
//! program is unavailable, 128+N when signal N ended it; 2 for a bad request and 125 when
//! corral itself failed.

mod args;
mod exec;
mod exit;
mod init;
mod mcp;
mod otel;
mod passthrough;
mod patch;
mod policy;
mod sandbox;
mod shell;
mod task;
mod trace;
mod trace_show;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = args::Cli::parse();
    // Only the commands that run things have records to export.
    let runs_things = matches!(
        cli.command,
        args::Command::Exec(_)
            | args::Command::Shell(_)
            | args::Command::Mcp(_)
            | args::Command::Run(_)
            | args::Command::Verify(_)
            | args::Command::Patch(_)
    );
    let otel = match runs_things.then(|| otel::start(cli.otlp.clone(), cli.otlp_output)) {
        Some(Err(e)) => return exit::report(Err(e)),
        Some(Ok(guard)) => Some(guard),
        None => None,
    };
    #[cfg(feature = "otlp")]
    if let (args::Command::Mcp(_), Some(Some(exporter))) = (&cli.command, &otel) {
        eprintln!("corral mcp: {}", exporter.describe());
    }
    let result = match cli.command {
        args::Command::Exec(a) => exec::run(cli.store, a),
        args::Command::Shell(a) => shell::run(cli.store, a),
        args::Command::Trace(a) => trace::run(cli.store, a),
        args::Command::Policy(a) => policy::run(a),
        args::Command::Sandbox(a) => sandbox::run(a),
        args::Command::Mcp(a) => mcp::run(cli.store, a),
        args::Command::Run(a) => task::run(cli.store, a),
        args::Command::Verify(a) => task::verify(cli.store, a),
        args::Command::Patch(a) => patch::run(cli.store, a),
        args::Command::Init(a) => init::run(a),
    };
    // Flush the spans before the status is reported and the process ends.
    if let Some(guard) = otel {
        otel::finish(guard);
    }
    exit::report(result)
}
