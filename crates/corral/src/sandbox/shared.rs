//! What a run's sandboxed calls share, made once when the run opens: the run's network
//! namespace, the workspace's cache directory, and the paths a person allowed for the rest
//! of the run.
//!
//! **One network namespace per run.** With the network off, every sandboxed call of a run
//! joins one namespace whose only interface is a loopback that is up: a dev server started
//! in a handle answers a later call's `curl localhost:PORT`, nothing outside the run can
//! reach it, and nothing beyond the run is reachable from it. Landlock's TCP rules are
//! left off in it (they would refuse loopback too); the namespace is the boundary. Calls
//! with the network on stay in the host's namespace. Without the privilege to make one
//! (not root), or with [`super::SandboxConfig::run_network_namespace`] off, each call
//! gets a namespace of its own as before (loopback down), or seccomp's socket refusal.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use corral_sys::sandbox::{self as sys, NetNamespace};

use super::{SandboxConfig, caches};

/// The run-wide part of the sandbox (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct RunSandbox {
    pub network: Option<NetNamespace>,
    /// Why there is no run namespace although one was wanted.
    pub network_error: Option<String>,
    pub caches: Option<PathBuf>,
    /// Paths a person allowed for the rest of the run after a denial.
    pub allowed: Mutex<Vec<PathBuf>>,
    /// corral's own files, hidden from reads in the box: the trace, its captures, the
    /// trust store.
    pub own: Vec<PathBuf>,
}

impl RunSandbox {
    /// Make what `config` needs for `workspace`. Never fails: what cannot be made is
    /// left out and said in the reports.
    pub fn open(config: &SandboxConfig, workspace: &Path) -> RunSandbox {
        let mut shared = RunSandbox::default();
        if !config.mode.is_sandboxed() {
            return shared;
        }
        if !config.network && config.run_network_namespace && sys::host_support().namespaces {
            match NetNamespace::create() {
                Ok(ns) => shared.network = Some(ns),
                Err(e) => shared.network_error = Some(e.to_string()),
            }
        }
        if config.mode == super::SandboxMode::WorkspaceWrite
            && let Some(dir) = caches::dir_for(workspace)
            && caches::create(&dir).is_ok()
        {
            shared.caches = Some(dir);
        }
        shared
    }

    /// Let `path` be written for the rest of the run.
    pub fn allow(&self, path: PathBuf) {
        let mut allowed = self.allowed.lock().unwrap_or_else(|e| e.into_inner());
        if !allowed.contains(&path) {
            allowed.push(path);
        }
    }

    /// What a person allowed so far.
    pub fn allowed(&self) -> Vec<PathBuf> {
        self.allowed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
