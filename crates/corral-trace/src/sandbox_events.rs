//! `sandbox_events`: what the sandbox enforced for each call, layer by layer, and the
//! denials it is suspected of. One row per layer per call; a suspected denial is a row
//! with `layer = 'denial'` and `level = 'suspected'`.
//!
//! ```sql
//! SELECT step_id, mode, layer, level, detail FROM sandbox_events
//!  WHERE run_id = ?1 ORDER BY id;
//! ```

use rusqlite::{Row, params};
use serde::Serialize;

use crate::insert::InsertRow as _;
use crate::records::NewSandboxEvent;
use crate::{Store, TraceError};

/// A recorded sandbox event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxEventRow {
    /// Its row id.
    pub id: i64,
    /// The run it belongs to.
    pub run_id: String,
    /// The step it belongs to, when it belongs to one.
    pub step_id: Option<i64>,
    /// When it happened, in ms since the Unix epoch.
    pub at_ms: i64,
    /// The sandbox mode.
    pub mode: String,
    /// Whether the network was on.
    pub network: bool,
    /// The layer it concerns.
    pub layer: String,
    /// How fully the layer was enforced: `full`, `partial` or `none`.
    pub level: String,
    /// What happened, in words.
    pub detail: String,
}

fn row(r: &Row<'_>) -> rusqlite::Result<SandboxEventRow> {
    Ok(SandboxEventRow {
        id: r.get(0)?,
        run_id: r.get(1)?,
        step_id: r.get(2)?,
        at_ms: r.get(3)?,
        mode: r.get(4)?,
        network: r.get(5)?,
        layer: r.get(6)?,
        level: r.get(7)?,
        detail: r.get(8)?,
    })
}

impl Store {
    /// Record one sandbox event; returns its id.
    pub fn record_sandbox_event(&self, e: &NewSandboxEvent) -> Result<i64, TraceError> {
        self.conn
            .prepare_cached(
                "INSERT INTO sandbox_events (run_id, step_id, at_ms, mode, network, layer, level, detail) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
            )
            .and_then(|mut s| {
                s.insert_row(
                    params![
                        e.run_id, e.step_id, e.at_ms, e.mode, e.network, e.layer, e.level, e.detail
                    ],
                    |r| r.get(0),
                )
            })
            .map_err(self.err("recording a sandbox event"))
            .inspect(|_| crate::observe::notify(|o| o.sandbox_event(e, "layer")))
    }

    /// The sandbox events of one step, in order.
    pub fn sandbox_events(&self, step_id: i64) -> Result<Vec<SandboxEventRow>, TraceError> {
        self.conn
            .prepare_cached(
                "SELECT id, run_id, step_id, at_ms, mode, network, layer, level, detail \
                 FROM sandbox_events WHERE step_id = ?1 ORDER BY id",
            )
            .and_then(|mut s| s.query_map([step_id], row)?.collect())
            .map_err(self.err("listing sandbox events"))
    }
}
