//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout, read by corral
//! itself so that every request gets an answer.
//!
//! A reader task reads stdin one line at a time, never keeping more than the message
//! limit of one line; [`crate::jsonrpc::classify`] decides whether the line goes on to
//! rmcp (through a channel of one) or is answered here. A line over the limit is not
//! kept: the id is read from its start, it is answered with an error naming the limit,
//! and the rest of it is skipped as it arrives. One writer task owns stdout; rmcp's
//! messages and the reader's answers both reach it as whole lines through one channel, so
//! no two messages ever interleave.
//!
//! A request whose id is already in flight (a client that reuses one before its answer
//! came) is not run: it is answered `-32600` with that id (rmcp pairs answers with
//! requests by id, so the two would take each other's). The ids in flight are those
//! forwarded and not yet answered; a cancelled request's stays, since its handler may
//! still be finishing and rmcp drops its answer unseen.

use std::collections::HashSet;
use std::io;
use std::sync::{Arc, Mutex};

use rmcp::model::{JsonRpcMessage, ProtocolVersion, RequestId, ServerResult};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::jsonrpc::{self, INVALID_REQUEST, Verdict};

/// The default limit on one incoming message, in bytes (newline excluded).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 8 << 20;

/// How many whole outgoing lines may wait for stdout before senders wait.
const OUTGOING: usize = 64;

/// The protocol revision the handshake settled on, once it has.
type Revision = Arc<Mutex<Option<ProtocolVersion>>>;

/// The ids of the requests forwarded and not yet answered.
type InFlight = Arc<Mutex<HashSet<RequestId>>>;

/// rmcp's view of the transport: parsed messages in, messages out as lines.
pub(crate) struct LineTransport {
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    outgoing: Option<mpsc::Sender<Vec<u8>>>,
    revision: Revision,
    in_flight: InFlight,
    /// Cancelled when stdin ends: the client is gone.
    closed: Option<tokio_util::sync::CancellationToken>,
}

impl LineTransport {
    /// Serve this process's stdin and stdout, with `max_message` bytes per message.
    pub(crate) fn stdio(max_message: usize) -> Self {
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        Self::new(stdin, stdout, max_message)
    }

    /// Read messages from `input`, write them to `output`: tasks on the current runtime.
    pub(crate) fn new<R, W>(input: R, output: W, max_message: usize) -> Self
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (to_rmcp, incoming) = mpsc::channel(1);
        let (outgoing, lines) = mpsc::channel(OUTGOING);
        let revision = Revision::default();
        let in_flight = InFlight::default();
        tokio::spawn(write_lines(output, lines));
        let reader = Reader {
            input: BufReader::new(input),
            max_message,
            line: Vec::new(),
            to_rmcp,
            answers: outgoing.clone(),
            revision: revision.clone(),
            in_flight: in_flight.clone(),
        };
        tokio::spawn(reader.run());
        Self {
            incoming,
            outgoing: Some(outgoing),
            revision,
            in_flight,
            closed: None,
        }
    }

    /// Cancel `token` when the client closes stdin, at once: rmcp itself waits a while
    /// for the answers of calls still running before it ends its handlers.
    pub(crate) fn on_close(mut self, token: tokio_util::sync::CancellationToken) -> Self {
        self.closed = Some(token);
        self
    }
}

impl Transport<RoleServer> for LineTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        if let JsonRpcMessage::Response(response) = &item
            && let ServerResult::InitializeResult(init) = &response.result
        {
            *self.revision.lock().unwrap_or_else(|e| e.into_inner()) =
                Some(init.protocol_version.clone());
        }
        let answered = match &item {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        if let Some(id) = answered {
            lock(&self.in_flight).remove(id);
        }
        let line = encode(&item, null_id(&self.revision));
        let outgoing = self.outgoing.clone();
        async move {
            let outgoing = outgoing.ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotConnected, "the transport is closed")
            })?;
            outgoing
                .send(line?)
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed"))
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let message = self.incoming.recv().await;
        if message.is_none()
            && let Some(closed) = &self.closed
        {
            closed.cancel();
        }
        message
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        self.outgoing = None;
        self.incoming.close();
        Ok(())
    }
}

fn lock(in_flight: &InFlight) -> std::sync::MutexGuard<'_, HashSet<RequestId>> {
    in_flight.lock().unwrap_or_else(|e| e.into_inner())
}

fn null_id(revision: &Revision) -> bool {
    jsonrpc::null_id_for(revision.lock().unwrap_or_else(|e| e.into_inner()).as_ref())
}

/// One outgoing message as a line. rmcp leaves out the `id` of an error that names no
/// request (the 2026-07-28 shape); the revisions before it want `"id": null`.
fn encode(item: &TxJsonRpcMessage<RoleServer>, null_id: bool) -> io::Result<Vec<u8>> {
    let mut line = match item {
        JsonRpcMessage::Error(error) if error.id.is_none() && null_id => {
            let mut value = serde_json::to_value(error)?;
            if let Value::Object(fields) = &mut value {
                fields.insert("id".into(), Value::Null);
            }
            serde_json::to_vec(&value)?
        }
        _ => serde_json::to_vec(item)?,
    };
    line.push(b'\n');
    Ok(line)
}

/// Write each line as it comes; flush when no other is waiting.
async fn write_lines<W: AsyncWrite + Unpin>(mut output: W, mut lines: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = lines.recv().await {
        let written = async {
            output.write_all(&line).await?;
            if lines.is_empty() {
                output.flush().await?;
            }
            io::Result::Ok(())
        };
        if let Err(e) = written.await {
            eprintln!("corral mcp: cannot write to stdout ({e}); the client is gone");
            return;
        }
    }
}

/// How one bounded read of a line ended.
enum Read {
    /// A whole line is in the buffer (or the input ended after a partial one).
    Line,
    /// The line is longer than the limit; the buffer holds its first `limit` bytes.
    Oversized,
    /// The input ended.
    Eof,
}

struct Reader<R> {
    input: BufReader<R>,
    max_message: usize,
    line: Vec<u8>,
    to_rmcp: mpsc::Sender<RxJsonRpcMessage<RoleServer>>,
    answers: mpsc::Sender<Vec<u8>>,
    revision: Revision,
    in_flight: InFlight,
}

impl<R: AsyncRead + Send + Unpin> Reader<R> {
    async fn run(mut self) {
        loop {
            let read = match read_line(&mut self.input, &mut self.line, self.max_message).await {
                Ok(read) => read,
                Err(e) => {
                    eprintln!("corral mcp: cannot read stdin ({e}); ending the session");
                    return;
                }
            };
            let delivered = match read {
                Read::Eof => return,
                Read::Line => self.deliver().await,
                Read::Oversized => self.refuse_oversized().await,
            };
            self.line.clear();
            if !delivered {
                return;
            }
        }
    }

    /// Hand the line in the buffer to rmcp or answer it; `false` once rmcp is gone.
    async fn deliver(&mut self) -> bool {
        let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        match jsonrpc::classify(line, null_id(&self.revision)) {
            Verdict::Forward(message) => {
                if let JsonRpcMessage::Request(request) = &*message
                    && !lock(&self.in_flight).insert(request.id.clone())
                {
                    let id = serde_json::to_value(&request.id).ok();
                    let said = "a request with this id is still being answered, or was \
                                cancelled: give each request an id of its own (this one was \
                                not run)";
                    let answer = jsonrpc::error_line(
                        id,
                        INVALID_REQUEST,
                        said,
                        None,
                        null_id(&self.revision),
                    );
                    eprintln!("corral mcp: refused a request whose id was in flight");
                    return self.answer(answer).await;
                }
                self.to_rmcp.send(*message).await.is_ok()
            }
            Verdict::Answer(answer) => {
                eprintln!(
                    "corral mcp: answered a malformed message ({} bytes) with an error",
                    line.len()
                );
                self.answer(answer).await
            }
            Verdict::Drop(reason) => {
                if let Some(reason) = reason {
                    eprintln!("corral mcp: dropped {reason}");
                }
                true
            }
        }
    }

    /// Answer a line over the limit (its start is in the buffer), then skip the rest.
    async fn refuse_oversized(&mut self) -> bool {
        let id = jsonrpc::leading_id(&self.line);
        let limit = self.max_message;
        eprintln!(
            "corral mcp: refused a message of more than {limit} bytes (id {}); skipping the rest of it",
            id.as_ref().map_or("unreadable".into(), Value::to_string)
        );
        let answer = jsonrpc::too_large_line(id, limit, null_id(&self.revision));
        self.line.clear();
        self.line.shrink_to(64 << 10);
        if !self.answer(answer).await {
            return false;
        }
        match skip_line(&mut self.input).await {
            Ok(skipped) => {
                eprintln!(
                    "corral mcp: the refused message was {} bytes",
                    limit as u64 + skipped
                );
                true
            }
            Err(e) => {
                eprintln!("corral mcp: cannot read stdin ({e}); ending the session");
                false
            }
        }
    }

    async fn answer(&mut self, mut line: Vec<u8>) -> bool {
        line.push(b'\n');
        self.answers.send(line).await.is_ok()
    }
}

/// Read one line into `line` (empty on entry), keeping at most `limit` bytes of it besides
/// the newline. On [`Read::Oversized`] the rest of the line is still unread.
async fn read_line<R: AsyncBufRead + Send + Unpin>(
    input: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Read> {
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(if line.is_empty() {
                Read::Eof
            } else {
                Read::Line
            });
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let content = newline.unwrap_or(available.len());
        let room = limit - line.len();
        if content > room {
            line.extend_from_slice(&available[..room]);
            input.consume(room);
            return Ok(Read::Oversized);
        }
        let take = newline.map_or(available.len(), |at| at + 1);
        line.extend_from_slice(&available[..take]);
        input.consume(take);
        if newline.is_some() {
            return Ok(Read::Line);
        }
    }
}

/// Skip input up to and including the next newline; how many bytes were skipped before it.
async fn skip_line<R: AsyncBufRead + Send + Unpin>(input: &mut R) -> io::Result<u64> {
    let mut skipped = 0u64;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(skipped);
        }
        match available.iter().position(|b| *b == b'\n') {
            Some(at) => {
                input.consume(at + 1);
                return Ok(skipped + at as u64);
            }
            None => {
                let n = available.len();
                skipped += n as u64;
                input.consume(n);
            }
        }
    }
}
