//! The MCP handler: tools in, library calls on blocking threads, results out; and the
//! connection's life, from the handshake to the run's close.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use corral::tools::ToolAnswer;
use corral::{CallOptions, Cancel, Run};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::approver::{CallScope, ElicitApprover, with_scope};
use crate::notify::Notifier;
use crate::progress::{self, Meter};
use crate::rounds::{self, Issued, Round};
use crate::tools::{self, answer_result, error_result, error_text};

/// How long, after the client left, calls still running may take to end before the run
/// is closed without them.
const DRAIN: Duration = Duration::from_secs(10);

/// The MCP server for one [`Run`].
#[derive(Debug, Clone)]
pub struct CorralServer {
    run: Arc<Run>,
    approver: ElicitApprover,
    notifier: Notifier,
    tools: Arc<Vec<Tool>>,
    /// The `requestState` values handed out with questions on 2026-07-28.
    issued: Issued,
    /// Cancelled when the last clone of this handler goes: rmcp drops it when its client
    /// is gone (stdin closed, the HTTP session deleted or expired). A call still running
    /// then is ended at once ([`Cancel::cancel_now`]): nobody will read its answer.
    gone: CancellationToken,
    _gone_on_drop: Arc<tokio_util::sync::DropGuard>,
}

impl CorralServer {
    pub(crate) fn new(
        run: Arc<Run>,
        approver: ElicitApprover,
        notifier: Notifier,
        offer: corral::tools::Offer,
    ) -> Self {
        let tools = tools::list(offer, run.host_lines());
        let gone = CancellationToken::new();
        Self {
            run,
            approver,
            notifier,
            tools,
            issued: Issued::default(),
            _gone_on_drop: Arc::new(gone.clone().drop_guard()),
            gone,
        }
    }

    /// The token cancelled when this handler's client is gone: the HTTP front cancels it
    /// itself on the session's `DELETE` (rmcp drops the handler only once the calls still
    /// running have answered).
    pub(crate) fn gone_token(&self) -> CancellationToken {
        self.gone.clone()
    }

    /// Whether this server offers the tool `name`.
    fn offers(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
    }

    /// The scope a call for `request` runs in: its client, its cancellation, and on
    /// 2026-07-28 and later its input-required round (with the answers it brought, which
    /// must come with a `requestState` this server issued).
    fn scope_for(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallScope, McpError> {
        let round = if rounds::uses_rounds(context) {
            let answers = match (&request.input_responses, &request.request_state) {
                (None, _) => Default::default(),
                (Some(answers), Some(state)) if self.issued.redeem(state) => answers.clone(),
                (Some(_), _) => {
                    return Err(McpError::invalid_params(
                        "inputResponses must come back once, with the requestState corral \
                         issued for them; send the call without them to be asked again",
                        None,
                    ));
                }
            };
            Some(Arc::new(Round::new(answers)))
        } else {
            None
        };
        let elicitation = context
            .client_capabilities()
            .and_then(|caps| caps.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        Ok(CallScope {
            peer: context.peer.clone(),
            cancelled: context.ct.clone(),
            elicitation,
            round,
        })
    }

    /// What a call that ran in `scope` answers: its result, or, when it met a question
    /// its input-required round has no answer to, that question.
    fn respond(&self, scope_round: Option<&Round>, result: CallToolResult) -> CallToolResponse {
        match scope_round.and_then(|round| self.issued.input_required(round)) {
            Some(required) => CallToolResponse::InputRequired(required),
            None => result.into(),
        }
    }

    /// Run a call on a blocking thread, the request's cancellation (and the client's
    /// leaving) wired to the call's [`Cancel`], with progress reports for a tool that
    /// streams a command's output (`exec`, `shell`) when the client asked for them.
    async fn dispatch(
        &self,
        scope: CallScope,
        context: &RequestContext<RoleServer>,
        tool: &'static dyn corral::tools::Tool,
        arguments: Value,
    ) -> CallToolResponse {
        let cancel = match Cancel::new() {
            Ok(cancel) => cancel,
            Err(e) => return error_text(format!("corral failed to set up the call: {e}")).into(),
        };
        let meter = Meter::default();
        let reporter = context
            .meta
            .get_progress_token()
            .filter(|_| tool.streams())
            .map(|token| progress::report(context.peer.clone(), token, meter.clone()));
        let options = CallOptions {
            stdout: reporter.as_ref().map(|_| meter.tee()),
            stderr: reporter.as_ref().map(|_| meter.tee()),
            cancel: Some(cancel.clone()),
        };
        let watcher = tokio::spawn({
            let cancelled = scope.cancelled.clone();
            let gone = self.gone.clone();
            async move {
                tokio::select! {
                    () = gone.cancelled() => cancel.cancel_now(),
                    () = cancelled.cancelled() => {
                        cancel.cancel();
                        // The client may be leaving (a close cancels its requests
                        // first): then the call ends at once after all.
                        gone.cancelled().await;
                        cancel.cancel_now();
                    }
                }
            }
        });
        let response = self
            .blocking(scope, move |run, _| tool.call(run, arguments, options))
            .await;
        watcher.abort();
        drop(reporter);
        response
    }

    /// Run a call on a blocking thread and render its answer.
    async fn blocking(
        &self,
        scope: CallScope,
        call: impl FnOnce(&Run, &CancellationToken) -> corral::Result<ToolAnswer> + Send + 'static,
    ) -> CallToolResponse {
        let round = scope.round.clone();
        let run = self.run.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let cancelled = scope.cancelled.clone();
            with_scope(scope, || call(&run, &cancelled))
        })
        .await;
        let result = match joined {
            Ok(Ok(answer)) => answer_result(&answer),
            Ok(Err(error)) => error_result(&error),
            Err(e) => error_text(format!("corral failed while running the call: {e}")),
        };
        self.respond(round.as_deref(), result)
    }
}

impl ServerHandler for CorralServer {
    #[expect(
        deprecated,
        reason = "logging is how clients on 2025-11-25 and older show server events"
    )]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("corral", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
            .with_instructions(format!(
                "Runs commands in {} without a shell, bounded and traced: exec for one argv, shell for a command line, shell_start/shell_poll/shell_kill for background jobs; shell_start with tty: true, then shell_write/shell_keys/shell_screen, for a terminal session; output to read, search or page through what a result left out. {}",
                self.run.workspace().display(),
                corral::run_summary(&self.run)
            ))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    #[expect(
        deprecated,
        reason = "advertising logging obliges answering logging/setLevel"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.notifier.attach(&context.peer);
        self.notifier.set_threshold(request.level);
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if let Some(client) = context.client_info() {
            self.approver.set_client(&client.name);
        }
        self.notifier.attach(&context.peer);
        let name = request.name.as_ref();
        if !self.offers(name) {
            let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_ref()).collect();
            let message = format!(
                "unknown tool {name:?}: this server has {}",
                names.join(", ")
            );
            let (run, tool, said) = (self.run.clone(), name.to_string(), message.clone());
            let call_json =
                Value::Object(request.arguments.clone().unwrap_or_default()).to_string();
            // The trace keeps the call (a busy store takes its end later).
            let _ = tokio::task::spawn_blocking(move || {
                run.record_rejected_call(&tool, call_json, &said)
            })
            .await;
            return Err(McpError::invalid_params(message, None));
        }
        let scope = self.scope_for(&request, &context)?;
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let Some(tool) = corral::tools::find(name) else {
            return Err(McpError::internal_error(
                format!("tool {name:?} is offered but corral has no such tool"),
                None,
            ));
        };
        let response = self.dispatch(scope, &context, tool, arguments).await;
        Ok(response)
    }
}

/// Serve `run` over stdio until the client leaves or a signal arrives, then close it.
pub(crate) async fn serve(
    opened: crate::template::Opened,
    max_message: usize,
) -> Result<(), Error> {
    let crate::template::Opened {
        run,
        approver,
        notifier,
        offer,
    } = opened;
    let mut signals = Signals::new()?;
    let server = CorralServer::new(run.clone(), approver, notifier.clone(), offer);
    let client_gone = server.gone.clone();
    let transport = crate::stdio::LineTransport::stdio(max_message).on_close(client_gone.clone());
    eprintln!(
        "corral mcp: run {} in {}, trace {}",
        run.id(),
        run.workspace().display(),
        run.store_path().display()
    );
    let served = tokio::select! {
        served = server.serve(transport) => served,
        signal = signals.recv() => {
            eprintln!("corral mcp: {signal} before the handshake; closing the run");
            return close(run).await;
        }
    };
    let running = match served {
        Ok(running) => running,
        Err(e) => {
            let closed = close(run).await;
            return Err(Error::Handshake(e.to_string())).or(closed);
        }
    };
    notifier.attach(running.peer());
    let stop = running.cancellation_token();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    let outcome = tokio::select! {
        quit = &mut waiting => quit,
        signal = signals.recv() => {
            eprintln!("corral mcp: {signal}; ending every call and closing the run");
            stop.cancel();
            waiting.await
        }
    };
    // The client is gone (or was told to go): what it asked for is ended now.
    client_gone.cancel();
    let closed = close(run).await;
    outcome.map_err(|e| Error::Serve(e.to_string()))?;
    closed
}

/// Close `run` once the calls still holding it have ended (cancelled by the serving
/// loop's end), or after the drain time at the latest, so its end is always recorded.
async fn close(run: Arc<Run>) -> Result<(), Error> {
    let deadline = Instant::now() + DRAIN;
    while Arc::strong_count(&run) > 1 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if Arc::strong_count(&run) > 1 {
        eprintln!(
            "corral mcp: calls still running {} s after the client left; closing the run under them",
            DRAIN.as_secs()
        );
    }
    tokio::task::spawn_blocking(move || run.close())
        .await
        .map_err(|e| Error::Serve(e.to_string()))??;
    Ok(())
}

/// SIGTERM, SIGINT and SIGHUP, as one stream.
pub(crate) struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    pub(crate) fn new() -> Result<Self, Error> {
        use tokio::signal::unix::{SignalKind, signal};
        let install = |kind| {
            signal(kind).map_err(|source| Error::Io {
                context: "installing signal handlers",
                source,
            })
        };
        let signals = Self {
            term: install(SignalKind::terminate())?,
            int: install(SignalKind::interrupt())?,
            hup: install(SignalKind::hangup())?,
        };
        // The first signal is answered here; a second, or this answer stuck for a few
        // seconds, ends the process at once (where the binary installed that).
        corral_sys::escalation::answered_here(true);
        Ok(signals)
    }

    pub(crate) async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
            _ = self.hup.recv() => "SIGHUP",
        }
    }
}
