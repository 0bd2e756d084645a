//! One run per HTTP session: opened when a client's `initialize` creates the session,
//! closed (its processes ended, its end recorded) once the session is gone.
//!
//! rmcp drops a session's handler when the session ends (the client's `DELETE`, the idle
//! timeout, the server's shutdown); the handler holds the run's only other reference. A
//! reaper looks every [`REAP_EVERY`] for runs nobody else holds and closes them.
//!
//! The idle timeout is kept here, not by rmcp (which counts only messages, so a call that
//! ran longer than the timeout without a progress notification lost its session, and its
//! answer, mid-call): a session is idle while none of its requests is being answered, and
//! it ends once it has been idle for `--idle-timeout`.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use corral::Run;
use tokio_util::sync::CancellationToken;

use crate::server::CorralServer;
use crate::template::RunTemplate;

/// How often the reaper looks for ended sessions.
const REAP_EVERY: Duration = Duration::from_millis(250);

tokio::task_local! {
    /// Where [`Sessions::open`] leaves the new handler's "client gone" token for the
    /// request that made it (an `initialize`), until its session id is known.
    static OPENED: RefCell<Option<CancellationToken>>;
}

/// The runs of the live sessions.
#[derive(Debug)]
pub(crate) struct Sessions {
    template: RunTemplate,
    runtime: tokio::runtime::Handle,
    runs: Mutex<Vec<Arc<Run>>>,
    /// Each session's "client gone" token, by session id: cancelled on its `DELETE`, so
    /// the calls it left running end at once.
    gone: Mutex<HashMap<String, CancellationToken>>,
    /// Each session's last request or answer, and how many of its requests are being
    /// answered now.
    activity: Mutex<HashMap<String, (Instant, usize)>>,
    /// The JSON-RPC ids of each session's requests being answered now.
    answering: Mutex<HashMap<String, HashSet<String>>>,
}

/// A request of a session being answered: the session is not idle until it is dropped
/// (with the answer's body).
pub(crate) struct Busy {
    sessions: Arc<Sessions>,
    id: String,
    /// The request's JSON-RPC id, while it is being answered.
    request: Option<String>,
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut activity = self.sessions.activity_lock();
        if let Some((last, in_flight)) = activity.get_mut(&self.id) {
            *last = Instant::now();
            *in_flight = in_flight.saturating_sub(1);
        }
        drop(activity);
        if let Some(request) = &self.request
            && let Some(ids) = self.sessions.answering_lock().get_mut(&self.id)
        {
            ids.remove(request);
        }
    }
}

impl Sessions {
    pub(crate) fn new(template: RunTemplate, runtime: tokio::runtime::Handle) -> Arc<Self> {
        Arc::new(Self {
            template,
            runtime,
            runs: Mutex::new(Vec::new()),
            gone: Mutex::new(HashMap::new()),
            activity: Mutex::new(HashMap::new()),
            answering: Mutex::new(HashMap::new()),
        })
    }

    /// Request `request` (its JSON-RPC id) of session `id` is being answered: busy until
    /// the guard drops; `None` when a request with that id is being answered already (rmcp
    /// pairs answers by id: the two would take each other's).
    pub(crate) fn answering(self: &Arc<Self>, id: &str, request: &str) -> Option<Busy> {
        if !self
            .answering_lock()
            .entry(id.to_string())
            .or_default()
            .insert(request.to_string())
        {
            return None;
        }
        let mut busy = self.busy(id);
        busy.request = Some(request.to_string());
        Some(busy)
    }

    fn answering_lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, HashSet<String>>> {
        self.answering.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A request of session `id` is being answered: it is busy until the guard drops.
    pub(crate) fn busy(self: &Arc<Self>, id: &str) -> Busy {
        let mut activity = self.activity_lock();
        let entry = activity
            .entry(id.to_string())
            .or_insert((Instant::now(), 0));
        entry.0 = Instant::now();
        entry.1 += 1;
        Busy {
            sessions: self.clone(),
            id: id.to_string(),
            request: None,
        }
    }

    fn activity_lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Instant, usize)>> {
        self.activity.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// End the sessions idle for `idle` or longer: rmcp's session, its calls, its run.
    async fn end_idle(&self, manager: &LocalSessionManager, idle: Duration) {
        let expired: Vec<String> = {
            let mut activity = self.activity_lock();
            let expired: Vec<String> = activity
                .iter()
                .filter(|(_, (last, in_flight))| *in_flight == 0 && last.elapsed() >= idle)
                .map(|(id, _)| id.clone())
                .collect();
            for id in &expired {
                activity.remove(id);
            }
            expired
        };
        for id in expired {
            eprintln!("corral mcp: session {id} idle for {idle:?} (--idle-timeout); ending it");
            self.ended(&id);
            let _ = manager.close_session(&id.as_str().into()).await;
        }
    }

    /// Run `opening` (a request that may open a session), and keep the token of the
    /// handler it opened under the session id `id_of` finds in its answer.
    pub(crate) async fn opening<T>(
        &self,
        opening: impl Future<Output = T>,
        id_of: impl FnOnce(&T) -> Option<String>,
    ) -> T {
        let (answer, token) = OPENED
            .scope(RefCell::new(None), async {
                let answer = opening.await;
                (answer, OPENED.with(|slot| slot.borrow_mut().take()))
            })
            .await;
        if let (Some(token), Some(id)) = (token, id_of(&answer)) {
            self.activity_lock().insert(id.clone(), (Instant::now(), 0));
            self.gone_lock().insert(id, token);
        }
        answer
    }

    /// The client of session `id` said it is done (`DELETE`): end what it left running.
    pub(crate) fn ended(&self, id: &str) {
        self.activity_lock().remove(id);
        self.answering_lock().remove(id);
        if let Some(token) = self.gone_lock().remove(id) {
            token.cancel();
        }
    }

    fn gone_lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.gone.lock().unwrap_or_else(|e| e.into_inner())
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
        let server = CorralServer::new(run, opened.approver, opened.notifier, opened.offer);
        let _ = OPENED.try_with(|slot| *slot.borrow_mut() = Some(server.gone_token()));
        Ok(server)
    }

    /// How many sessions hold a run now.
    pub(crate) fn live(&self) -> usize {
        self.lock()
            .iter()
            .filter(|run| Arc::strong_count(run) > 1)
            .count()
    }

    /// End the sessions idle for `idle`, and close the runs of ended sessions, every
    /// [`REAP_EVERY`], until the server stops.
    pub(crate) async fn reap(self: Arc<Self>, manager: Arc<LocalSessionManager>, idle: Duration) {
        loop {
            tokio::time::sleep(REAP_EVERY).await;
            self.end_idle(&manager, idle).await;
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
        for (_, token) in self.gone_lock().drain() {
            token.cancel();
        }
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
