//! Announcements the client did not ask for: a background handle's exit, as a log message,
//! sent only at or above the level the client last asked for with `logging/setLevel`
//! (`info` until it asks).
// Logging is deprecated by SEP-2577 (protocol 2026-07-28); on 2025-11-25 and older it is
// how clients show server events, and a poll reports an exit on every revision.
#![expect(deprecated)]

use std::sync::{Arc, Mutex};

use corral::{RunBuilder, handle::HandleEvent, handle::HandleState};
use rmcp::Peer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::RoleServer;
use serde_json::Value;

/// Announces background handles' exits to the client as log messages.
#[derive(Debug, Clone)]
pub(crate) struct Notifier {
    runtime: tokio::runtime::Handle,
    peer: Arc<Mutex<Option<Peer<RoleServer>>>>,
    /// The least severe level the client wants to be sent.
    threshold: Arc<Mutex<LoggingLevel>>,
}

impl Notifier {
    pub fn new(runtime: tokio::runtime::Handle) -> Self {
        Self {
            runtime,
            peer: Arc::default(),
            threshold: Arc::new(Mutex::new(LoggingLevel::Info)),
        }
    }

    /// Send only messages at `level` or more severe from now on (`logging/setLevel`).
    pub fn set_threshold(&self, level: LoggingLevel) {
        *self.threshold.lock().unwrap_or_else(|e| e.into_inner()) = level;
    }

    /// Announce to `peer` from now on (the first one seen stays).
    pub fn attach(&self, peer: &Peer<RoleServer>) {
        let mut slot = self.peer.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(peer.clone());
        }
    }

    /// Send `data` to the client as a log message at `level` from logger `corral`, unless
    /// the client asked for more severe ones only. Callable from any thread; never blocks.
    pub fn announce(&self, level: LoggingLevel, data: Value) {
        if severity(level) < severity(*self.threshold.lock().unwrap_or_else(|e| e.into_inner())) {
            return;
        }
        let Some(peer) = self.peer.lock().unwrap_or_else(|e| e.into_inner()).clone() else {
            return;
        };
        self.runtime.spawn(async move {
            let mut param = LoggingMessageNotificationParam::new(level, data);
            param.logger = Some("corral".to_string());
            let _ = peer.notify_logging_message(param).await;
        });
    }
}

/// Have `builder`'s run announce every handle's exit through `notifier`.
pub(crate) fn watch_handles(builder: RunBuilder, notifier: Notifier) -> RunBuilder {
    builder.on_handle_exit(move |event: HandleEvent| {
        // An exit the program chose is news; one that ended it otherwise may need a look.
        let level = match &event.state {
            HandleState::Exited {
                status: corral::Status::Exited { code: 0 },
            }
            | HandleState::Killed
            | HandleState::RunEnded => LoggingLevel::Info,
            HandleState::Exited { .. } => LoggingLevel::Notice,
            _ => LoggingLevel::Warning,
        };
        let how = match &event.state {
            HandleState::Exited { status } => match status {
                corral::Status::Exited { code } => format!("exited {code}"),
                corral::Status::Signaled { signal } => format!("ended by signal {signal}"),
                other => other.outcome().to_string(),
            },
            HandleState::Killed => "killed".to_string(),
            HandleState::RunEnded => "ended with the session".to_string(),
            other => other.word().to_string(),
        };
        let mut data = serde_json::to_value(&event).unwrap_or_default();
        if let Value::Object(fields) = &mut data {
            fields.insert(
                "message".into(),
                Value::String(format!(
                    "handle {} ({}) {how}: shell_poll it for the rest of its output",
                    event.handle, event.line
                )),
            );
        }
        notifier.announce(level, data);
    })
}

/// RFC 5424's order, least severe first.
fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
