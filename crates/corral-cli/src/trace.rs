//! `corral trace`: what ran, what it printed.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use corral::trace::{Retention, RunRow, StepRow, Store};

use crate::args::{OutputArgs, Stream, TraceCommand};
use crate::exit::Done;

pub fn run(store: Option<PathBuf>, command: TraceCommand) -> anyhow::Result<Done> {
    let path = match store {
        Some(p) => p,
        None => corral::default_store_path()
            .context("no trace location: set CORRAL_STORE or HOME, or pass --store")?,
    };
    // Reading needs no write access (a read-only store or filesystem can be read);
    // only pruning writes.
    let store = match command {
        TraceCommand::Prune { .. } => Store::open_existing(&path)?,
        _ => Store::open_read_only(&path)?,
    };
    // A command's bytes and a model's argv, printed to a person's terminal, must not
    // drive it (see `corral::person`).
    let stdout = std::io::stdout();
    let on_terminal = std::io::IsTerminal::is_terminal(&stdout);
    let mut out = corral::person::Escaped::new(stdout.lock(), on_terminal);
    match command {
        TraceCommand::Runs { limit, json } => {
            let runs = store.runs(limit)?;
            if json {
                serde_json::to_writer_pretty(&mut out, &runs)?;
                writeln!(out)?;
            } else {
                if runs.is_empty() {
                    writeln!(out, "no runs in {}", path.display())?;
                }
                for run in &runs {
                    writeln!(out, "{}", run_line(run))?;
                }
            }
        }
        TraceCommand::Show { run, json } => crate::trace_show::show(&store, run, json, &mut out)?,
        TraceCommand::Steps { run, limit, json } => {
            let steps = store.steps(run.as_deref(), limit)?;
            if json {
                serde_json::to_writer_pretty(&mut out, &steps)?;
                writeln!(out)?;
            } else {
                if steps.is_empty() {
                    writeln!(out, "no steps")?;
                }
                for step in &steps {
                    writeln!(out, "{}", step_line(step))?;
                }
            }
        }
        TraceCommand::Refused { run, limit, json } => {
            let events = store.policy_events(run.as_deref(), true, limit)?;
            let events: Vec<Refusal> = events
                .into_iter()
                .map(|event| Refusal::of(&store, event))
                .collect();
            if json {
                let rows = events
                    .iter()
                    .map(Refusal::json)
                    .collect::<Result<Vec<_>, _>>()?;
                serde_json::to_writer_pretty(&mut out, &rows)?;
                writeln!(out)?;
            } else {
                if events.is_empty() {
                    writeln!(out, "nothing refused or declined")?;
                }
                for r in &events {
                    let e = &r.event;
                    let rule = match (&e.rule, &e.layer, &e.origin) {
                        (Some(rule), Some(layer), Some(origin)) => {
                            format!("rule {rule:?} in layer {layer}, {origin}")
                        }
                        _ => "default".to_string(),
                    };
                    writeln!(
                        out,
                        "{}  {}  {:<8} {:<5} {}  ({rule}; by {}; {})",
                        when(e.at_ms),
                        short(&e.run_id),
                        e.decision,
                        e.act,
                        e.target,
                        e.answered_by.as_deref().unwrap_or("policy"),
                        r.asked_by_words(),
                    )?;
                }
            }
        }
        TraceCommand::Handles { run, json } => {
            let run = match run {
                Some(id) => id,
                None => newest_run(&store, &path)?,
            };
            let handles = store.handles(&run)?;
            if json {
                serde_json::to_writer_pretty(&mut out, &handles)?;
                writeln!(out)?;
            } else {
                if handles.is_empty() {
                    writeln!(out, "no handles in run {run}")?;
                }
                for h in &handles {
                    let how = match (h.how.as_deref(), h.exit_code, h.signal) {
                        (Some("exited"), Some(code), _) => format!("exit {code}"),
                        (Some("exited"), _, Some(sig)) => format!("signal {sig}"),
                        (Some(how), _, _) => how.to_string(),
                        (None, _, _) => "running".into(),
                    };
                    writeln!(
                        out,
                        "{:>3}  {}  {:<10} {:<18} {}",
                        h.handle,
                        when(h.started_at_ms),
                        how,
                        h.containment,
                        h.line
                    )?;
                }
            }
        }
        TraceCommand::Output(args) => {
            return output(&store, &path, args, &mut out).map(Done::Status);
        }
        TraceCommand::Prune {
            keep_runs,
            max_bytes,
            undo_keep_runs,
            undo_keep_days,
        } => {
            let report = store.prune(&Retention {
                keep_runs,
                max_capture_bytes: max_bytes,
            })?;
            writeln!(
                out,
                "pruned the captures of {} runs, {} bytes freed",
                report.runs_pruned, report.bytes_freed
            )?;
            let undo = corral::undo::prune(
                &store,
                &corral::undo::store_dir(&path),
                &corral::undo::UndoRetention {
                    keep_runs: undo_keep_runs,
                    keep_for: std::time::Duration::from_secs(undo_keep_days * 24 * 3600),
                },
            )?;
            writeln!(
                out,
                "gave up the undo records of {} runs; removed {} stored files no record names, {} bytes",
                undo.runs, undo.blobs, undo.bytes
            )?;
            let held = corral::HeldStore::beside_trace(&path)
                .prune_runs_not_in(&|run| !matches!(store.run(run), Ok(None)))?;
            if held > 0 {
                writeln!(
                    out,
                    "removed {held} held changes of runs no longer in the trace"
                )?;
            }
            if undo.going > 0 {
                writeln!(
                    out,
                    "kept every stored file: {} runs are still going, and what their calls are \
                     recording cannot be read from here; prune again once they end",
                    undo.going
                )?;
            }
        }
    }
    Ok(Done::Status(0))
}

/// `corral trace output`: a capture whole, as it was printed, or the part asked for,
/// numbered like `grep -n`.
fn output(
    store: &Store,
    path: &std::path::Path,
    args: OutputArgs,
    out: &mut impl Write,
) -> anyhow::Result<i32> {
    let bad = |message: String| anyhow::Error::new(corral::Error::invalid_request(message));
    let file = match (args.step, args.handle) {
        (Some(step), _) => {
            let Some(row) = store.step(step)? else {
                return Err(bad(format!(
                    "no step {step} in {}: list steps with `corral trace steps`",
                    path.display()
                )));
            };
            let (file, bytes) = match args.stream {
                Stream::Stdout => (row.stdout_path, row.stdout_bytes),
                Stream::Stderr => (row.stderr_path, row.stderr_bytes),
            };
            match file {
                _ if row.captures_pruned => {
                    return Err(bad(format!(
                        "the captures of step {step} were pruned by retention; its observation is still in `corral trace steps --json`"
                    )));
                }
                None if bytes == 0 => return Ok(0),
                None => bail!("step {step} has no capture file for {:?}", args.stream),
                Some(file) => file,
            }
        }
        (None, Some(handle)) => {
            let run = match args.run {
                Some(id) => id,
                None => newest_run(store, path)?,
            };
            match store.handle(&run, handle)? {
                Some(row) => match row.capture_path {
                    Some(file) => file,
                    None => return Ok(0),
                },
                None => {
                    return Err(bad(format!(
                        "run {run} has no handle {handle}: list them with `corral trace handles --run {run}`"
                    )));
                }
            }
        }
        (None, None) => return Err(bad("name a step, or a --handle".into())),
    };
    let request = corral::OutputRequest {
        lines: args.lines,
        bytes: args.bytes,
        head: args.head,
        tail: args.tail,
        grep: args.grep,
        context: args.context,
        ..corral::OutputRequest::default()
    };
    let whole = request == corral::OutputRequest::default();
    let open = || std::fs::File::open(&file);
    if whole {
        let mut f = open().with_context(|| format!("opening the capture {file}"))?;
        std::io::copy(&mut f, out)?;
        return Ok(0);
    }
    let selection = request.selection()?;
    let excerpt = corral::trace::reader::read(open, &selection, usize::MAX)
        .with_context(|| format!("reading the capture {file}"))?;
    out.write_all(excerpt.text.as_bytes())?;
    // grep's convention: a search that matched nothing exits 1.
    Ok(i32::from(excerpt.matches == Some(0)))
}

fn newest_run(store: &Store, path: &std::path::Path) -> anyhow::Result<String> {
    match store.runs(1)?.into_iter().next() {
        Some(r) => Ok(r.id),
        None => bail!("the trace at {} has no runs yet", path.display()),
    }
}

fn run_line(run: &RunRow) -> String {
    format!(
        "{}  {}  {} steps  {}  {}",
        run.id,
        when(run.started_at_ms),
        run.steps,
        run.ended_how.as_deref().unwrap_or("running"),
        run.workspace
    )
}

fn step_line(step: &StepRow) -> String {
    let argv: Option<Vec<String>> = step
        .argv_json
        .as_deref()
        .and_then(|j| serde_json::from_str(j).ok());
    let what = match argv {
        Some(argv) => corral::line::display_argv(&argv),
        None => step.call_json.clone(),
    };
    let what = clipped(&what, SHOWN_CALL);
    let how = match (step.outcome.as_deref(), step.exit_code, step.signal) {
        (Some("exited"), Some(code), _) => format!("exit {code}"),
        (Some("signaled"), _, Some(sig)) => format!("signal {sig}"),
        (Some(other), _, _) => other.to_string(),
        (None, _, _) => "running".into(),
    };
    format!(
        "{:>6}  {}#{:<3} {:<7} {:<12} {:>7}  {}",
        step.id,
        short(&step.run_id),
        step.seq,
        step.tool,
        how,
        step.duration_ms
            .map_or_else(String::new, |ms| format!("{ms}ms")),
        what
    )
}

/// Characters of a step's command shown on its line; `--json` has all of it.
const SHOWN_CALL: usize = 300;

/// `text` cut to `n` characters, saying how many more there were.
fn clipped(text: &str, n: usize) -> String {
    match text.char_indices().nth(n) {
        None => text.to_string(),
        Some((at, _)) => format!(
            "{}… (+{} bytes; --json shows all)",
            &text[..at],
            text.len() - at
        ),
    }
}

fn short(run_id: &str) -> &str {
    run_id.get(..12).unwrap_or(run_id)
}

/// Milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS` UTC.
pub(crate) fn when(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil-from-days (proleptic Gregorian), after Howard Hinnant's algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A refusal, with who asked for what was refused: the verification gate (its phases are
/// the person's, or the workspace's) or a call of the client's (a model's, mostly).
struct Refusal {
    event: corral::trace::PolicyEventRow,
    /// `gate` for a gate phase, `call` for a client's (a model's) call, `run` for none.
    asked_by: &'static str,
    /// The tool of the step it belongs to: `exec`, `shell`, `verify`, …
    tool: Option<String>,
}

impl Refusal {
    fn of(store: &Store, event: corral::trace::PolicyEventRow) -> Self {
        let tool = event
            .step_id
            .and_then(|id| store.step(id).ok().flatten())
            .map(|step| step.tool);
        let asked_by = match tool.as_deref() {
            Some("verify") => "gate",
            Some(_) => "call",
            None => "run",
        };
        Self {
            event,
            asked_by,
            tool,
        }
    }

    /// `asked by the gate`, `asked by a call (exec)`, `asked by the run`.
    fn asked_by_words(&self) -> String {
        match (self.asked_by, &self.tool) {
            ("call", Some(tool)) => format!("asked by a call ({tool})"),
            (who, _) => format!("asked by the {who}"),
        }
    }

    /// The event's row, with `asked_by` and `tool` beside its columns.
    fn json(&self) -> serde_json::Result<serde_json::Value> {
        let mut row = serde_json::to_value(&self.event)?;
        row["asked_by"] = self.asked_by.into();
        row["tool"] = self.tool.clone().into();
        Ok(row)
    }
}
