//! A denied program's stub refused to run in the box: recorded as a refusal of the call's
//! step, so the trace shows it beside the refusals corral's own checks make.
//!
//! The stub writes one line naming its rule and exits 126 (see
//! `corral_sys::program_stubs`). After a sandboxed call, the lines a stream shows (its
//! head and tail) are looked through for the line of one of the run's denied programs;
//! the lines left out of the window are read back from the capture only when a stage
//! ended 126, as a stub's parent does when the stub was the last thing it ran. The line
//! is only what a stub says, and a command can print it too: a forged one only adds a
//! refusal to the trace, it lifts none.

use std::io::{BufRead, BufReader};

use corral_trace::NewPolicyEvent;

use crate::clock::now_ms;
use crate::ctx::Ctx;
use crate::outcome::{Outcome, Status, StreamReport};
use crate::sandbox::programs::DeniedProgram;

/// How much of a capture is read back for the lines a window left out.
const READ_BACK: u64 = 64 << 20;

impl Ctx {
    /// Record, once per program, each stub refusal `outcome`'s output reports.
    pub(crate) fn record_stub_refusals(&self, outcome: &Outcome) {
        let denied = &self.sandbox.programs.programs;
        if denied.is_empty() || outcome.sandbox.is_none() {
            return;
        }
        let ended_126 = outcome
            .stages
            .iter()
            .any(|s| s.status == Some(Status::Exited { code: 126 }))
            || outcome.status == (Status::Exited { code: 126 });
        let mut seen = vec![false; denied.len()];
        for stream in [&outcome.stderr, &outcome.stdout] {
            mark_shown(stream, denied, &mut seen);
            if ended_126 && stream.window.is_elided() {
                mark_captured(stream, denied, &mut seen);
            }
        }
        for (program, _) in denied.iter().zip(&seen).filter(|(_, seen)| **seen) {
            let event = NewPolicyEvent {
                run_id: self.id.clone(),
                step_id: Some(outcome.step.id),
                at_ms: now_ms(),
                act: "exec".into(),
                target: program.pattern.clone(),
                effect: "deny".into(),
                rule: Some(program.pattern.clone()),
                layer: Some(program.layer.clone()),
                origin: Some(program.origin.clone()),
                decision: "refused".into(),
                answered_by: Some("kernel".into()),
                reason: Some(format!(
                    "reported by the stub that covers it in the box: {}",
                    program.line
                )),
            };
            // The call ran and its result stands: a busy or full store loses this row,
            // not the result.
            let _ = self.store().record_policy_event(&event);
        }
    }
}

/// Mark the programs whose stub line `stream`'s window shows.
fn mark_shown(stream: &StreamReport, denied: &[DeniedProgram], seen: &mut [bool]) {
    let window = &stream.window;
    let failures = window.failures.iter().flat_map(|b| &b.lines);
    let lines = window
        .head
        .lines()
        .chain(window.tail.lines())
        .chain(failures.map(|l| l.text.as_str()));
    for line in lines {
        mark(line, denied, seen);
    }
}

/// Mark the programs whose stub line the capture holds, reading at most [`READ_BACK`].
fn mark_captured(stream: &StreamReport, denied: &[DeniedProgram], seen: &mut [bool]) {
    let Some(file) = stream
        .capture
        .as_ref()
        .and_then(|p| std::fs::File::open(p).ok())
    else {
        return;
    };
    let reader = BufReader::new(std::io::Read::take(file, READ_BACK));
    for line in reader.split(b'\n').map_while(Result::ok) {
        if let Ok(line) = std::str::from_utf8(&line) {
            mark(line, denied, seen);
        }
    }
}

fn mark(line: &str, denied: &[DeniedProgram], seen: &mut [bool]) {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if let Some(i) = denied.iter().position(|d| d.line == line) {
        seen[i] = true;
    }
}
