//! The sandbox proxy's decisions: `sandbox_events` rows of `kind = 'network'`, one per
//! connection a sandboxed command asked corral's proxy for, with the host and port it
//! named, whether the allow-list let it through, and the bytes carried both ways.
//!
//! ```sql
//! SELECT step_id, host, port, allowed, bytes, detail FROM sandbox_events
//!  WHERE run_id = ?1 AND kind = 'network' ORDER BY id;
//! ```

use rusqlite::{Row, params};
use serde::Serialize;

use crate::insert::InsertRow as _;
use crate::{Store, TraceError};

/// The migration that gives `sandbox_events` the columns of a network decision.
pub(crate) const NETWORK_COLUMNS: &str = "
ALTER TABLE sandbox_events ADD COLUMN host TEXT;
ALTER TABLE sandbox_events ADD COLUMN port INTEGER;
ALTER TABLE sandbox_events ADD COLUMN allowed INTEGER;
ALTER TABLE sandbox_events ADD COLUMN bytes INTEGER;
";

/// One decision of the proxy to record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NewNetworkEvent {
    /// The run it belongs to.
    pub run_id: String,
    /// The step it belongs to, when it belongs to one.
    pub step_id: Option<i64>,
    /// When it happened, in ms since the Unix epoch.
    pub at_ms: i64,
    /// The sandbox mode of the run.
    pub mode: String,
    /// The name (or address) the command asked for, as it asked.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Whether the allow-list let it through.
    pub allowed: bool,
    /// Bytes carried, both directions together (0 when refused).
    pub bytes: u64,
    /// How it was asked (`http`, `connect`, `socks5`) and, when refused, why.
    pub detail: String,
}

/// A recorded decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NetworkEventRow {
    /// Its row id.
    pub id: i64,
    /// The run it belongs to.
    pub run_id: String,
    /// The step it belongs to, when it belongs to one.
    pub step_id: Option<i64>,
    /// When it happened, in ms since the Unix epoch.
    pub at_ms: i64,
    /// The host name asked for.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Whether the connection was allowed.
    pub allowed: bool,
    /// Bytes carried.
    pub bytes: u64,
    /// What happened, in words.
    pub detail: String,
}

fn row(r: &Row<'_>) -> rusqlite::Result<NetworkEventRow> {
    Ok(NetworkEventRow {
        id: r.get(0)?,
        run_id: r.get(1)?,
        step_id: r.get(2)?,
        at_ms: r.get(3)?,
        host: r.get(4)?,
        port: r.get(5)?,
        allowed: r.get(6)?,
        bytes: r.get::<_, i64>(7)?.max(0) as u64,
        detail: r.get(8)?,
    })
}

impl Store {
    /// Record one proxy decision; returns its id.
    pub fn record_network_event(&self, e: &NewNetworkEvent) -> Result<i64, TraceError> {
        self.conn
            .prepare_cached(
                "INSERT INTO sandbox_events (run_id, step_id, at_ms, mode, network, layer, level, \
                 detail, kind, host, port, allowed, bytes) \
                 VALUES (?1, ?2, ?3, ?4, 0, 'network proxy', ?5, ?6, 'network', ?7, ?8, ?9, ?10) \
                 RETURNING id",
            )
            .and_then(|mut s| {
                s.insert_row(
                    params![
                        e.run_id,
                        e.step_id,
                        e.at_ms,
                        e.mode,
                        if e.allowed { "allowed" } else { "refused" },
                        e.detail,
                        e.host,
                        e.port,
                        e.allowed,
                        i64::try_from(e.bytes).unwrap_or(i64::MAX)
                    ],
                    |r| r.get(0),
                )
            })
            .map_err(self.err("recording a network decision"))
    }

    /// A run's proxy decisions, in order.
    pub fn network_events(&self, run_id: &str) -> Result<Vec<NetworkEventRow>, TraceError> {
        self.conn
            .prepare_cached(
                "SELECT id, run_id, step_id, at_ms, host, port, allowed, bytes, detail \
                 FROM sandbox_events WHERE run_id = ?1 AND kind = 'network' ORDER BY id",
            )
            .and_then(|mut s| s.query_map([run_id], row)?.collect())
            .map_err(self.err("listing network decisions"))
    }
}
