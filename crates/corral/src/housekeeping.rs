//! What opening a run does beside its record rather than before it, for a process that
//! opens a run for one call (see [`RunBuilder::housekeeping_in_background`]).
//!
//! Opening a run records it in the trace; around that record are chores the first call
//! would otherwise do first, and one no call needs: the host's cgroups probed (the
//! hierarchies found, this process's parent groups made, the groups of corrals that died
//! swept) and a call's group made; the PID namespaces' mount template and init image made
//! (see `spawn::warm`: none of it a process); and old captures pruned to the retention. On
//! a command line they were a third of a call. So a thread started as the run opens does
//! the first while the store opens, then waits until the first call's command is about to
//! start (when the calling thread leaves the store alone until the command ends) and
//! prunes; when the command has ended, it also ends the call's unit (its groups removed,
//! its namespace's init killed) while the calling thread records the call. The call's own
//! PID namespace starts as the run opens too, on a thread that ends once its init is
//! cloned (`spawn::EarlyAhead`): a run of one call has no time between calls for its init
//! to wait in. The housekeeping thread starts that thread as its first act, once it is on
//! its own core: started there, the thread starts there, and the opening pays for one
//! thread's start instead of two. The run's end waits for
//! the housekeeping thread, so the captures are pruned, and the thread gone, by the time
//! the run says it has ended; a run that fails to open waits for it too.
//!
//! [`RunBuilder::housekeeping_in_background`]: crate::RunBuilder::housekeeping_in_background

use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use corral_trace::{Retention, Store, TraceError};

use crate::config::Config;
use crate::spawn::{Containment, EarlyJob};

/// The thread, the prune it runs when told, and the units it is given to end.
#[derive(Debug)]
pub(crate) struct Housekeeper {
    /// The prune, until it is handed to the thread.
    prune: Option<Prune>,
    to_thread: Option<Sender<Order>>,
    thread: Option<JoinHandle<Result<(), TraceError>>>,
}

/// What the thread is told once it has made what the first call needs.
#[derive(Debug)]
enum Order {
    /// Prune the captures.
    Prune(Prune),
    /// End a call's unit (see [`Housekeeper::retire`]).
    Retire(Box<dyn Containment>),
}

#[derive(Debug)]
struct Prune {
    store: Arc<Mutex<Store>>,
    retention: Retention,
    undo: UndoPrune,
}

/// Where the undo store is and what of it to keep (pruned after the captures, when due).
#[derive(Debug)]
pub(crate) struct UndoPrune {
    pub dir: std::path::PathBuf,
    /// The run that prunes (its own records are its to keep).
    pub run_id: String,
    pub retention: crate::undo::UndoRetention,
}

impl Housekeeper {
    /// Start probing the host for `config`'s units on a thread of its own, which first
    /// starts a thread for `early`, the making of the first call's PID namespace.
    pub(crate) fn start(config: &Config, early: Option<EarlyJob>) -> std::io::Result<Self> {
        let config = config.clone();
        let (to_thread, orders) = channel::<Order>();
        // On another core than the opening's: beside it, not in turn with it.
        let thread = crate::beside::spawn("corral-housekeeping", move || {
            if let Some(early) = early {
                // Started from this core, it starts on this core, and the opening's is
                // left alone. It goes first: its making soon waits for its init to start,
                // and this thread's work goes on meanwhile.
                let started = std::thread::Builder::new()
                    .name("corral-pidns".into())
                    .spawn(early);
                if started.is_ok() {
                    std::thread::yield_now();
                }
            }
            crate::spawn::warm(&config);
            // Until the run's end lets the sender go; a run that ends without telling it to
            // prune does not (the run did not open after all).
            let mut pruned = Ok(());
            for order in orders {
                match order {
                    Order::Prune(prune) => {
                        let store = prune.store.lock().unwrap_or_else(|e| e.into_inner());
                        pruned = store.prune(&prune.retention).map(drop);
                        drop(store);
                        // A sweep that fails is tried again at the next run's opening.
                        let _ = crate::undo::prune_when_due(
                            &prune.store,
                            &prune.undo.dir,
                            &prune.undo.retention,
                            &prune.undo.run_id,
                        );
                    }
                    Order::Retire(unit) => drop(unit),
                }
            }
            pruned
        })?;
        Ok(Self {
            prune: None,
            to_thread: Some(to_thread),
            thread: Some(thread),
        })
    }

    /// What to prune once [`Housekeeper::prune_now`] says so.
    pub(crate) fn prune_later(
        &mut self,
        store: Arc<Mutex<Store>>,
        retention: Retention,
        undo: UndoPrune,
    ) {
        self.prune = Some(Prune {
            store,
            retention,
            undo,
        });
    }

    /// Let the thread prune (once; later calls do nothing).
    pub(crate) fn prune_now(&mut self) {
        if let (Some(prune), Some(to_thread)) = (self.prune.take(), &self.to_thread) {
            // A thread that died already has nothing to prune with.
            let _ = to_thread.send(Order::Prune(prune));
        }
    }

    /// Have the thread end a call's `unit` (its groups removed, its namespace's init
    /// killed): the calling thread goes on with the call's result and rows meanwhile, and
    /// the run's end, which waits for the thread, still finds it ended. Where the thread
    /// is gone (it panicked), the unit is ended here, as the failed send drops it.
    pub(crate) fn retire(&self, unit: Box<dyn Containment>) {
        match &self.to_thread {
            Some(to_thread) => drop(to_thread.send(Order::Retire(unit))),
            None => drop(unit),
        }
    }

    /// Prune if not yet told to, and wait for the thread to finish; what pruning failed
    /// with, if it did, or that it never ran.
    pub(crate) fn finish(&mut self) -> crate::Result<()> {
        self.prune_now();
        self.join()
    }

    /// Tell the thread nothing more and wait for it (once; then `Ok`).
    fn join(&mut self) -> crate::Result<()> {
        self.to_thread = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result.map_err(Into::into),
            // The panic itself was printed where it happened.
            Some(Err(_)) => Err(crate::Error::new(
                crate::error::ErrorKind::Store,
                "old captures were not pruned: the thread pruning them panicked; the next run prunes them",
            )),
            None => Ok(()),
        }
    }
}

impl Drop for Housekeeper {
    /// A run that did not open after all: nothing to prune, but the thread's making is
    /// waited for, so none of it goes on behind the caller's error.
    fn drop(&mut self) {
        self.prune = None;
        let _ = self.join();
    }
}
