//! `model_turns`: every turn of a task run's model, in a table of its own (what was sent,
//! what came back, tokens, cost when the provider says), and the `kind` of a
//! `sandbox_events` row, which tells a verification gate's rows from a call's layers.
//!
//! Tool calls stay in `steps`, so "what ran" is still one query; a gate's phases are
//! `sandbox_events` rows of `kind = 'gate_output'` (what a failing phase printed) and
//! `kind = 'gate_phase_failed'` (which phase failed, and how).
//!
//! ```sql
//! SELECT turn, provider, model, input_tokens, output_tokens, cost_usd
//!   FROM model_turns WHERE run_id = ?1 ORDER BY turn;
//! SELECT step_id, kind, detail FROM sandbox_events
//!  WHERE run_id = ?1 AND kind LIKE 'gate_%' ORDER BY id;
//! ```

use rusqlite::{Row, params};
use serde::Serialize;

use crate::insert::InsertRow as _;
use crate::records::NewModelTurn;
use crate::records::NewSandboxEvent;
use crate::sandbox_events::SandboxEventRow;
use crate::{Store, TraceError};

/// The migration that adds `model_turns` and `sandbox_events.kind`. Rows recorded before
/// it are a call's sandbox layers: their kind is `layer`.
pub(crate) const MODEL_TURNS_AND_GATE_KIND: &str = "
CREATE TABLE model_turns (
    id            INTEGER PRIMARY KEY,
    run_id        TEXT    NOT NULL REFERENCES runs (id),
    turn          INTEGER NOT NULL,
    at_ms         INTEGER NOT NULL,
    duration_ms   INTEGER NOT NULL,
    provider      TEXT    NOT NULL,
    model         TEXT    NOT NULL,
    request_json  TEXT    NOT NULL,
    response_json TEXT,
    input_tokens  INTEGER,
    output_tokens INTEGER,
    cost_usd      REAL,
    error         TEXT
);
CREATE UNIQUE INDEX model_turns_by_run ON model_turns (run_id, turn);

ALTER TABLE sandbox_events ADD COLUMN kind TEXT NOT NULL DEFAULT 'layer';
CREATE INDEX sandbox_events_by_kind ON sandbox_events (kind, id);
";

/// A recorded model turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelTurnRow {
    /// Its row id.
    pub id: i64,
    /// The run it belongs to.
    pub run_id: String,
    /// The turn's number within the run, from 1.
    pub turn: i64,
    /// When it happened, in ms since the Unix epoch.
    pub at_ms: i64,
    /// How long it took, in ms.
    pub duration_ms: i64,
    /// The model provider.
    pub provider: String,
    /// The model.
    pub model: String,
    /// What was sent (new since the turn before), as JSON.
    pub request_json: String,
    /// What came back, as JSON, when something did.
    pub response_json: Option<String>,
    /// Tokens sent to the model, when the provider said.
    pub input_tokens: Option<u64>,
    /// Tokens the model produced, when the provider said.
    pub output_tokens: Option<u64>,
    /// What the turn cost in US dollars, when known.
    pub cost_usd: Option<f64>,
    /// Why it failed, when it did.
    pub error: Option<String>,
}

fn turn_row(r: &Row<'_>) -> rusqlite::Result<ModelTurnRow> {
    let tokens = |i| -> rusqlite::Result<Option<u64>> {
        Ok(r.get::<_, Option<i64>>(i)?
            .map(|n| u64::try_from(n).unwrap_or(0)))
    };
    Ok(ModelTurnRow {
        id: r.get(0)?,
        run_id: r.get(1)?,
        turn: r.get(2)?,
        at_ms: r.get(3)?,
        duration_ms: r.get(4)?,
        provider: r.get(5)?,
        model: r.get(6)?,
        request_json: r.get(7)?,
        response_json: r.get(8)?,
        input_tokens: tokens(9)?,
        output_tokens: tokens(10)?,
        cost_usd: r.get(11)?,
        error: r.get(12)?,
    })
}

fn kinded_row(r: &Row<'_>) -> rusqlite::Result<(SandboxEventRow, String)> {
    Ok((
        SandboxEventRow {
            id: r.get(0)?,
            run_id: r.get(1)?,
            step_id: r.get(2)?,
            at_ms: r.get(3)?,
            mode: r.get(4)?,
            network: r.get(5)?,
            layer: r.get(6)?,
            level: r.get(7)?,
            detail: r.get(8)?,
        },
        r.get(9)?,
    ))
}

fn clamp(n: Option<u64>) -> Option<i64> {
    n.map(|n| i64::try_from(n).unwrap_or(i64::MAX))
}

impl Store {
    /// Record one model turn; returns its id.
    pub fn record_model_turn(&self, t: &NewModelTurn) -> Result<i64, TraceError> {
        self.conn
            .prepare_cached(
                "INSERT INTO model_turns (run_id, turn, at_ms, duration_ms, provider, model, \
                 request_json, response_json, input_tokens, output_tokens, cost_usd, error) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id",
            )
            .and_then(|mut s| {
                s.insert_row(
                    params![
                        t.run_id,
                        t.turn,
                        t.at_ms,
                        t.duration_ms,
                        t.provider,
                        t.model,
                        t.request_json,
                        t.response_json,
                        clamp(t.input_tokens),
                        clamp(t.output_tokens),
                        t.cost_usd,
                        t.error
                    ],
                    |r| r.get(0),
                )
            })
            .map_err(self.err("recording a model turn"))
            .inspect(|_| crate::observe::notify(|o| o.model_turn(t)))
    }

    /// A run's model turns, in order.
    pub fn model_turns(&self, run_id: &str) -> Result<Vec<ModelTurnRow>, TraceError> {
        self.conn
            .prepare_cached(
                "SELECT id, run_id, turn, at_ms, duration_ms, provider, model, request_json, \
                 response_json, input_tokens, output_tokens, cost_usd, error \
                 FROM model_turns WHERE run_id = ?1 ORDER BY turn",
            )
            .and_then(|mut s| s.query_map([run_id], turn_row)?.collect())
            .map_err(self.err("listing model turns"))
    }

    /// Record a sandbox event of `kind` (`gate_output`, `gate_phase_failed`, …; a call's
    /// layers are `layer`); returns its id.
    pub fn record_sandbox_event_of_kind(
        &self,
        e: &NewSandboxEvent,
        kind: &str,
    ) -> Result<i64, TraceError> {
        self.conn
            .prepare_cached(
                "INSERT INTO sandbox_events (run_id, step_id, at_ms, mode, network, layer, level, detail, kind) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
            )
            .and_then(|mut s| {
                s.insert_row(
                    params![
                        e.run_id, e.step_id, e.at_ms, e.mode, e.network, e.layer, e.level,
                        e.detail, kind
                    ],
                    |r| r.get(0),
                )
            })
            .map_err(self.err("recording a sandbox event"))
            .inspect(|_| crate::observe::notify(|o| o.sandbox_event(e, kind)))
    }

    /// A run's sandbox events with their kind, in order; `kind_prefix` narrows them
    /// (`"gate_"` for a gate's rows).
    pub fn sandbox_events_of_run(
        &self,
        run_id: &str,
        kind_prefix: &str,
    ) -> Result<Vec<(SandboxEventRow, String)>, TraceError> {
        self.conn
            .prepare_cached(
                "SELECT id, run_id, step_id, at_ms, mode, network, layer, level, detail, kind \
                 FROM sandbox_events WHERE run_id = ?1 AND substr(kind, 1, length(?2)) = ?2 \
                 ORDER BY id",
            )
            .and_then(|mut s| {
                s.query_map(params![run_id, kind_prefix], kinded_row)?
                    .collect()
            })
            .map_err(self.err("listing sandbox events"))
    }
}
