//! One stage of a plan becomes one running child.
//!
//! A stage is spawned from an argv and nothing else: the program (by its path as the
//! caller wrote it, or as found on `PATH`), `argv[0]` as the caller wrote it, the
//! remaining arguments, an explicit environment and working directory. stdin is the null
//! device unless the caller wires it, so a command that prompts fails instead of hanging.
//!
//! Every child starts with every signal's disposition the default and nothing blocked,
//! whatever corral itself inherited.
//!
//! Every child is placed in a containment unit at the moment it is spawned (see
//! [`Containment`]); ending a command means ending its unit, not chasing its children.
//! The layers compose as wrappers: each adds its steps to the [`Launch`], which starts
//! the child with `clone3` born in its cgroup where it can (see [`launch`]).

mod cgroup;
mod containment;
mod group;
mod launch;
pub(crate) mod leash;
mod limits;
mod pid_namespace;
mod process_bounds;
mod remains;
mod subreaped;
mod terminal_session;
mod unit_kind;

use std::os::fd::OwnedFd;
use std::path::Path;

use crate::config::Config;

pub(crate) use containment::Containment;
pub(crate) use launch::{Launch, Proc};
pub(crate) use limits::Limits;
pub(crate) use pid_namespace::{Ahead as NamespaceAhead, EarlyAhead, EarlyJob, namespace_for};
pub(crate) use remains::{Remains, RemainsSlot};
pub(crate) use terminal_session::TerminalSession;
pub(crate) use unit_kind::{Base, UnitKind};

/// What one stage needs to start.
#[derive(Debug)]
pub(crate) struct Stage<'a> {
    /// The program to execute: a path as the line wrote it (relative to `cwd`, where the
    /// child is by its exec), or the file found on `PATH`.
    pub program: &'a Path,
    /// The argv as checked: `argv[0]` is passed to the program as its name.
    pub argv: &'a [std::ffi::OsString],
    pub cwd: &'a Path,
    pub env: &'a [crate::env::Var],
    /// stdin, stdout and stderr.
    pub stdio: [OwnedFd; 3],
    /// Redirects the child opens itself, inside its sandbox (a confined unit's stage).
    pub redirects: Option<corral_sys::box_redirects::Redirects>,
}

/// Start `stage` inside `unit`: each layer adds its steps to the launch, the unit starts
/// it, and records its pid.
pub(crate) fn spawn(stage: Stage<'_>, unit: &mut dyn Containment) -> std::io::Result<Proc> {
    let mut launch = Launch::new(stage.program, stage.argv, stage.env, stage.cwd, stage.stdio);
    if let Some(redirects) = stage.redirects {
        launch.redirect_in_child(redirects);
    }
    unit.pre_spawn(&mut launch);
    let child = unit.spawn(launch)?;
    unit.post_spawn(child.id());
    Ok(child)
}

/// Make now what the first call's unit would otherwise make first, none of it a process:
/// the cgroup probe (the hierarchies, this process's parent groups) and a call's group
/// kept for reuse; the PID namespaces' mount template and init image. A call that asks
/// for the probe or the template while this runs waits for the same work rather than
/// doing it twice; one that needs a group before this made it makes its own (and the
/// other waits in the pool). Then the groups dead corrals left are swept, which no call
/// waits for.
pub(crate) fn warm(config: &Config) {
    if config.cgroups {
        cgroup::warm(Limits::of(config));
    }
    if config.pid_namespace {
        pid_namespace::warm();
    }
    // Last: no call needs it, and the call's own namespace is made on the same core.
    if config.cgroups {
        cgroup::sweep_after_warm();
    }
}

/// Whether a call's memory is bounded, and if not, why (for the sandbox report).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemoryBound {
    /// The call's memory is bounded at `bytes`; `whole_call`: reaching it ends every
    /// process of the call (a v2 group's `memory.oom.group`), not only the largest (v1).
    Bound { bytes: u64, whole_call: bool },
    /// The configuration asks for none (`memory = "none"`).
    Off,
    /// No cgroup bounds it (`cgroup_why` says why not: [`MemoryBound::NoCgroup`] or
    /// [`MemoryBound::NoController`]), so each process is bounded at `bytes` of its own
    /// (`RLIMIT_DATA`, see `process_bounds`).
    PerProcess { bytes: u64, no_controller: bool },
    /// The call has no cgroup of its own.
    NoCgroup,
    /// Its cgroup has no `memory` controller corral may enable.
    NoController,
}

impl MemoryBound {
    /// What `unit`, made under `config`, bounds.
    pub(crate) fn of(config: &Config, unit: &dyn Containment) -> MemoryBound {
        if let Some(bytes) = unit.memory_max() {
            MemoryBound::Bound {
                bytes,
                whole_call: !cgroup::memory_in_v1(),
            }
        } else if Limits::of(config).memory.is_none() {
            MemoryBound::Off
        } else if let Some(bytes) = unit.data_max() {
            MemoryBound::PerProcess {
                bytes,
                no_controller: config.cgroups && cgroup::host().is_some(),
            }
        } else if config.cgroups && cgroup::host().is_some() {
            MemoryBound::NoController
        } else {
            MemoryBound::NoCgroup
        }
    }
}

/// Pick the unit for one call: the strongest layer the host allows (see the module docs).
/// `label` names the call in the cgroup hierarchy, e.g. `step-3`; `sandboxed` if the call
/// runs in a box (an ordinary user's PID namespace is part of it); `ahead`, the PID
/// namespace started for the call, if one was.
pub(crate) fn unit_for_call(
    config: &Config,
    label: &str,
    sandboxed: bool,
    ahead: &mut NamespaceAhead,
) -> Box<dyn Containment> {
    let cgroup = if config.cgroups {
        cgroup::host()
            .and_then(|host| cgroup::CgroupUnit::new(host, label, Limits::of(config)).ok())
    } else {
        None
    };
    let namespace = if config.pid_namespace {
        pid_namespace::Namespaced::namespace(sandboxed, ahead)
    } else {
        None
    };
    let unit: Box<dyn Containment> = match (cgroup, &namespace) {
        (Some(unit), _) => Box::new(unit),
        // In a PID namespace a call's orphans are its init's, not corral's: the
        // namespace finds and ends what left the process groups, and no walk of `/proc`
        // is needed for them.
        (None, Some(_)) => Box::new(group::ProcessGroup::niced(config.nice)),
        (None, None) => Box::new(subreaped::Subreaped::new(config.nice)),
    };
    let unit = match namespace {
        Some(ns) => pid_namespace::Namespaced::around(unit, ns),
        None => unit,
    };
    process_bounds::around(unit, config, sandboxed)
}
