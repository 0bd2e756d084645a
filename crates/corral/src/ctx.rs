//! The context every call takes: what a [`Run`](crate::Run) is to the layers beneath it.
//!
//! A `Ctx` holds what a call needs and nothing of the run's own life: the run's id,
//! workspace and configuration, the environment it builds from, the trace and the
//! directory of captures, the gate, the paths no redirect may write to, the sandbox the
//! run's calls share, the step ends and rows waiting for a busy store, the directory later
//! calls start in, the housekeeping beside the run. `Run` holds a `Ctx`, and beside it
//! the table of background handles, the owner's claim and what opening found: the
//! public facade (`run::api`) hands each call to the layer that makes it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use corral_trace::Store;

use crate::clock::now_ms;
use crate::config::Config;
use crate::env::EnvBuilder;
use crate::error::{Error, ErrorKind, Result};
use crate::gate::Gate;
use crate::housekeeping::Housekeeper;
use crate::output::Pointer;

/// What every call of a run takes (see the module docs).
#[derive(Debug)]
pub(crate) struct Ctx {
    pub id: String,
    pub workspace: PathBuf,
    pub config: Config,
    pub env: EnvBuilder,
    pub store: Arc<Mutex<Store>>,
    pub capture_dir: PathBuf,
    /// Records the workspace around calls that may write (see [`crate::undo`]).
    pub recorder: Option<Arc<crate::undo::Recorder>>,
    /// The run was told that recording for undo is off.
    pub record_off_said: AtomicBool,
    pub gate: Gate,
    /// Directories no redirect may write into: corral's own trace and captures.
    pub protected: Vec<PathBuf>,
    /// What the run's sandboxed calls share: its network namespace, the caches.
    pub sandbox: crate::sandbox::RunSandbox,
    /// The run has ended: no call starts.
    pub ended: AtomicBool,
    /// An approver aborted the run: no call starts, and the run ends as `aborted` once
    /// the call that was aborted returns (see `run::api`).
    pub aborted: AtomicBool,
    /// Step ends the store could not take yet (see `pending`).
    pub pending: Mutex<Vec<(i64, corral_trace::StepDone)>>,
    /// Rows of calls still running that are written with their step's end, in its
    /// transaction (see `pending`).
    pub step_rows: Mutex<Vec<corral_trace::NewSandboxEvent>>,
    /// The PID namespace started as the run opened, for its first call (see `open`);
    /// ended with the run if that call never came.
    pub first_call_namespace: Mutex<Option<crate::spawn::NamespaceAhead>>,
    /// The opening's work done beside the run (see `housekeeping`), when asked for.
    pub housekeeper: Mutex<Option<Housekeeper>>,
    /// The directory later calls start in, with [`Config::persist_cwd`] (see `cwd`).
    pub kept_cwd: Mutex<Option<PathBuf>>,
    /// The last time stamp a step or a model turn got (see [`Ctx::stamp`]).
    pub last_stamp: AtomicI64,
    /// The sandbox's status line this run last showed: a result repeats it only when it
    /// changes.
    pub sandbox_shown: crate::outcome::sandbox_report::StatusShown,
    /// The protected paths absent when each live handle started, checked after every
    /// call (see `background::watch`).
    pub watched: Mutex<Vec<crate::sandbox::appeared::Watched>>,
    /// What those checks found, for the next result that can say it.
    pub swept: Mutex<Vec<String>>,
    /// Each started handle's copies of the files host programs run (see `autorun`),
    /// until its watch takes them.
    pub handle_held: Mutex<Vec<(u32, crate::autorun::copies::Copies)>>,
    /// What the run knows of its workspace's nested repositories (see `autorun`).
    pub nested_git: Mutex<crate::autorun::nested_git::Watch>,
}

impl Ctx {
    /// What the watch over running handles found since the model last read a result
    /// (see `background::watch`), said in `text` under its first line, where a call's own
    /// protected-path lines go.
    pub(crate) fn say_swept(&self, text: &mut String) {
        let lines = std::mem::take(&mut *self.swept.lock().unwrap_or_else(|e| e.into_inner()));
        if lines.is_empty() {
            return;
        }
        let said = lines.join("\n");
        match text.find('\n') {
            Some(at) => text.insert_str(at + 1, &format!("{said}\n")),
            None => {
                text.push('\n');
                text.push_str(&said);
            }
        }
    }

    pub(crate) fn store(&self) -> MutexGuard<'_, Store> {
        // A panic while holding the lock leaves the store usable: every write is a
        // statement of its own.
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The time, in ms, for a step's start or a model turn: never earlier than, nor equal
    /// to, the one before in this run, so the trace tells their order even within one
    /// millisecond (a burst of events runs at most that many ms ahead of the clock).
    pub(crate) fn stamp(&self) -> i64 {
        let now = now_ms();
        let mut last = self.last_stamp.load(Ordering::Acquire);
        loop {
            let next = now.max(last + 1);
            match self.last_stamp.compare_exchange_weak(
                last,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return next,
                Err(seen) => last = seen,
            }
        }
    }

    pub(crate) fn is_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire) || self.aborted.load(Ordering::Acquire)
    }

    pub(crate) fn ensure_open(&self) -> Result<()> {
        if self.is_ended() {
            return Err(Error::new(
                ErrorKind::Closed,
                "this run has ended: open a new run to run more commands",
            ));
        }
        Ok(())
    }

    /// An approver aborted the run: nothing more starts in it, and the facade ends it
    /// once the call returns (its handles, its row).
    pub(crate) fn abort(&self) {
        self.aborted.store(true, Ordering::Release);
    }

    /// How this run's observations name the call that reads on.
    pub(crate) fn pointer(&self) -> Pointer {
        Pointer {
            style: self.config.read_more,
            store: self.store().path().to_path_buf(),
            run_id: self.id.clone(),
        }
    }

    pub(crate) fn housekeeper(&self) -> MutexGuard<'_, Option<Housekeeper>> {
        self.housekeeper.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// End a call's unit once its command has ended: on the housekeeping thread where the
    /// run has one (see `housekeeping`), else here.
    pub(crate) fn retire(&self, unit: Box<dyn crate::spawn::Containment>) {
        match self.housekeeper().as_ref() {
            Some(housekeeper) => housekeeper.retire(unit),
            None => drop(unit),
        }
    }

    /// A call's command is about to start: the calling thread leaves the store alone until
    /// it ends, so the opening's prune, if it runs beside the run, runs now.
    pub(crate) fn housekeep(&self) {
        if let Some(housekeeper) = self.housekeeper().as_mut() {
            housekeeper.prune_now();
        }
    }
}
