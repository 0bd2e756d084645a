//! Progress of a foreground call: a tee that counts what the command prints and keeps its
//! last line, and a task that reports it to the client at most twice a second.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::Peer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RoleServer;

/// The fastest rate progress is reported at.
pub(crate) const INTERVAL: Duration = Duration::from_millis(500);

/// The most of one line a progress message carries.
const LINE_MAX: usize = 160;

#[derive(Debug, Default)]
struct State {
    bytes: u64,
    /// The line being printed, up to `LINE_MAX` bytes.
    current: Vec<u8>,
    /// The last complete line that was not empty.
    last: Vec<u8>,
}

/// What a call printed so far, on both streams.
#[derive(Debug, Clone, Default)]
pub(crate) struct Meter(Arc<Mutex<State>>);

impl Meter {
    /// A writer for one stream that feeds this meter.
    pub fn tee(&self) -> Box<dyn Write + Send> {
        Box::new(Tee(self.0.clone()))
    }

    /// Bytes so far, and the last line printed.
    pub fn snapshot(&self) -> (u64, String) {
        let state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let line = if state.current.iter().any(|b| !b.is_ascii_whitespace()) {
            &state.current
        } else {
            &state.last
        };
        let line = String::from_utf8_lossy(line).trim_end().to_string();
        (state.bytes, line)
    }
}

struct Tee(Arc<Mutex<State>>);

impl Write for Tee {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        state.bytes += buf.len() as u64;
        let mut segments = buf.split(|&b| b == b'\n').peekable();
        while let Some(segment) = segments.next() {
            let room = LINE_MAX.saturating_sub(state.current.len());
            state
                .current
                .extend_from_slice(&segment[..segment.len().min(room)]);
            if segments.peek().is_some() {
                // The segment ended with a newline: the line is complete.
                if state.current.iter().any(|b| !b.is_ascii_whitespace()) {
                    state.last = std::mem::take(&mut state.current);
                } else {
                    state.current.clear();
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Report `meter` to `peer` under `token` every [`INTERVAL`] until the returned guard
/// is dropped. Progress is the elapsed time in seconds, so it always increases.
pub(crate) fn report(peer: Peer<RoleServer>, token: ProgressToken, meter: Meter) -> Reporter {
    let started = Instant::now();
    let task = tokio::spawn(async move {
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + INTERVAL, INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let elapsed = started.elapsed().as_secs_f64();
            let (bytes, line) = meter.snapshot();
            let mut message = format!("{elapsed:.1}s, {bytes} bytes");
            if !line.is_empty() {
                message.push_str(": ");
                message.push_str(&line);
            }
            let param =
                ProgressNotificationParam::new(token.clone(), elapsed).with_message(message);
            if peer.notify_progress(param).await.is_err() {
                break;
            }
        }
    });
    Reporter(task)
}

/// Stops the progress reports when dropped.
#[derive(Debug)]
pub(crate) struct Reporter(tokio::task::JoinHandle<()>);

impl Drop for Reporter {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_line_is_the_last_one_with_text() {
        let meter = Meter::default();
        let mut out = meter.tee();
        out.write_all(b"compiling a\ncompiling b\n\n").unwrap();
        assert_eq!(meter.snapshot(), (25, "compiling b".to_string()));
        out.write_all(b"test x ... ").unwrap();
        assert_eq!(meter.snapshot().1, "test x ...");
        out.write_all(&[b'y'; 1000]).unwrap();
        assert_eq!(meter.snapshot().1.len(), LINE_MAX);
    }
}
