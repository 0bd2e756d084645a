//! Approvals through the MCP client: when the policy says *ask*, the person behind the
//! client is asked with an elicitation form, from the blocking thread the call runs on.

use std::cell::RefCell;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use corral::{approve::Approval, approve::ApprovalRequest, approve::Approver};
use rmcp::Peer;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use rmcp::service::{RoleServer, ServiceError};
use tokio_util::sync::CancellationToken;

use crate::APPROVAL_TIMEOUT;
use crate::rounds::Round;

/// The request a blocking thread is serving: whom to ask, how, and when to stop waiting.
#[derive(Clone)]
pub(crate) struct CallScope {
    pub peer: Peer<RoleServer>,
    pub cancelled: CancellationToken,
    /// Whether the client said it can show a person a form.
    pub elicitation: bool,
    /// On 2026-07-28 and later: the input-required round this call is, instead of asking
    /// in the middle of it.
    pub round: Option<Arc<Round>>,
}

thread_local! {
    static CURRENT: RefCell<Option<CallScope>> = const { RefCell::new(None) };
}

/// Run `f` with `scope` as the request this thread serves, so an approval asked while
/// `f` runs goes to that request's client and gives up when that request is cancelled.
pub(crate) fn with_scope<T>(scope: CallScope, f: impl FnOnce() -> T) -> T {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            CURRENT.with(|c| c.borrow_mut().take());
        }
    }
    CURRENT.with(|c| *c.borrow_mut() = Some(scope));
    let _reset = Reset;
    f()
}

/// Asks the MCP client's user; recorded as `mcp-client:<client name>`.
#[derive(Debug, Clone)]
pub(crate) struct ElicitApprover {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    runtime: tokio::runtime::Handle,
    name: OnceLock<String>,
}

impl ElicitApprover {
    pub fn new(runtime: tokio::runtime::Handle) -> Self {
        Self {
            inner: Arc::new(Inner {
                runtime,
                name: OnceLock::new(),
            }),
        }
    }

    /// Name the client, once it has said who it is.
    pub fn set_client(&self, client_name: &str) {
        let _ = self.inner.name.set(format!("mcp-client:{client_name}"));
    }
}

/// A refusal saying why no person could be asked. What would let the request through
/// without asking is the gate's to say (the narrowest rule, or that none can), and the
/// sandbox's for a rerun or a domain: it is in the result's text once.
fn deny(why: &str, _request: &ApprovalRequest) -> Approval {
    Approval::Deny(Some(why.to_string()))
}

impl Approver for ElicitApprover {
    fn name(&self) -> &str {
        self.inner.name.get().map_or("mcp-client", String::as_str)
    }

    fn approve(&self, request: &ApprovalRequest, workspace: &Path) -> Approval {
        let Some(scope) = CURRENT.with(|c| c.borrow().clone()) else {
            return deny(
                "approval needed, but no MCP client is waiting for this call",
                request,
            );
        };
        if !scope.elicitation {
            return deny(
                "approval needed, but this MCP client cannot ask a person (it does not support elicitation)",
                request,
            );
        }
        let message = request.message(workspace);
        let schema = match ElicitationSchema::builder()
            .optional_bool_with("for_session", |b| {
                b.title("Also allow exactly this again for the rest of the session")
                    .with_default(false)
            })
            .build()
        {
            Ok(schema) => schema,
            Err(e) => {
                return deny(
                    &format!("approval needed, but the question could not be built ({e})"),
                    request,
                );
            }
        };
        let key = Round::key(&message);
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: schema,
        };
        if let Some(round) = &scope.round {
            return match round.answer(&key) {
                Some(answer) => match serde_json::from_value::<ElicitResult>(answer.clone()) {
                    Ok(result) => decided(&result),
                    Err(e) => deny(
                        &format!("the answer to the approval question could not be read ({e})"),
                        request,
                    ),
                },
                None => {
                    round.ask(key, params);
                    Approval::Deny(Some(
                        "the MCP client was asked for approval (input required); the call runs \
                         when it is sent again with the answer"
                            .into(),
                    ))
                }
            };
        }
        let peer = scope.peer.clone();
        let answer = self.inner.runtime.block_on(async move {
            tokio::select! {
                answer = peer.create_elicitation_with_timeout(params, Some(APPROVAL_TIMEOUT)) => Some(answer),
                () = scope.cancelled.cancelled() => None,
            }
        });
        match answer {
            None => Approval::Deny(Some(
                "the call was cancelled while waiting for approval".into(),
            )),
            Some(Ok(result)) => decided(&result),
            Some(Err(ServiceError::Timeout { .. })) => deny(
                &format!(
                    "no answer to the approval question within {} s",
                    APPROVAL_TIMEOUT.as_secs()
                ),
                request,
            ),
            Some(Err(e)) => deny(&format!("the MCP client could not be asked ({e})"), request),
        }
    }
}

/// What a person's answer to the approval form decides.
fn decided(result: &ElicitResult) -> Approval {
    match result.action {
        ElicitationAction::Accept => {
            let for_session = result
                .content
                .as_ref()
                .and_then(|c| c.get("for_session"))
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false);
            if for_session {
                Approval::ApproveForRun
            } else {
                Approval::Approve
            }
        }
        ElicitationAction::Decline => {
            Approval::Deny(Some("the person declined it in the MCP client".into()))
        }
        _ => Approval::Deny(Some(
            "the person dismissed the approval question in the MCP client".into(),
        )),
    }
}
