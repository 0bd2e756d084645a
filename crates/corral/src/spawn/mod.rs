//! One stage of a plan becomes one running child.
//!
//! A stage is spawned from an argv and nothing else: the resolved program, `argv[0]` as
//! the caller wrote it, the remaining arguments, an explicit environment and working
//! directory. stdin is the null device unless the caller wires it, so a command that
//! prompts fails instead of hanging.
//!
//! Every child starts with every signal's disposition the default and nothing blocked,
//! whatever corral itself inherited.
//!
//! Every child is placed in a containment unit at the moment it is spawned (see
//! [`Containment`]); ending a command means ending its unit, not chasing its children.

mod cgroup;
mod containment;
mod pid_namespace;

use std::path::Path;
use std::process::{Child, Command, Stdio};

pub(crate) use containment::{Containment, unit_for_call};

/// What one stage needs to start.
#[derive(Debug)]
pub(crate) struct Stage<'a> {
    /// The resolved program to execute.
    pub program: &'a Path,
    /// The argv as checked: `argv[0]` is passed to the program as its name.
    pub argv: &'a [String],
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub stdin: Stdio,
    pub stdout: Stdio,
    pub stderr: Stdio,
}

/// Start `stage` inside `unit`.
pub(crate) fn spawn(stage: Stage<'_>, unit: &mut dyn Containment) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;

    let mut cmd = Command::new(stage.program);
    if let Some((name, args)) = stage.argv.split_first() {
        cmd.arg0(name).args(args);
    }
    cmd.env_clear()
        .envs(stage.env.iter().map(|(k, v)| (k, v)))
        .current_dir(stage.cwd)
        .stdin(stage.stdin)
        .stdout(stage.stdout)
        .stderr(stage.stderr);
    // First, so a wrapper's hooks that follow start from a clean slate: what corral
    // inherited ignored (from `nohup`, `cmd &`) is not passed on.
    corral_sys::signals::default_signals_before_exec(&mut cmd);
    unit.prepare(&mut cmd);
    let child = unit.spawn(&mut cmd)?;
    unit.adopt(child.id());
    Ok(child)
}
