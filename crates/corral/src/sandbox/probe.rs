//! Whether the box really refuses a write a failed command's stderr blames on it.
//!
//! A path named beside `Permission denied` is only a guess at a denial: the command may
//! have failed on the file's own mode, or printed the line to get a path granted. Before
//! a rerun is offered for it, a probe in a box made as the call's was (same writable
//! roots, same mounts, same Landlock rules) tries the write the kernel would judge:
//! opening the file for appending (nothing is written), or, where there is no file,
//! making and removing a directory beside where it would be. Only if the kernel refuses
//! the probe is the denial the box's.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Stdio};

use super::{RunSandbox, SandboxConfig};

/// `Some(true)` when a box like the call's cannot write `path`; `Some(false)` when it
/// can (the failure was not the box's); `None` when no probe could be made.
pub(crate) fn box_refuses_write(
    config: &SandboxConfig,
    workspace: &Path,
    shared: &RunSandbox,
    plan: &crate::plan::Plan,
    path: &Path,
) -> Option<bool> {
    let unit = super::Unit {
        kind: crate::spawn::UnitKind::of(crate::spawn::Base::ProcessGroups { subreaper: false }),
        pids_max: None,
        memory: crate::spawn::MemoryBound::Off,
        nice: 0,
    };
    let active = match super::prepare(
        config,
        workspace,
        &unit,
        shared,
        plan,
        std::env::var_os("PATH").as_deref(),
    ) {
        Ok(active) => active,
        // A box that refuses the call's own redirects refuses the write.
        Err(_) => return Some(true),
    };
    let confinement = active.confinement.as_ref()?;
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let socket_or_fifo = std::fs::symlink_metadata(path)
        .is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_socket());
    let mut cmd = Command::new("/bin/sh");
    if regular {
        cmd.args(["-c", "exec 3>>\"$1\"", "probe"]).arg(path);
    } else if !socket_or_fifo {
        // Where a file would be made: the nearest directory the host has on its way.
        let dir = if path.is_dir() {
            path
        } else {
            path.ancestors().skip(1).find(|a| a.is_dir())?
        };
        cmd.args([
            "-c",
            "d=\"$1/.corral-probe-$$\"; mkdir \"$d\" 2>/dev/null && rmdir \"$d\"",
            "probe",
        ])
        .arg(dir);
    } else {
        return None;
    }
    cmd.current_dir(workspace)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    corral_sys::sandbox::confine_before_exec(&mut cmd, confinement, None);
    let status = cmd.status().ok()?;
    Some(!status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's word: a box like the call's writes the workspace, not a directory
    /// outside it.
    #[test]
    fn the_probe_asks_the_kernel() {
        let host = corral_sys::sandbox::host_support();
        if host.landlock_abi == 0 {
            eprintln!("skipped: no Landlock here");
            return;
        }
        let outside = tempfile::tempdir_in("/var/tmp").unwrap();
        let ws = tempfile::tempdir_in("/var/tmp").unwrap();
        let config = SandboxConfig::mode(super::super::SandboxMode::WorkspaceWrite);
        let shared = RunSandbox::open(&config, ws.path());
        let plan = crate::plan::Plan::for_argv(["true"], ws.path()).unwrap();
        let refuses = |p: &Path| box_refuses_write(&config, ws.path(), &shared, &plan, p);
        assert_eq!(refuses(&outside.path().join("new-file")), Some(true));
        assert_eq!(refuses(&ws.path().join("new-file")), Some(false));
        std::fs::write(ws.path().join("there"), "x").unwrap();
        assert_eq!(refuses(&ws.path().join("there")), Some(false));
        assert_eq!(
            std::fs::read_to_string(ws.path().join("there")).unwrap(),
            "x"
        );
        assert!(!ws.path().join("new-file").exists());
    }
}
