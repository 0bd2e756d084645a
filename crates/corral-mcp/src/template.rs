//! What every run the server opens is opened with, read once at startup: the workspace,
//! the MCP surface's posture there (layered policy, approval mode, sandbox), the bounds,
//! the store, and which tools are offered.

use std::path::PathBuf;
use std::sync::Arc;

use corral::{Run, surface::Overrides, surface::Posture, surface::Surface};

use crate::approver::ElicitApprover;
use crate::notify::Notifier;
use crate::{Error, ServeOptions};

/// The recipe for one connection's or one session's run.
#[derive(Debug, Clone)]
pub(crate) struct RunTemplate {
    posture: Posture,
    store: Option<PathBuf>,
    file_tools: bool,
}

/// A run just opened, with what its handler needs.
pub(crate) struct Opened {
    pub run: Arc<Run>,
    pub approver: ElicitApprover,
    pub notifier: Notifier,
    pub file_tools: bool,
}

impl RunTemplate {
    /// Resolve the workspace and the posture there, as `options` say, and tell the
    /// operator on stderr what every run will get.
    pub(crate) fn new(options: &ServeOptions) -> Result<Self, Error> {
        let workspace = match &options.workspace {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().map_err(|source| Error::Io {
                context: "reading the current directory",
                source,
            })?,
        };
        let posture = Posture::new(
            Surface::Mcp,
            &workspace,
            options.config.clone(),
            &Overrides {
                policy_files: options.policy_files.clone(),
                sandbox: options.sandbox,
                approval: options.approval,
                ..Overrides::default()
            },
        )?;
        eprintln!("corral mcp: {}", posture.summary());
        for notice in posture.policy.notices() {
            eprintln!("corral mcp: note: {notice}");
        }
        Ok(Self {
            posture,
            store: options.store.clone(),
            file_tools: options.file_tools,
        })
    }

    /// Open a run, its approvals asked and its handle exits announced on `runtime`.
    pub(crate) fn open(&self, runtime: &tokio::runtime::Handle) -> Result<Opened, Error> {
        let approver = ElicitApprover::new(runtime.clone());
        let notifier = Notifier::new(runtime.clone());
        let mut builder = Run::builder(&self.posture.workspace)
            .config(self.posture.config.clone())
            .policy(self.posture.policy.clone())
            .approval(self.posture.approval)
            .approver(approver.clone());
        builder = crate::notify::watch_handles(builder, notifier.clone());
        if let Some(store) = &self.store {
            builder = builder.store(store.clone());
        }
        let run = builder.open()?;
        for gone in run.abandoned() {
            eprintln!(
                "corral mcp: closed run {} as aborted: its corral (pid {}) had ended without closing it",
                gone.run_id, gone.pid
            );
        }
        Ok(Opened {
            run: Arc::new(run),
            approver,
            notifier,
            file_tools: self.file_tools,
        })
    }
}
