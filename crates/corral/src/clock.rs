//! The one clock the trace is written with.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, as the trace stores times.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
