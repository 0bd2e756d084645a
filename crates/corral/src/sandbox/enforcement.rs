//! What a configuration's sandbox would enforce on this host, before any call: the report
//! a surface reads to decide its default posture (see [`crate::Posture`]) and that
//! `corral sandbox report` prints.

use std::path::{Path, PathBuf};

use corral_sys::sandbox as sys;

use super::host_view::HostView;
use super::sets::Sets;
use crate::config::Config;
use crate::config::sandbox::{SandboxConfig, SandboxMode};
use crate::outcome::sandbox_report::{Level, SandboxReport};

/// The layers a call under `config` would get on this host, computed from the real probe
/// (Landlock ABI, namespaces, seccomp, `close_range`) and the containment unit `config`
/// makes; `workspace` names the protected paths (none when `None`). Makes nothing: no
/// temporary directory, no namespace.
pub fn report_for(config: &Config, workspace: Option<&Path>) -> SandboxReport {
    let sandbox = &config.sandbox;
    let mode = sandbox.mode;
    let mut report = SandboxReport::plain(mode);
    if !mode.is_sandboxed() {
        return report;
    }
    let host = sys::host_support();
    let view = match workspace {
        Some(ws) => HostView::now(sandbox, ws, &[]),
        None => HostView::denies_only(sandbox),
    };
    let sets = Sets::of(
        sandbox,
        workspace.unwrap_or(Path::new("")),
        Some(&view),
        &[],
        &[],
    );
    let protected: Vec<PathBuf> = match workspace {
        Some(_) => sets.mounted_read_only().to_vec(),
        None => Vec::new(),
    };
    let hidden = sets.hidden;
    let containment = crate::spawn::unit_for_call(
        config,
        "probe",
        true,
        &mut crate::spawn::NamespaceAhead::default(),
    );
    let spec = sys::Spec {
        read_only: protected.iter().filter(|p| p.exists()).cloned().collect(),
        network: sandbox.network,
        unix_sockets: sandbox.unix_sockets,
        deny_read: hidden.paths.clone(),
        private_dev: true,
        drop_caps: true,
        nproc: super::nproc_bound(containment.kind(), config.pids_max),
        closed_ports: super::listeners::ports(),
        // As a run's calls get it (see `RunSandbox::own_tmp`); only reported here.
        own_tmp: Some(std::env::temp_dir()),
        own_home: super::home::covered(&sandbox.home_read).map(|h| (std::env::temp_dir(), h)),
        other_homes: super::home::other_home(std::env::var_os("HOME").as_deref())
            .map(|root| (std::env::temp_dir(), root))
            .into_iter()
            .collect(),
        ..sys::Spec::default()
    };
    let mut enforced = sys::build(&spec, &host).map(|(_, e)| e).unwrap_or_default();
    // A run opens its IPC namespace, and its network namespace, when it can; the report
    // says what calls get then.
    enforced.ipc_namespace_shared = enforced.ipc_namespace;
    let by_domain = !sandbox.network && !sandbox.network_allow.is_empty();
    if enforced.net_namespace && (sandbox.run_network_namespace || by_domain) {
        enforced.net_namespace_shared = true;
        enforced.landlock_net = false;
    }
    report.network = sandbox.network;
    let unit = super::Unit {
        kind: containment.kind(),
        pids_max: config.pids_max,
        memory: crate::spawn::MemoryBound::of(config, containment.as_ref()),
        nice: config.nice,
    };
    report.layers =
        super::layers::layers(&enforced, mode, sandbox.network, &protected, &hidden, &unit);
    super::home::from_path::tell(&mut report.layers, &view.from_path);
    if by_domain && enforced.net_namespace {
        let names = super::domains::AllowList::parse(&sandbox.network_allow)
            .map(|l| l.names().to_vec())
            .unwrap_or_default();
        report.network_allow = names.clone();
        report.proxy = Some("127.0.0.1 (a port per run)".into());
        super::network_layer_detail(
            &mut report.layers,
            report.proxy.as_deref(),
            &names,
            sandbox,
            &super::RunSandbox::default(),
        );
    }
    report
}

/// What this host can enforce, for `corral sandbox report`: the layers a
/// `workspace-write` sandbox with the network off would get.
pub fn host_report() -> SandboxReport {
    host_report_for(None)
}

/// [`host_report`] for a call in `workspace`: the protected paths as a
/// `workspace-write` call there would have them (those that exist bind-mounted
/// read-only, those absent named as creatable), or in general terms without one.
pub fn host_report_for(workspace: Option<&Path>) -> SandboxReport {
    let mut report = report_for(
        &crate::Config {
            sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
            ..crate::Config::default()
        },
        workspace,
    );
    for l in &mut report.layers {
        if workspace.is_none()
            && l.layer == crate::outcome::sandbox_report::Layer::ProtectedPaths
            && l.level == Level::Full
        {
            l.detail =
                "a mount namespace: existing protected paths are bind-mounted read-only".into();
        }
    }
    report
}
