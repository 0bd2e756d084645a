//! `policy_events`: every refusal and every approver's answer, with the rule and layer
//! that produced it. "What was refused" is one query:
//!
//! ```sql
//! SELECT at_ms, act, target, rule, layer, origin, reason FROM policy_events
//!  WHERE decision IN ('refused', 'denied') ORDER BY id DESC;
//! ```

use rusqlite::{Row, params};
use serde::Serialize;

use crate::insert::InsertRow as _;
use crate::records::NewPolicyEvent;
use crate::{Store, TraceError};

/// A recorded decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyEventRow {
    /// Its row id.
    pub id: i64,
    /// The run it belongs to.
    pub run_id: String,
    /// The step it belongs to, when it belongs to one.
    pub step_id: Option<i64>,
    /// When it happened, in ms since the Unix epoch.
    pub at_ms: i64,
    /// What was checked: `exec`, `read`, `write` or `env`.
    pub act: String,
    /// What it was checked on: the argv or the path.
    pub target: String,
    /// What the policy said: `allow`, `ask` or `deny`.
    pub effect: String,
    /// The rule that decided, when one did.
    pub rule: Option<String>,
    /// The layer it concerns.
    pub layer: Option<String>,
    /// Where that rule was written (file and line, or flag).
    pub origin: Option<String>,
    /// What became of it: `refused`, `approved`, `approved_for_run`, `approved_cached`,
    /// `denied` (a person said no) or `aborted`.
    pub decision: String,
    /// Who answered, when someone was asked.
    pub answered_by: Option<String>,
    /// Why, in words.
    pub reason: Option<String>,
}

const COLUMNS: &str = "id, run_id, step_id, at_ms, act, target, effect, rule, layer, origin, decision, answered_by, reason";

fn row(r: &Row<'_>) -> rusqlite::Result<PolicyEventRow> {
    Ok(PolicyEventRow {
        id: r.get(0)?,
        run_id: r.get(1)?,
        step_id: r.get(2)?,
        at_ms: r.get(3)?,
        act: r.get(4)?,
        target: r.get(5)?,
        effect: r.get(6)?,
        rule: r.get(7)?,
        layer: r.get(8)?,
        origin: r.get(9)?,
        decision: r.get(10)?,
        answered_by: r.get(11)?,
        reason: r.get(12)?,
    })
}

impl Store {
    /// Record one policy decision; returns its id.
    pub fn record_policy_event(&self, e: &NewPolicyEvent) -> Result<i64, TraceError> {
        self.conn
            .prepare_cached(
                "INSERT INTO policy_events (run_id, step_id, at_ms, act, target, effect, rule, layer, \
                 origin, decision, answered_by, reason) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id",
            )
            .and_then(|mut s| {
                s.insert_row(
                    params![
                        e.run_id,
                        e.step_id,
                        e.at_ms,
                        e.act,
                        e.target,
                        e.effect,
                        e.rule,
                        e.layer,
                        e.origin,
                        e.decision,
                        e.answered_by,
                        e.reason
                    ],
                    |r| r.get(0),
                )
            })
            .map_err(self.err("recording a policy event"))
            .inspect(|_| crate::observe::notify(|o| o.policy_event(e)))
    }

    /// Policy events, newest first: of one run or of all; only refusals and denials when
    /// `refused_only`.
    pub fn policy_events(
        &self,
        run_id: Option<&str>,
        refused_only: bool,
        limit: usize,
    ) -> Result<Vec<PolicyEventRow>, TraceError> {
        let filter = if refused_only {
            "decision IN ('refused', 'denied', 'aborted')"
        } else {
            "1"
        };
        let limit = limit.min(i64::MAX as usize) as i64;
        let action = "listing policy events";
        match run_id {
            Some(run) => self
                .conn
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM policy_events WHERE run_id = ?1 AND {filter} ORDER BY id DESC LIMIT ?2"
                ))
                .and_then(|mut s| s.query_map(params![run, limit], row)?.collect())
                .map_err(self.err(action)),
            None => self
                .conn
                .prepare_cached(&format!("SELECT {COLUMNS} FROM policy_events WHERE {filter} ORDER BY id DESC LIMIT ?1"))
                .and_then(|mut s| s.query_map([limit], row)?.collect())
                .map_err(self.err(action)),
        }
    }
}
