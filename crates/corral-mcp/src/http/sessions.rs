//! One run per HTTP session: opened when a client's `initialize` creates the session,
//! closed (its processes ended, its end recorded) once the session is gone.
//!
//! rmcp drops a session's handler when the session ends (the client's `DELETE`, the idle
//! timeout, the server's shutdown); the handler holds the run's only other reference. A
//! reaper looks every [`REAP_EVERY`] for runs nobody else holds and closes them.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use corral::Run;

use crate::server::CorralServer;
use crate::template::RunTemplate;

/// How often the reaper looks for ended sessions.
const REAP_EVERY: Duration = Duration::from_millis(250);

/// The runs of the live sessions.
#[derive(Debug)]
pub(crate) struct Sessions {
    template: RunTemplate,
    runtime: tokio::runtime::Handle,
    runs: Mutex<Vec<Arc<Run>>>,
}

impl Sessions {
    pub(crate) fn new(template: RunTemplate, runtime: tokio::runtime::Handle) -> Arc<Self> {
        Arc::new(Self {
            template,
            runtime,
            runs: Mutex::new(Vec::new()),
        })
    }

    /// A handler with a run of its own, for a new session.
    pub(crate) fn open(&self) -> std::io::Result<CorralServer> {
        let opened = self
            .template
            .open(&self.runtime)
            .map_err(std::io::Error::other)?;
        let run = opened.run;
        eprintln!("corral mcp: new session, run {}", run.id());
        self.lock().push(run.clone());
        Ok(CorralServer::new(
            run,
            opened.approver,
            opened.notifier,
            opened.file_tools,
        ))
    }

    /// How many sessions hold a run now.
    pub(crate) fn live(&self) -> usize {
        self.lock()
            .iter()
            .filter(|run| Arc::strong_count(run) > 1)
            .count()
    }

    /// Close the runs of ended sessions, every [`REAP_EVERY`], until the server stops.
    pub(crate) async fn reap(self: Arc<Self>) {
        loop {
            tokio::time::sleep(REAP_EVERY).await;
            let ended: Vec<Arc<Run>> = {
                let mut runs = self.lock();
                let (ended, live) = runs.drain(..).partition(|run| Arc::strong_count(run) == 1);
                *runs = live;
                ended
            };
            for run in ended {
                close(run, "session ended").await;
            }
        }
    }

    /// Close every run, live or not: the server is stopping.
    pub(crate) async fn close_all(&self) {
        let runs: Vec<Arc<Run>> = self.lock().drain(..).collect();
        for run in runs {
            close(run, "server stopping").await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Run>>> {
        self.runs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

async fn close(run: Arc<Run>, why: &str) {
    let id = run.id().to_string();
    match tokio::task::spawn_blocking(move || run.close()).await {
        Ok(Ok(())) => eprintln!("corral mcp: {why}, run {id} closed"),
        Ok(Err(e)) => eprintln!("corral mcp: {why}, run {id} could not be closed: {e}"),
        Err(e) => eprintln!("corral mcp: {why}, closing run {id} failed: {e}"),
    }
}
