//! The Streamable HTTP transport: `corral mcp --listen ADDR:PORT` serves MCP at `/mcp`.
//!
//! Each MCP session (revisions 2025-03-26 to 2025-11-25; a 2024-11-05 client that speaks
//! Streamable HTTP is served the same way) is one [`corral::Run`], with its own trace rows,
//! handles and approvals: a handle of one session does not exist in another. A session
//! ends when the client deletes it, after `--idle-timeout` without a request, or when the
//! server stops; its run is closed then, and every process it started is ended. The
//! sessionless 2026-07-28 revision is not offered: a request without a session is refused
//! unless it is `initialize` (see [`front`]).
//!
//! Who may connect: a bearer token is required on every request, loopback included (a
//! box with the network on reaches loopback too); on loopback, when none is given, corral
//! keeps one in its state directory (see [`token`]); off loopback one must be given. A token in the URL is refused. `Origin` is checked against
//! DNS rebinding (on loopback, only loopback origins; elsewhere, only `--allow-origin`
//! ones), and on loopback the `Host` too. TLS is served directly with `--tls-cert` and
//! `--tls-key` (rustls); without them the server speaks plain HTTP, which off loopback
//! belongs behind a TLS-terminating reverse proxy. The startup log says which.
//!
//! How an answer travels: a request whose only message back is its answer gets it as one
//! `application/json` body; one that streams first (progress, an elicitation, a long
//! call's keep-alive) gets an SSE stream (see [`answer`]).

mod answer;
mod front;
mod sessions;
mod tls;
mod token;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use front::MCP_PATH;
pub use token::{MIN_CHARS as MIN_TOKEN_CHARS, TOKEN_VAR, TokenSource};

use crate::{Error, ServeOptions};

/// How long a session may go without a request before it ends (`--idle-timeout`).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// How many sessions may be live at once (`--max-sessions`).
pub const DEFAULT_MAX_SESSIONS: usize = 64;

/// How `corral mcp --listen` serves.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address to listen on, `ADDR:PORT` (port 0: any free port).
    pub listen: SocketAddr,
    /// A session without a request for this long ends, and its processes with it.
    pub idle_timeout: Duration,
    /// The most sessions live at once; a new one beyond it is refused with `503`.
    pub max_sessions: usize,
    /// Where the bearer token every request must carry comes from.
    pub token: TokenSource,
    /// A certificate chain and its private key (PEM) to serve HTTPS with.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Browser origins allowed besides loopback ones (`https://app.example.com:443`).
    pub allowed_origins: Vec<String>,
}

impl HttpOptions {
    /// Listen on `listen` with the defaults for everything else.
    pub fn new(listen: SocketAddr) -> Self {
        Self {
            listen,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_sessions: DEFAULT_MAX_SESSIONS,
            token: TokenSource::StateDir,
            tls: None,
            allowed_origins: Vec::new(),
        }
    }
}

/// Serve `options`' workspace over Streamable HTTP until SIGTERM, SIGINT or SIGHUP; every
/// session's run is closed before this returns. Builds its own runtime.
pub fn serve_http_blocking(options: ServeOptions, http: HttpOptions) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| Error::Io {
            context: "starting the async runtime",
            source,
        })?;
    let result = runtime.block_on(serve_http(options, http));
    runtime.shutdown_timeout(Duration::from_millis(500));
    result
}

/// [`serve_http_blocking`] inside a multi-threaded tokio runtime the caller owns.
pub async fn serve_http(options: ServeOptions, http: HttpOptions) -> Result<(), Error> {
    let loopback = http.listen.ip().is_loopback();
    // A token made here would reach no remote client: off loopback the operator hands one
    // out on purpose.
    if !loopback && matches!(http.token, TokenSource::StateDir) {
        return Err(Error::Config(format!(
            "listening on {} (not loopback) needs a bearer token given on purpose: give --token-file FILE or set CORRAL_MCP_TOKEN",
            http.listen
        )));
    }
    let tls = match &http.tls {
        Some((cert, key)) => Some(tls::acceptor(cert, key)?),
        None => None,
    };
    let mut template = crate::template::RunTemplate::new(&options)?;
    let token = token::resolve(&http.token, &template.box_reach())?;
    if let TokenSource::File(file) = &http.token {
        template.hide(file);
    }
    let max_message = options
        .max_message_bytes
        .unwrap_or(crate::DEFAULT_MAX_MESSAGE_BYTES);
    let sessions = sessions::Sessions::new(template.clone(), tokio::runtime::Handle::current());
    let stop = CancellationToken::new();

    // The idle timeout is kept by `sessions` (see there): rmcp's counts only messages.
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = None;
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_max_request_body_bytes(max_message);
    config = if loopback {
        config.with_allowed_origins(
            ["http", "https"]
                .iter()
                .flat_map(|scheme| {
                    ["localhost", "127.0.0.1", "[::1]"].map(|host| format!("{scheme}://{host}:*"))
                })
                .chain(http.allowed_origins.iter().cloned()),
        )
    } else {
        // The token keeps strangers out; Host names whatever the operator put in front.
        config
            .disable_allowed_hosts()
            .with_allowed_origins(http.allowed_origins.iter().cloned())
            .enforce_origin_validation()
    };
    let factory = {
        let sessions = sessions.clone();
        move || sessions.open()
    };
    let manager = Arc::new(manager);
    let front = Arc::new(front::Front {
        rmcp: StreamableHttpService::new(factory, manager.clone(), config),
        manager,
        sessions: sessions.clone(),
        token: token.secret.clone(),
        max_message,
        max_sessions: http.max_sessions,
    });

    let listener = TcpListener::bind(http.listen)
        .await
        .map_err(|source| Error::Io {
            context: "binding the listen address",
            source,
        })?;
    let bound = listener.local_addr().map_err(|source| Error::Io {
        context: "reading the bound address",
        source,
    })?;
    // No box this process builds may connect to it (see `corral::sandbox::listeners`).
    corral::sandbox::listeners::keep_out(bound.port());
    announce(&http, bound, tls.is_some(), &options, &template, &token);
    let reaper = tokio::spawn(
        sessions
            .clone()
            .reap(front.manager.clone(), http.idle_timeout),
    );
    let mut signals = crate::server::Signals::new()?;
    let mut refusals = AcceptRefusals::default();
    let signal = loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors (or memory), every accept fails at once until a
                    // connection ends: wait a little instead of spinning, say it seldom.
                    refusals.note(&e);
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            signal = signals.recv() => break signal,
        };
        // A streamed answer (progress, an elicitation, the GET stream) leaves as small
        // writes, its end as one of its own: without this, a client that delays its ACKs
        // (Node's) waits ~40 ms for each write that follows another.
        if let Err(e) = stream.set_nodelay(true) {
            eprintln!("corral mcp: setting TCP_NODELAY for {peer} failed: {e}");
        }
        tokio::spawn(connection(
            stream,
            peer,
            tls.clone(),
            front.clone(),
            stop.clone(),
        ));
    };
    eprintln!("corral mcp: {signal}; ending every session and closing its run");
    stop.cancel();
    drop(listener);
    reaper.abort();
    drop(front);
    sessions.close_all().await;
    Ok(())
}

/// How long a connection may take to send a request's headers (and so to start one on a
/// kept-alive connection), or to finish its TLS handshake: a client that trickles bytes, or
/// opens connections and sends nothing, holds a descriptor no longer than this.
const HEADER_TIMEOUT: Duration = Duration::from_secs(20);

/// The wait after a failed `accept` before the next.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Failed accepts, said at most once a second with how many there were.
#[derive(Default)]
struct AcceptRefusals {
    last_said: Option<std::time::Instant>,
    unsaid: u64,
}

impl AcceptRefusals {
    fn note(&mut self, e: &std::io::Error) {
        self.unsaid += 1;
        if self
            .last_said
            .is_some_and(|at| at.elapsed() < Duration::from_secs(1))
        {
            return;
        }
        let also = match self.unsaid {
            1 => String::new(),
            n => format!(" ({n} failures since the last report)"),
        };
        eprintln!("corral mcp: accepting a connection failed: {e}{also}");
        self.last_said = Some(std::time::Instant::now());
        self.unsaid = 0;
    }
}

/// Serve one connection, TLS first when configured.
async fn connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    tls: Option<tokio_rustls::TlsAcceptor>,
    front: Arc<front::Front>,
    stop: CancellationToken,
) {
    let service = service_fn(move |request| {
        let front = front.clone();
        async move { Ok::<_, std::convert::Infallible>(front.handle(request).await) }
    });
    let served = match tls {
        Some(acceptor) => match tokio::time::timeout(HEADER_TIMEOUT, acceptor.accept(stream)).await
        {
            Ok(Ok(stream)) => serve_io(TokioIo::new(stream), service, stop).await,
            Ok(Err(e)) => {
                eprintln!("corral mcp: TLS handshake with {peer} failed: {e}");
                return;
            }
            Err(_) => {
                eprintln!("corral mcp: TLS handshake with {peer} took over {HEADER_TIMEOUT:?}");
                return;
            }
        },
        None => serve_io(TokioIo::new(stream), service, stop).await,
    };
    if let Err(e) = served
        && !e.is_incomplete_message()
    {
        eprintln!("corral mcp: connection from {peer}: {e}");
    }
}

async fn serve_io<I, S>(io: I, service: S, stop: CancellationToken) -> Result<(), hyper::Error>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::HttpService<hyper::body::Incoming, ResBody = front::Body> + Send,
    S::Future: Send + 'static,
{
    let connection = http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(io, service);
    tokio::pin!(connection);
    tokio::select! {
        served = connection.as_mut() => served,
        () = stop.cancelled() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    }
}

/// Say where the server listens (the first line, for scripts that start it on port 0),
/// what each session's run gets, who may connect and how it is encrypted.
fn announce(
    http: &HttpOptions,
    bound: SocketAddr,
    tls: bool,
    options: &ServeOptions,
    template: &crate::template::RunTemplate,
    token: &token::Token,
) {
    let scheme = if tls { "https" } else { "http" };
    eprintln!("corral mcp: listening on {scheme}://{bound}{MCP_PATH}");
    template.announce();
    eprintln!(
        "corral mcp: {}; clients send it as Authorization: Bearer TOKEN",
        corral::person::escaped(&token.whence, corral::person::Lines::Keep)
    );
    let who = "a bearer token is required on every request, loopback included";
    let how = if tls {
        "TLS served directly (rustls)".to_string()
    } else if bound.ip().is_loopback() {
        "plain HTTP on loopback".to_string()
    } else {
        "plain HTTP: put a TLS-terminating reverse proxy in front, or give --tls-cert and --tls-key"
            .to_string()
    };
    eprintln!(
        "corral mcp: {who}; {how}; one run per session, idle sessions end after {} s, at most {} sessions, {} bytes per message",
        http.idle_timeout.as_secs(),
        http.max_sessions,
        options
            .max_message_bytes
            .unwrap_or(crate::DEFAULT_MAX_MESSAGE_BYTES)
    );
}
