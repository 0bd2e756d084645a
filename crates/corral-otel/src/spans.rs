//! The trace's records as spans: a run is a root span (so one trace per run), each step a
//! child of its run, each background handle a child of the step that started it (or of
//! the run), a task run's model turns children of the run. Policy decisions and sandbox
//! layers are events on the step they were made for (or on the run).
//!
//! Spans stay open in memory between the records that begin and end them; ending one hands
//! it to the batch processor's bounded queue and returns at once.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use corral_trace::{
    NewHandle, NewModelTurn, NewPolicyEvent, NewRun, NewSandboxEvent, NewStep, Observer, StepDone,
    StepIds,
};
use opentelemetry::trace::{
    Span as _, SpanContext, SpanKind, Status, TraceContextExt, Tracer as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{Span, Tracer};

/// The longest string attribute; past it the value is cut and ends in `…`.
pub(crate) const MAX_ATTRIBUTE: usize = 4096;

/// What a step's span carries beyond the span itself.
struct StepSpan {
    span: Span,
    started_at_ms: i64,
    /// `layer:level` of each sandbox layer, in the order recorded.
    layers: Vec<String>,
}

#[derive(Default)]
struct Open {
    runs: HashMap<String, Span>,
    steps: HashMap<i64, StepSpan>,
    handles: HashMap<(String, u32), Span>,
}

/// The observer that turns trace records into spans.
pub(crate) struct Spans {
    tracer: Tracer,
    /// Put the text the model was shown (and a gate's output) in spans.
    output: bool,
    open: Mutex<Open>,
}

impl std::fmt::Debug for Spans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spans")
            .field("output", &self.output)
            .finish()
    }
}

fn at(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// `s`, cut at a character boundary to at most [`MAX_ATTRIBUTE`] bytes.
pub(crate) fn cut(s: &str) -> String {
    if s.len() <= MAX_ATTRIBUTE {
        return s.to_string();
    }
    let mut end = MAX_ATTRIBUTE - '…'.len_utf8();
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

fn text(key: &'static str, value: &str) -> KeyValue {
    KeyValue::new(key, cut(value))
}

fn parent(sc: &SpanContext) -> Context {
    // The parent is a span of this process (its context says not remote).
    Context::new().with_remote_span_context(sc.clone())
}

impl Spans {
    pub(crate) fn new(tracer: Tracer, output: bool) -> Spans {
        Spans {
            tracer,
            output,
            open: Mutex::new(Open::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        // A panic elsewhere while holding it leaves plain maps: keep exporting.
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn start(
        &self,
        name: String,
        kind: SpanKind,
        start_ms: i64,
        attributes: Vec<KeyValue>,
        parent_cx: Option<&SpanContext>,
    ) -> Span {
        let builder = self
            .tracer
            .span_builder(name)
            .with_kind(kind)
            .with_start_time(at(start_ms))
            .with_attributes(attributes);
        match parent_cx {
            Some(sc) => builder.start_with_context(&self.tracer, &parent(sc)),
            // A new trace: never the caller's current context.
            None => builder.start_with_context(&self.tracer, &Context::new()),
        }
    }

    /// The run's span context, opening the run's span when its start was not seen (a run
    /// begun before the exporter, or reopened).
    fn run_context(&self, open: &mut Open, run_id: &str, at_ms: i64) -> SpanContext {
        if let Some(s) = open.runs.get(run_id) {
            return s.span_context().clone();
        }
        let span = self.start(
            "corral run".into(),
            SpanKind::Server,
            at_ms,
            vec![text("corral.run.id", run_id)],
            None,
        );
        let sc = span.span_context().clone();
        open.runs.insert(run_id.to_string(), span);
        sc
    }

    /// End every span still open: the process is going away.
    pub(crate) fn end_all(&self, now: SystemTime) {
        let mut open = self.lock();
        let unfinished = KeyValue::new("corral.unfinished", true);
        for (_, mut h) in open.handles.drain() {
            h.set_attribute(unfinished.clone());
            h.end_with_timestamp(now);
        }
        for (_, mut s) in open.steps.drain() {
            s.span.set_attribute(unfinished.clone());
            s.span.end_with_timestamp(now);
        }
        for (_, mut r) in open.runs.drain() {
            r.set_attribute(unfinished.clone());
            r.end_with_timestamp(now);
        }
    }
}

impl Observer for Spans {
    fn run_begun(&self, run: &NewRun) {
        let span = self.start(
            "corral run".into(),
            SpanKind::Server,
            run.started_at_ms,
            vec![
                text("corral.run.id", &run.id),
                text("corral.workspace", &run.workspace),
                KeyValue::new("process.pid", i64::from(run.pid)),
            ],
            None,
        );
        if let Some(mut old) = self.lock().runs.insert(run.id.clone(), span) {
            old.end();
        }
    }

    fn run_ended(&self, run_id: &str, ended_at_ms: i64, how: &str) {
        let span = self.lock().runs.remove(run_id);
        if let Some(mut span) = span {
            span.set_attribute(text("corral.run.ended_how", how));
            if matches!(how, "error" | "panic") {
                span.set_status(Status::error(format!("run ended: {how}")));
            }
            span.end_with_timestamp(at(ended_at_ms));
        }
    }

    fn step_begun(&self, ids: StepIds, step: &NewStep) {
        let mut open = self.lock();
        let run = self.run_context(&mut open, &step.run_id, step.started_at_ms);
        let span = self.start(
            format!("corral {}", step.tool),
            SpanKind::Internal,
            step.started_at_ms,
            vec![
                text("corral.run.id", &step.run_id),
                KeyValue::new("corral.step.id", ids.id),
                KeyValue::new("corral.step.seq", ids.seq),
                text("corral.tool", &step.tool),
                text("corral.call", &step.call_json),
                text("corral.cwd", &step.cwd),
            ],
            Some(&run),
        );
        open.steps.insert(
            ids.id,
            StepSpan {
                span,
                started_at_ms: step.started_at_ms,
                layers: Vec::new(),
            },
        );
    }

    fn step_finished(&self, step_id: i64, done: &StepDone) {
        let Some(mut step) = self.lock().steps.remove(&step_id) else {
            return;
        };
        let span = &mut step.span;
        if done.argv_json != "null" {
            span.set_attribute(text("corral.argv", &done.argv_json));
        }
        span.set_attribute(text("corral.outcome", &done.outcome));
        span.set_attribute(KeyValue::new("corral.wall_ms", done.duration_ms));
        if let Some(code) = done.exit_code {
            span.set_attribute(KeyValue::new("process.exit.code", i64::from(code)));
        }
        if let Some(sig) = done.signal {
            span.set_attribute(KeyValue::new("corral.signal", i64::from(sig)));
        }
        span.set_attribute(KeyValue::new("corral.timed_out", done.timed_out));
        let bytes = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        span.set_attribute(KeyValue::new(
            "corral.stdout_bytes",
            bytes(done.stdout_bytes),
        ));
        span.set_attribute(KeyValue::new(
            "corral.stderr_bytes",
            bytes(done.stderr_bytes),
        ));
        if let Some(c) = &done.containment {
            span.set_attribute(text("corral.containment", c));
        }
        if !step.layers.is_empty() {
            span.set_attribute(KeyValue::new(
                "corral.sandbox.layers",
                opentelemetry::Value::Array(
                    step.layers
                        .iter()
                        .map(|l| opentelemetry::StringValue::from(l.clone()))
                        .collect::<Vec<_>>()
                        .into(),
                ),
            ));
        }
        if self.output {
            span.set_attribute(text("corral.output", &done.observation));
        }
        match &done.error {
            Some(e) => {
                span.set_attribute(text("corral.error", e));
                span.set_status(Status::error(cut(e)));
            }
            None if done.outcome == "error" => span.set_status(Status::error("error")),
            None => {}
        }
        // The row's own clock: its start plus its recorded wall time.
        span.end_with_timestamp(at(step
            .started_at_ms
            .saturating_add(done.duration_ms.max(0))));
    }

    fn policy_event(&self, e: &NewPolicyEvent) {
        let mut attrs = vec![
            text("corral.policy.act", &e.act),
            text("corral.policy.target", &e.target),
            text("corral.policy.effect", &e.effect),
            text("corral.policy.decision", &e.decision),
        ];
        let optional = [
            ("corral.policy.rule", &e.rule),
            ("corral.policy.layer", &e.layer),
            ("corral.policy.origin", &e.origin),
            ("corral.policy.answered_by", &e.answered_by),
            ("corral.policy.reason", &e.reason),
        ];
        attrs.extend(
            optional
                .into_iter()
                .filter_map(|(k, v)| v.as_deref().map(|v| text(k, v))),
        );
        let mut open = self.lock();
        let name = "corral.policy";
        if let Some(step) = e.step_id.and_then(|id| open.steps.get_mut(&id)) {
            step.span.add_event_with_timestamp(name, at(e.at_ms), attrs);
        } else if let Some(run) = open.runs.get_mut(&e.run_id) {
            run.add_event_with_timestamp(name, at(e.at_ms), attrs);
        }
    }

    fn sandbox_event(&self, e: &NewSandboxEvent, kind: &str) {
        let mut attrs = vec![
            text("corral.sandbox.kind", kind),
            text("corral.sandbox.mode", &e.mode),
            KeyValue::new("corral.sandbox.network", e.network),
            text("corral.sandbox.layer", &e.layer),
            text("corral.sandbox.level", &e.level),
        ];
        // A gate's output rows hold command output: only when asked.
        if kind != "gate_output" || self.output {
            attrs.push(text("corral.sandbox.detail", &e.detail));
        }
        let mut open = self.lock();
        let name = "corral.sandbox";
        if let Some(step) = e.step_id.and_then(|id| open.steps.get_mut(&id)) {
            if kind == "layer" && e.layer != "denial" {
                step.layers.push(format!("{}:{}", e.layer, e.level));
                step.span
                    .set_attribute(text("corral.sandbox.mode", &e.mode));
                step.span
                    .set_attribute(KeyValue::new("corral.sandbox.network", e.network));
            }
            step.span.add_event_with_timestamp(name, at(e.at_ms), attrs);
        } else if let Some(run) = open.runs.get_mut(&e.run_id) {
            run.add_event_with_timestamp(name, at(e.at_ms), attrs);
        }
    }

    fn model_turn(&self, t: &NewModelTurn) {
        let mut open = self.lock();
        let run = self.run_context(&mut open, &t.run_id, t.at_ms);
        let mut attrs = vec![
            text("corral.run.id", &t.run_id),
            KeyValue::new("corral.turn", t.turn),
            text("gen_ai.provider.name", &t.provider),
            text("gen_ai.request.model", &t.model),
        ];
        let tokens = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        if let Some(n) = t.input_tokens {
            attrs.push(KeyValue::new("gen_ai.usage.input_tokens", tokens(n)));
        }
        if let Some(n) = t.output_tokens {
            attrs.push(KeyValue::new("gen_ai.usage.output_tokens", tokens(n)));
        }
        if let Some(c) = t.cost_usd {
            attrs.push(KeyValue::new("corral.cost_usd", c));
        }
        let mut span = self.start(
            format!("chat {}", t.model),
            SpanKind::Client,
            t.at_ms,
            attrs,
            Some(&run),
        );
        drop(open);
        if let Some(e) = &t.error {
            span.set_attribute(text("corral.error", e));
            span.set_status(Status::error(cut(e)));
        }
        span.end_with_timestamp(at(t.at_ms.saturating_add(t.duration_ms)));
    }

    fn handle_started(&self, h: &NewHandle) {
        let mut open = self.lock();
        let parent_cx = match h.step_id.and_then(|id| open.steps.get(&id)) {
            Some(step) => step.span.span_context().clone(),
            None => self.run_context(&mut open, &h.run_id, h.started_at_ms),
        };
        let span = self.start(
            "corral handle".into(),
            SpanKind::Internal,
            h.started_at_ms,
            vec![
                text("corral.run.id", &h.run_id),
                KeyValue::new("corral.handle.id", i64::from(h.handle)),
                text("corral.line", &h.line),
                text("corral.argv", &h.stages_json),
                text("corral.containment", &h.containment),
            ],
            Some(&parent_cx),
        );
        if let Some(mut old) = open.handles.insert((h.run_id.clone(), h.handle), span) {
            old.end();
        }
    }

    fn handle_ended(
        &self,
        run_id: &str,
        handle: u32,
        ended_at_ms: i64,
        how: &str,
        exit_code: Option<i32>,
        signal: Option<i32>,
    ) {
        let span = self.lock().handles.remove(&(run_id.to_string(), handle));
        if let Some(mut span) = span {
            span.set_attribute(text("corral.handle.how", how));
            if let Some(code) = exit_code {
                span.set_attribute(KeyValue::new("process.exit.code", i64::from(code)));
            }
            if let Some(sig) = signal {
                span.set_attribute(KeyValue::new("corral.signal", i64::from(sig)));
            }
            span.end_with_timestamp(at(ended_at_ms));
        }
    }
}
