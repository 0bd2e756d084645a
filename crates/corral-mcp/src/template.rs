//! What every run the server opens is opened with, read once at startup: the workspace,
//! the MCP surface's posture there (layered policy, approval mode, sandbox), the bounds,
//! the store, and which tools are offered.

use std::path::PathBuf;
use std::sync::Arc;

use corral::tools::Offer;
use corral::{Overrides, Posture, Run, Surface};

use crate::approver::ElicitApprover;
use crate::notify::Notifier;
use crate::{Error, ServeOptions};

/// The recipe for one connection's or one session's run.
#[derive(Debug, Clone)]
pub(crate) struct RunTemplate {
    posture: Posture,
    notes: Vec<String>,
    store: Option<PathBuf>,
    offer: Offer,
}

/// A run just opened, with what its handler needs.
pub(crate) struct Opened {
    pub run: Arc<Run>,
    pub approver: ElicitApprover,
    pub notifier: Notifier,
    pub offer: Offer,
}

impl RunTemplate {
    /// Resolve the workspace and the posture there, as `options` say; nothing is printed
    /// until [`RunTemplate::announce`], so a bad flag fails before any banner.
    pub(crate) fn new(options: &ServeOptions) -> Result<Self, Error> {
        let workspace = match &options.workspace {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().map_err(|source| Error::Io {
                context: "reading the current directory",
                source,
            })?,
        };
        match std::fs::metadata(&workspace) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(Error::Config(format!(
                    "the workspace {} is not a directory: give --workspace the directory the agent works in",
                    workspace.display()
                )));
            }
            Err(e) => {
                return Err(Error::Config(format!(
                    "the workspace {} cannot be used ({e}): give --workspace an existing directory, or create it first",
                    workspace.display()
                )));
            }
        }
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
        Ok(Self {
            posture,
            notes: options.notes.clone(),
            store: options.store.clone(),
            offer: Offer {
                files: options.file_tools,
                undo: options.undo_tool,
            },
        })
    }

    /// Tell the operator on stderr what every run will get and where the state is. Paths
    /// and a policy file's words (which a model may have written) go through
    /// `corral::person`, as every string a person reads does.
    pub(crate) fn announce(&self) {
        let say = |line: &str| {
            eprintln!(
                "corral mcp: {}",
                corral::person::escaped(line, corral::person::Lines::Keep)
            );
        };
        say(&self.posture.summary());
        say(&self.state_line());
        for notice in self.posture.policy.notices() {
            say(&format!("note: {notice}"));
        }
        for note in &self.notes {
            say(note);
        }
    }

    /// Where the trace and the trusted policies are, and what chose them: a client that
    /// starts the server without the user's environment lands elsewhere than the user.
    fn state_line(&self) -> String {
        let state = corral::state_dir();
        let dir = match &state {
            Some(state) => format!("{} (from {})", state.path.display(), state.chosen_by),
            None => "none (set --state DIR, CORRAL_STATE_DIR or HOME)".to_string(),
        };
        let trace = self
            .store
            .clone()
            .or_else(corral::default_store_path)
            .map_or("none".to_string(), |p| p.display().to_string());
        let trust = corral::TrustStore::default_location()
            .map_or("none".to_string(), |t| t.path().display().to_string());
        format!(
            "state directory {dir}: trace {trace}, trusted policies {trust}; change it with --state DIR or CORRAL_STATE_DIR"
        )
    }

    /// What a run's box reaches: the workspace first, then the roots it writes and its
    /// caches. (`corral mcp --token-file` must lie outside all of them.)
    pub(crate) fn box_reach(&self) -> Vec<PathBuf> {
        let canonical = |p: &std::path::Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let workspace = canonical(&self.posture.workspace);
        let mut reach = vec![workspace.clone()];
        let sandbox = &self.posture.sandbox;
        reach.extend(sandbox.writable.iter().map(|p| canonical(p)));
        reach.extend(sandbox.caches.iter().map(|p| canonical(p)));
        reach.extend(
            self.posture
                .config
                .sandbox
                .writable_roots
                .iter()
                .map(|root| canonical(&workspace.join(root))),
        );
        reach
    }

    /// Hide `path` from every run's box, as a read deny: a secret of the server's own.
    pub(crate) fn hide(&mut self, path: &std::path::Path) {
        let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        self.posture
            .config
            .sandbox
            .deny_read
            .push(path.to_string_lossy().into_owned());
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
            offer: self.offer,
        })
    }
}
