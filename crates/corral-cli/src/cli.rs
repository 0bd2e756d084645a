//! The command line: the global flags and one subcommand, each of whose arguments is
//! defined beside the code that runs it or, when shared, in `args.rs`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::args::{ExecArgs, McpArgs, PolicyCommand, ShellArgs, TraceCommand};
use crate::init::InitArgs;
use crate::patch::PatchArgs;
use crate::sandbox::SandboxCommand;
use crate::task::{RunArgs, VerifyArgs};

#[derive(Debug, Parser)]
#[command(
    name = "corral",
    version,
    about = "Run commands for AI agents: no shell, bounded output, every process contained, everything traced."
)]
pub struct Cli {
    /// corral's state directory: its trace and the policy files you trusted.
    ///
    /// Default: $CORRAL_STATE_DIR, else $XDG_STATE_HOME/corral, else
    /// ~/.local/state/corral. It holds trace.db and trusted-policies. MCP clients often
    /// start servers without XDG_STATE_HOME: pass it there to share your trace and trust.
    #[arg(long, global = true, value_name = "DIR")]
    pub state: Option<PathBuf>,
    /// The trace database.
    ///
    /// Default: $CORRAL_STORE if set, else trace.db in the state directory, i.e.
    /// ~/.local/state/corral/trace.db.
    #[arg(
        long,
        global = true,
        env = "CORRAL_STORE",
        hide_env = true,
        value_name = "PATH"
    )]
    pub store: Option<PathBuf>,
    /// Also export the trace as OpenTelemetry spans to this OTLP/HTTP collector.
    ///
    /// Runs, steps, policy and sandbox events and handles, e.g. to http://localhost:4318.
    /// Default: the OTEL_EXPORTER_OTLP_* variables. The local trace is kept either way.
    #[arg(long, global = true, value_name = "URL")]
    pub otlp: Option<String>,
    /// Put the text each step showed the model in its span.
    ///
    /// Off by default: output may hold secrets.
    #[arg(long, global = true)]
    pub otlp_output: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// Each subcommand's arguments are built only when it is the one invoked (`defer`): a
/// start builds one subcommand's, not the whole tree's (half of what parsing cost).
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Run PROGRAM with ARGs (no shell), passing its output through and exiting with its status.
    Exec(ExecArgs),
    /// Run a command line in corral's own grammar (no shell): `corral shell 'make 2>&1 | tail -n 20'`.
    Shell(ShellArgs),
    /// Read the trace: runs, steps, captured output, refusals; prune old captures.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Ask the policy, without running anything.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// The sandbox: what this host can enforce (`corral sandbox report`).
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// Drive a model to GOAL until the verification gate passes: `corral run "fix the failing test" --model openai:NAME`.
    Run(RunArgs),
    #[command(
        about = "Run only the verification gate: the --verify commands, corral.toml's [verify], or the detected test command"
    )]
    Verify(VerifyArgs),
    /// Apply a patch in Codex's format, read on stdin, all of it or none.
    Patch(PatchArgs),
    /// Write a commented corral.toml for this project: its commands as allow rules, its gate.
    Init(InitArgs),
    /// Put the workspace's files back as they were before a call (default: the last one
    /// that changed a file), or before a whole run.
    Undo(crate::undo::UndoArgs),
    /// What calls wrote to files the host runs on its own (git hooks, agent and editor
    /// settings), held for you: list them, show one, apply or drop it.
    Review(crate::review::ReviewArgs),
    /// Serve exec, shell, background handles and output as MCP tools, over stdio or HTTP, for an agent client.
    #[command(after_long_help = corral_mcp::PROTOCOL_HELP)]
    Mcp(McpArgs),
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Subcommands are defined when they are invoked (`defer`), so clap's own checks of
    /// every argument run here, over the whole tree, instead of at each start.
    #[test]
    fn every_subcommand_is_well_defined() {
        super::Cli::command().debug_assert();
    }

    /// A command's help starts with what the command does, not with the doc of an
    /// argument group it shares (the groups' docs are plain comments for that reason).
    #[test]
    fn each_commands_help_starts_with_its_own_description() {
        let cli = super::Cli::command();
        let expected = [
            ("exec", "Run PROGRAM with ARGs"),
            ("shell", "Run a command line in corral's own grammar"),
            ("run", "Drive a model to GOAL"),
            ("verify", "Run only the verification gate"),
            ("patch", "Apply a patch in Codex's format"),
            ("init", "Write a commented corral.toml"),
            ("mcp", "Serve exec, shell, background handles"),
        ];
        for (name, start) in expected {
            let mut sub = cli.find_subcommand(name).unwrap().clone();
            let help = sub.render_help().to_string();
            assert!(
                help.starts_with(start),
                "corral {name} --help starts: {help:.120}"
            );
        }
    }
}
