//! A [`Run`]: one agent run, and the owner of everything that happens in it.
//!
//! Opening a run records it in the trace; closing it (or dropping it, or a panic unwinding
//! through it) records how it ended. Every call made through a run leaves a step row.

mod api;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use corral_trace::{NewRun, OwnerClaim, Retention, Store};

use corral_trace::Abandoned;

use corral_policy::{ApprovalMode, Policy};

use crate::approve::{Approver, DenyAll};
use crate::clock::now_ms;
use crate::config::Config;
use crate::ctx::Ctx;
use crate::env::EnvBuilder;
use crate::error::{Error, ErrorKind, Result};
use crate::gate::Gate;
use crate::handle::request::HandleEvent;
use crate::handle::table::{ExitObserver, Handles};
use crate::housekeeping::Housekeeper;
use crate::paths::{canonical_dir, default_store_path};

/// One agent run: a workspace, a configuration, and the trace of what it did.
///
/// A `Run` is `Sync`: calls may be made from several threads at once.
///
/// Dropping a run records its end as `dropped` (or `panic` while unwinding); prefer
/// [`Run::close`], which records `closed` and reports a failure to do so.
#[derive(Debug)]
pub struct Run {
    /// What every call made through the run takes: its id, workspace, configuration,
    /// trace, gate and sandbox (see [`Ctx`]).
    pub(crate) ctx: Ctx,
    pub(crate) handles: Mutex<crate::handle::table::Handles>,
    /// This process's claim on the run, released once its end is recorded.
    owner: Mutex<Option<OwnerClaim>>,
    /// Runs whose owner had died, closed when this one opened.
    abandoned: Vec<Abandoned>,
    /// Whether the trace keeps its log when it closes ([`RunBuilder::keep_trace_log`]).
    keep_log: bool,
}

/// How to open a [`Run`].
#[derive(Debug, Clone)]
pub struct RunBuilder {
    workspace: PathBuf,
    store: Option<PathBuf>,
    config: Config,
    policy: Option<Policy>,
    approval: Option<ApprovalMode>,
    approver: Option<Arc<dyn Approver>>,
    resume: Option<String>,
    observer: Option<Observer>,
    keep_log: bool,
    housekeeping_in_background: bool,
}

/// The exit observer, shown by `Debug` as present or not.
#[derive(Clone)]
struct Observer(ExitObserver);

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Observer")
    }
}

impl RunBuilder {
    /// Reopen the run `id` (from an earlier process) instead of starting a new one. The
    /// handles it left running are reported as orphaned: never re-attached, polled or
    /// signalled.
    pub fn resume(mut self, id: impl Into<String>) -> Self {
        self.resume = Some(id.into());
        self
    }

    /// Call `observer` when a background handle ends (by itself, killed, or with the run).
    pub fn on_handle_exit(
        mut self,
        observer: impl Fn(HandleEvent) + Send + Sync + 'static,
    ) -> Self {
        self.observer = Some(Observer(Arc::new(observer)));
        self
    }

    /// Leave the trace's log beside the database when the run closes, without the
    /// checkpoint and its `fsync`s (see [`corral_trace::Store::keep_log_on_close`]): for a
    /// process that opens a run for one call, where those syncs cost more than the call.
    pub fn keep_trace_log(mut self) -> Self {
        self.keep_log = true;
        self
    }

    /// Make what the first call's containment needs (the cgroup probe and a call's group,
    /// the PID namespaces' template, and the call's namespace itself) while the store
    /// opens, then sweep the groups dead corrals left; prune old captures while the first
    /// call's command runs; end each call's unit while the call is recorded: each on a
    /// thread beside the run's own work instead of before it, for a process that opens a
    /// run for one call (a command line), where that work is a third of the call.
    ///
    /// What that changes for the caller: the first call is made, and the run ended, on the
    /// thread that opened it (the namespace started for the call waits there); `open` no
    /// longer prunes, so a failure to prune is not `open`'s error but [`Run::close`]'s,
    /// returned after the run's end is recorded; and the cgroups and the namespace are
    /// made even if no call comes (the run's end ends the namespace).
    pub fn housekeeping_in_background(mut self) -> Self {
        self.housekeeping_in_background = true;
        self
    }

    /// Use the trace at `path` instead of [`default_store_path`].
    pub fn store(mut self, path: impl Into<PathBuf>) -> Self {
        self.store = Some(path.into());
        self
    }

    /// Use `config` instead of [`Config::default`].
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Decide what may start with `policy` (default: [`Policy::default`], which asks
    /// about everything no rule allows).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// When to ask the approver (default: the policy's own setting, else `on-request`).
    pub fn approval(mut self, mode: ApprovalMode) -> Self {
        self.approval = Some(mode);
        self
    }

    /// Who answers when the policy says ask (default: [`DenyAll`], nobody).
    pub fn approver(mut self, approver: impl Approver + 'static) -> Self {
        self.approver = Some(Arc::new(approver));
        self
    }

    /// Open the run: check the workspace, open (or create) the store, record the run and
    /// apply the capture retention (beside the first call instead, with
    /// [`RunBuilder::housekeeping_in_background`]).
    pub fn open(self) -> Result<Run> {
        let policy_allow = self.policy.as_ref().map(|p| p.sandbox_network_allow());
        crate::sandbox::domains::AllowList::parse(&self.config.sandbox.network_allow)
            .and_then(|_| crate::sandbox::domains::AllowList::parse(policy_allow.unwrap_or(&[])))
            .map_err(Error::invalid)?;
        let workspace = canonical_dir(&self.workspace, "workspace")?;
        let env = EnvBuilder::new(&self.config.env)?;
        let store_path = match self.store {
            Some(p) => p,
            None => default_store_path().ok_or_else(|| {
                Error::new(
                    ErrorKind::Store,
                    "no place for the trace: none of --state, CORRAL_STATE_DIR, CORRAL_STORE, XDG_STATE_HOME and HOME is set; pass a store path",
                )
            })?,
        };
        // The run opens for one call, made on this thread: its namespace starts now,
        // beside the store's open, instead of beside the call's first steps; the
        // housekeeping starts the thread that makes it.
        let (early, early_job) = if self.housekeeping_in_background
            && self.config.pid_namespace
            && crate::spawn::namespace_for(self.config.sandbox.mode.is_sandboxed())
        {
            let (early, job) = crate::spawn::EarlyAhead::start();
            (Some(early), job)
        } else {
            (None, None)
        };
        // Without a thread for it, the same work is done here, as a run always did.
        let mut housekeeper = self
            .housekeeping_in_background
            .then(|| Housekeeper::start(&self.config, early_job).ok())
            .flatten();
        let store = Store::open(&store_path)?;
        if self.keep_log {
            store.keep_log_on_close()?;
        }
        // What a dead owner left running is closed before anything else; a store too busy
        // to do it now leaves it for the next opener.
        let abandoned = store.close_abandoned(now_ms()).unwrap_or_default();
        // And what its calls left running where no cgroup or PID namespace holds them.
        let owners = store_path
            .parent()
            .unwrap_or_else(|| Path::new("/"))
            .join("owners");
        crate::spawn::leash::hold_in(&owners);
        crate::spawn::leash::sweep(&owners);
        let (id, mut handles) = match &self.resume {
            Some(id) => {
                let Some(row) = store.run(id)? else {
                    return Err(Error::invalid(format!(
                        "there is no run {id} in {}: list runs with `corral trace runs`",
                        store.path().display()
                    )));
                };
                store.reopen_run(&row.id, std::process::id())?;
                store.orphan_handles(&row.id, now_ms())?;
                (row.id, Handles::resumed(store.handles(id)?))
            }
            None => {
                let id = new_run_id();
                store.begin_run(&NewRun {
                    id: id.clone(),
                    workspace: crate::os_text::escape_path(&workspace).into_owned(),
                    started_at_ms: now_ms(),
                    pid: std::process::id(),
                    config_json: serde_json::to_string(&self.config).unwrap_or_default(),
                })?;
                (id, Handles::default())
            }
        };
        let owner = store.claim_run(&id)?;
        handles.observer = self.observer.map(|o| o.0);
        let retention = Retention {
            keep_runs: self.config.keep_runs,
            max_capture_bytes: self.config.max_capture_bytes,
        };
        if housekeeper.is_none() {
            store.prune(&retention)?;
        }
        // Made by the first capture file written in it (see `capture::Sink`).
        let capture_dir = store.capture_dir(&id);
        let protected = protected_paths(store.path());
        let policy = self.policy.unwrap_or_default();
        let mode = self.approval.or(policy.approval_mode()).unwrap_or_default();
        let approver = self.approver.unwrap_or_else(|| Arc::new(DenyAll));
        let mut config = self.config;
        for p in policy.sandbox_deny_read() {
            if !config.sandbox.deny_read.contains(p) {
                config.sandbox.deny_read.push(p.clone());
            }
        }
        for n in policy.sandbox_network_allow() {
            if !config.sandbox.network_allow.contains(n) {
                config.sandbox.network_allow.push(n.clone());
            }
        }
        for h in policy.sandbox_home_read() {
            if !config.sandbox.home_read.contains(h) {
                config.sandbox.home_read.push(h.clone());
            }
        }
        // The policy files' last word (an untrusted file's yes is dropped: a no only
        // tightens); otherwise the configuration's (on by default).
        if let Some(git_write) = policy.sandbox_git_write() {
            config.sandbox.git_write = git_write;
        }
        // Made now, so that the box hides it from the first call on.
        let refs_recorded = config.sandbox.git_write;
        let recorder = config.record.then(|| {
            Arc::new(
                crate::undo::Recorder::new(
                    &crate::undo::store_dir(store.path()),
                    &workspace,
                    config.sandbox.git_write,
                )
                .with_budget(config.undo_budget)
                .leaving_out(&protected),
            )
        });

        let mut sandbox = crate::sandbox::RunSandbox::open(&config.sandbox, &workspace);
        sandbox.own = protected.clone();
        sandbox.programs = crate::sandbox::programs::DeniedPrograms::of(&policy);
        sandbox
            .own
            .extend(crate::trust::TrustStore::default_location().map(|t| t.path().to_path_buf()));
        let store = Arc::new(Mutex::new(store));
        let undo = crate::housekeeping::UndoPrune {
            dir: crate::undo::store_dir(&store_path),
            run_id: id.clone(),
            retention: crate::undo::UndoRetention {
                keep_runs: config.undo_keep_runs,
                keep_for: config.undo_keep_for,
            },
        };
        match &mut housekeeper {
            Some(housekeeper) => housekeeper.prune_later(store.clone(), retention, undo),
            // Once an hour at most: a stamp's `stat` otherwise.
            None => {
                let _ = crate::undo::prune_when_due(&store, &undo.dir, &undo.retention, &id);
            }
        }
        Ok(Run {
            ctx: Ctx {
                id,
                workspace,
                config,
                env,
                store,
                capture_dir,
                recorder,
                record_off_said: AtomicBool::new(false),
                gate: {
                    let mut gate = Gate::new(policy, mode, approver);
                    gate.refs_recorded = refs_recorded;
                    gate
                },
                protected,
                sandbox,
                ended: AtomicBool::new(false),
                aborted: AtomicBool::new(false),
                pending: Mutex::default(),
                step_rows: Mutex::default(),
                first_call_namespace: Mutex::new(early.map(crate::spawn::EarlyAhead::keep)),
                housekeeper: Mutex::new(housekeeper),
                kept_cwd: Mutex::new(None),
                last_stamp: std::sync::atomic::AtomicI64::new(0),
                sandbox_shown: Default::default(),
                watched: Mutex::default(),
                swept: Mutex::default(),
                handle_held: Mutex::default(),
                nested_git: Mutex::default(),
            },
            handles: Mutex::new(handles),
            owner: Mutex::new(Some(owner)),
            abandoned,
            keep_log: self.keep_log,
        })
    }
}

impl Run {
    pub(crate) fn end(&self, how: &str) -> Result<()> {
        if self.ctx.ended.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        // The sequence: 1. end every handle; 2. wait until nothing of their units runs
        // (a killed namespace or cgroup empties after the kill); 3. the last sweep of
        // what they created; 4. the trace's end; 5. where step 2 gave up, sweep again last.
        self.end_handles();
        let late = self.settle_handles(SETTLE_LIMIT);
        self.sweep_handles();
        // What the last calls changed is in the trace before the run says it ended.
        if let Some(recorder) = &self.ctx.recorder {
            recorder.settle();
        }
        // A namespace started for a call that never came (see `open`) ends with the run.
        drop(
            self.ctx
                .first_call_namespace
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
        let written = self.ctx.flush_pending_patiently();
        // Out of its lock before the wait: a call starting meanwhile asks it nothing more.
        let housekeeper = self.ctx.housekeeper().take();
        let pruned = housekeeper.map_or(Ok(()), |mut h| h.finish());
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let ended = loop {
            match self.ctx.store().end_run(&self.ctx.id, now_ms(), how) {
                Err(e) if e.is_busy() && std::time::Instant::now() < until => {
                    std::thread::sleep(std::time::Duration::from_millis(200));
                }
                ended => break ended,
            }
        };
        // The PID namespaces this run's calls and handles ended are collected before it
        // returns, so a process that exits next leaves no exited init behind; after its
        // rows, which the inits' ends (their mounts taken down) would otherwise delay.
        corral_sys::pidns::settle(SETTLE_LIMIT);
        if late {
            self.sweep_handles();
        }
        ended?;
        if written {
            // Every row of the run is final: nothing for a later opener to close.
            if let Some(owner) = self.owner.lock().unwrap_or_else(|e| e.into_inner()).take() {
                owner.release();
            }
        }
        pruned
    }
}

/// How long a run's end waits for its handles' units to empty before their last sweep,
/// and then for the inits of its ended PID namespaces to be collected (each was sent
/// SIGKILL; the kernel ends the processes left in its namespace first).
const SETTLE_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

impl Drop for Run {
    fn drop(&mut self) {
        let how = if std::thread::panicking() {
            "panic"
        } else {
            "dropped"
        };
        // Nothing to report a failure to from a destructor; close() is the checked path.
        let _ = self.end(how);
    }
}

/// The trace database (with its WAL files) and the captures beside it, the policy
/// files a command would loosen corral's rules by emptying (the user's, the operator's,
/// the trust store), and the MCP endpoint's bearer token: what no command's redirect and
/// no file tool may write to, and what every box has hidden.
fn protected_paths(db: &Path) -> Vec<PathBuf> {
    let mut paths = state_paths(db);
    let policy = [
        crate::paths::user_config_path(),
        std::env::var_os("CORRAL_POLICY")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        crate::trust::TrustStore::default_location().map(|t| t.path().to_path_buf()),
        // A box holding it could open a session on the endpoint and approve its own asks.
        crate::paths::mcp_token_path(),
    ];
    for path in policy.into_iter().flatten() {
        paths.push(path.canonicalize().unwrap_or(path));
    }
    paths
}

/// The trace database (with its WAL files) and what lives beside it.
fn state_paths(db: &Path) -> Vec<PathBuf> {
    let db = db.canonicalize().unwrap_or_else(|_| db.to_path_buf());
    let mut paths = vec![db.clone()];
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        paths.push(PathBuf::from(name));
    }
    if let Some(dir) = db.parent() {
        paths.push(dir.join("captures"));
        paths.push(dir.join("held"));
        paths.push(dir.join("owners"));
        paths.push(dir.join("quarantine"));
        paths.push(dir.join("undo"));
    }
    paths
}

/// A run id that sorts by start time and does not collide across processes:
/// milliseconds since the epoch, then pid and a per-process counter mixed.
fn new_run_id() -> String {
    use std::hash::{BuildHasher, RandomState};
    use std::sync::atomic::AtomicU64;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // RandomState is seeded per process from the OS, which is all the randomness needed.
    let salt = RandomState::new().hash_one((std::process::id(), n)) as u32;
    format!("r{:011x}-{:08x}", now_ms(), salt)
}
