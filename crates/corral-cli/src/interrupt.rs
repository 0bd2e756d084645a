//! Ctrl-C for the commands that drive work of many steps (`corral run`, `corral verify`):
//! the work runs on a thread of its own while the command's main thread waits for it or
//! for a terminating signal.
//!
//! The first SIGINT, SIGTERM or SIGHUP fires the work's [`Cancel`]: the call or gate
//! phase running then ends (SIGTERM, its grace, SIGKILL) and nothing more starts. The
//! work is given up to [`WAIT`] to say how it ended (less when the caller knows it waits
//! where a token cannot reach: a model request in flight); work still blocked then (a
//! question on the terminal) is left behind, and the command says what it knows and
//! exits. A second signal, or a first that nothing
//! answered within [`corral_sys::escalation::GRACE`], ends corral at once (see
//! `corral_sys::escalation`). A hangup ignored on entry (`nohup`) stays ignored.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use anyhow::Context;
use corral::Cancel;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// The longest interrupted work has to end and say so: within the escalation's grace,
/// with room left for closing the run.
pub const WAIT: Duration = Duration::from_millis(2500);

/// How work that may be interrupted ended.
pub enum Ended<T> {
    /// It ran to its end.
    Finished(T),
    /// A signal arrived first. `result` is what the work returned after its token fired,
    /// or `None` when it did not return within [`WAIT`].
    Interrupted { signal: i32, result: Option<T> },
}

enum Event<T> {
    Done(std::thread::Result<T>),
    Signal(i32),
}

/// Run `work` on a thread, with `interrupt` fired by the first terminating signal; then
/// wait for it as long as `patience` says (asked when the signal comes, at most
/// [`WAIT`]).
pub fn run<T: Send + 'static>(
    interrupt: &Cancel,
    patience: impl Fn() -> Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> anyhow::Result<Ended<T>> {
    let (tx, rx) = mpsc::channel();
    let sigs: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
        .into_iter()
        .filter(|&sig| !(sig == SIGHUP && corral_sys::signals::ignored(sig)))
        .collect();
    let mut signals =
        signal_hook::iterator::Signals::new(&sigs).context("installing signal handlers")?;
    let closer = signals.handle();
    // The first signal, kept before the token fires: work that ends at once may say so
    // before the signal's own event arrives.
    let first = Arc::new(AtomicI32::new(0));
    corral_sys::escalation::answered_here(true);
    {
        let tx = tx.clone();
        let interrupt = interrupt.clone();
        let first = first.clone();
        std::thread::Builder::new()
            .name("corral-signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    let _ = first.compare_exchange(0, sig, Ordering::AcqRel, Ordering::Acquire);
                    interrupt.cancel();
                    if tx.send(Event::Signal(sig)).is_err() {
                        break;
                    }
                }
            })
            .context("starting the signal thread")?;
    }
    std::thread::Builder::new()
        .name("corral-work".into())
        .spawn(move || {
            let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            let _ = tx.send(Event::Done(done));
        })
        .context("starting the run's thread")?;
    let ended = match rx.recv() {
        Ok(Event::Done(result)) => match first.load(Ordering::Acquire) {
            0 => Ended::Finished(unwound(result)),
            signal => Ended::Interrupted {
                signal,
                result: Some(unwound(result)),
            },
        },
        Ok(Event::Signal(signal)) => {
            let deadline = std::time::Instant::now() + patience().min(WAIT);
            let result = loop {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                match rx.recv_timeout(left) {
                    Ok(Event::Done(result)) => break Some(unwound(result)),
                    // A repeated signal is the escalation's: it ends corral.
                    Ok(Event::Signal(_)) => continue,
                    Err(_) => break None,
                }
            };
            Ended::Interrupted { signal, result }
        }
        Err(_) => anyhow::bail!("the run's thread ended without an answer"),
    };
    closer.close();
    Ok(ended)
}

/// The work's value, or its panic, carried on in this thread.
fn unwound<T>(result: std::thread::Result<T>) -> T {
    result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
