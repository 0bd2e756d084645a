//! What a job's end becomes for the model: the one builder of a call's [`Outcome`], from
//! its [`Ended`] and its streams (captured whole, shown within the output budget).

use crate::capture::{self, Captured};
use crate::ctx::Ctx;
use crate::outcome::{Outcome, StepRef, StreamReport};
use crate::output::{Source, StreamName};
use crate::render;

use super::Ended;

/// What a result's frame around its streams takes of the output budget, at most: the
/// status line, a sandbox line that lists every layer, the stream labels, the stages line
/// of a short pipeline, a host-shell note; and the room a client that hands the model
/// the result as JSON (pydantic-ai) takes for its fields and escapes (`\n`, `\u2713`).
pub(crate) const RESULT_FRAME: usize = 1536;

impl Ctx {
    /// The outcome of a call whose streams were captured to `captured`, showing `budget`
    /// bytes of them.
    pub(crate) fn outcome(
        &self,
        step: StepRef,
        ended: Ended,
        captured: [Captured; 2],
        budget: usize,
    ) -> Outcome {
        let [out, err] = captured;
        // The budget is what the model reads: the result's frame (its status line, the
        // sandbox line, the stream labels, a host-shell note) comes out of it too.
        let shown = budget.saturating_sub(RESULT_FRAME.min(budget / 8));
        let (out_budget, err_budget) = capture::split_budget(
            shown,
            capture::shown_need(&out, shown),
            capture::shown_need(&err, shown),
        );
        let streams = [report(out, out_budget), report(err, err_budget)];
        self.outcome_of(
            step,
            ended,
            streams,
            Source::Step(step.id, StreamName::Stdout),
        )
    }

    /// The one way a call's end becomes its [`Outcome`]: the observation rendered from
    /// `streams` (read on from `source`), with the policy's notices.
    pub(crate) fn outcome_of(
        &self,
        step: StepRef,
        ended: Ended,
        streams: [StreamReport; 2],
        source: Source,
    ) -> Outcome {
        let [stdout, stderr] = streams;
        let mut observation = render::observation(
            &ended.status,
            ended.wall,
            &ended.stages,
            [&stdout, &stderr],
            ended.leftovers,
            source,
            &self.pointer(),
        );
        for notice in self.gate.policy.notices() {
            observation.push_str("\n[policy] ");
            observation.push_str(notice);
        }
        Outcome {
            step,
            status: ended.status,
            stages: ended.stages,
            wall: ended.wall,
            stdout,
            stderr,
            leftovers_ended: ended.leftovers,
            containment: ended.containment,
            sandbox: None,
            observation,
        }
    }
}

fn report(captured: Captured, budget: usize) -> StreamReport {
    let window = capture::window(&captured, budget).unwrap_or_else(|e| capture::Window {
        head: format!("[output could not be read back from its capture file: {e}]"),
        ..capture::Window::default()
    });
    StreamReport {
        bytes: captured.bytes,
        lines: captured.lines,
        window,
        capture: captured.path,
        capture_error: captured.error,
    }
}
