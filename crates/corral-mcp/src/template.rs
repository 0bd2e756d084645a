//! What every run the server opens is opened with, read once at startup: the workspace,
//! its layered policy and the approval mode, the bounds, the store.

use std::path::PathBuf;
use std::sync::Arc;

use corral::{ApprovalMode, Config, Policy, PolicyFiles, Run};

use crate::approver::ElicitApprover;
use crate::notify::Notifier;
use crate::{Error, ServeOptions, server};

/// The recipe for one connection's or one session's run.
#[derive(Debug, Clone)]
pub(crate) struct RunTemplate {
    workspace: PathBuf,
    policy: Policy,
    mode: ApprovalMode,
    config: Config,
    store: Option<PathBuf>,
}

/// A run just opened, with the approver and notifier its handler needs.
pub(crate) struct Opened {
    pub run: Arc<Run>,
    pub approver: ElicitApprover,
    pub notifier: Notifier,
}

impl RunTemplate {
    /// Resolve the workspace and load its policy files, as `options` say.
    pub(crate) fn new(options: &ServeOptions) -> Result<Self, Error> {
        let workspace = match &options.workspace {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().map_err(|source| Error::Io {
                context: "reading the current directory",
                source,
            })?,
        };
        let policy = PolicyFiles::discover(&workspace, &options.policy_files)?
            .load_onto(Policy::default())?;
        let mode = policy
            .approval_mode()
            .unwrap_or(ApprovalMode::UnlessTrusted);
        Ok(Self {
            workspace,
            policy,
            mode,
            config: options.config.clone(),
            store: options.store.clone(),
        })
    }

    /// Open a run, its approvals asked and its handle exits announced on `runtime`.
    pub(crate) fn open(&self, runtime: &tokio::runtime::Handle) -> Result<Opened, Error> {
        let approver = ElicitApprover::new(runtime.clone());
        let notifier = Notifier::new(runtime.clone());
        let mut builder = Run::builder(&self.workspace)
            .config(self.config.clone())
            .policy(self.policy.clone())
            .approval(self.mode)
            .approver(approver.clone());
        builder = server::watch_handles(builder, notifier.clone());
        if let Some(store) = &self.store {
            builder = builder.store(store.clone());
        }
        Ok(Opened {
            run: Arc::new(builder.open()?),
            approver,
            notifier,
        })
    }
}
