//! Approvals on the 2026-07-28 revision, which has no requests from the server in the
//! middle of a call: the call that needs a person ends with an `InputRequiredResult`
//! holding the question (an elicitation form) and a `requestState` this server issued; the
//! client asks its person and sends the same `tools/call` again with the answer in
//! `inputResponses`. The second round is checked from the start like the first, and the
//! answer is taken only for the question it was given to.
//!
//! Each question has a key derived from its text, so a call that meets two questions (an
//! approval, then a rerun the sandbox made necessary) gets one round for each, and an
//! answer cannot stand in for a different question.

use std::collections::{BTreeMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, InputRequest, InputRequiredResult, InputResponses,
    ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleServer};

/// Whether `context`'s request speaks a revision that asks through input-required rounds.
pub(crate) fn uses_rounds(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// The input-required round state of one `tools/call`: the answers it came with, and the
/// question it met that has none.
#[derive(Debug, Default)]
pub(crate) struct Round {
    answers: InputResponses,
    asked: Mutex<Option<(String, ElicitRequestParams)>>,
}

impl Round {
    pub fn new(answers: InputResponses) -> Self {
        Self {
            answers,
            asked: Mutex::new(None),
        }
    }

    /// The key a question is known by in `inputRequests` and `inputResponses`.
    pub fn key(message: &str) -> String {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        message.hash(&mut hasher);
        format!("corral-approval-{:016x}", hasher.finish())
    }

    /// The client's answer to the question known by `key`, if this round carries one.
    pub fn answer(&self, key: &str) -> Option<&serde_json::Value> {
        self.answers.get(key)
    }

    /// Keep `params` as the question this call needs answered (the first one met).
    pub fn ask(&self, key: String, params: ElicitRequestParams) {
        let mut asked = self.asked.lock().unwrap_or_else(|e| e.into_inner());
        asked.get_or_insert((key, params));
    }

    fn take_asked(&self) -> Option<(String, ElicitRequestParams)> {
        self.asked.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// The `requestState` values this server issued and has not seen back.
#[derive(Debug, Default, Clone)]
pub(crate) struct Issued {
    inner: Arc<IssuedInner>,
}

#[derive(Debug, Default)]
struct IssuedInner {
    next: AtomicU64,
    open: Mutex<HashSet<String>>,
}

/// How many questions may wait for their second round at once; the oldest are forgotten.
const MAX_OPEN: usize = 256;

impl Issued {
    /// The `InputRequiredResult` for the question `round` met, if it met one.
    pub fn input_required(&self, round: &Round) -> Option<InputRequiredResult> {
        let (key, params) = round.take_asked()?;
        let state = format!(
            "corral-round-{}-{:x}",
            self.inner.next.fetch_add(1, Ordering::Relaxed),
            std::process::id()
        );
        {
            let mut open = self.inner.open.lock().unwrap_or_else(|e| e.into_inner());
            if open.len() >= MAX_OPEN {
                open.clear();
            }
            open.insert(state.clone());
        }
        let requests =
            BTreeMap::from([(key, InputRequest::Elicitation(ElicitRequest::new(params)))]);
        Some(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// Take back a `requestState` this server issued: `false` when it did not, or it was
    /// used already.
    pub fn redeem(&self, state: &str) -> bool {
        self.inner
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(state)
    }
}
