//! `corral trace show`: a whole run as it happened: its model turns, its tool calls (each
//! with the files it added, modified and deleted) and its gate, in order.

use std::io::Write;

use anyhow::bail;
use corral::trace::Store;
use serde_json::json;

pub fn show(
    store: &Store,
    run: Option<String>,
    json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let row = match run {
        Some(id) => match store.run(&id)? {
            Some(r) => r,
            None => bail!(corral::Error::invalid_request(format!(
                "there is no run {id} in {}: list runs with `corral trace runs`",
                store.path().display()
            ))),
        },
        None => match store.runs(1)?.into_iter().next() {
            Some(r) => r,
            None => bail!("the trace at {} has no runs yet", store.path().display()),
        },
    };
    let turns = store.model_turns(&row.id)?;
    let mut steps = store.steps(Some(&row.id), usize::MAX >> 1)?;
    steps.reverse();
    let gate = store.sandbox_events_of_run(&row.id, "gate_")?;
    if json {
        let gate: Vec<_> = gate
            .iter()
            .map(|(e, kind)| json!({"kind": kind, "step_id": e.step_id, "detail": e.detail}))
            .collect();
        serde_json::to_writer_pretty(
            &mut *out,
            &json!({"run": row, "model_turns": turns, "steps": steps, "gate": gate}),
        )?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "run {} in {} · {} · {} steps, {} model turns",
        row.id,
        row.workspace,
        row.ended_how.as_deref().unwrap_or("running"),
        steps.len(),
        turns.len()
    )?;
    // Model turns and steps interleaved by time; a turn comes before the calls it made.
    let mut t = turns.iter().peekable();
    for step in &steps {
        while let Some(turn) = t.next_if(|turn| turn.at_ms <= step.started_at_ms) {
            writeln!(out, "{}", turn_line(turn))?;
        }
        let status = match (step.exit_code, step.outcome.as_deref()) {
            (Some(code), _) => format!("exit {code}"),
            (None, Some(o)) => o.to_string(),
            (None, None) => "running".into(),
        };
        let what = step
            .argv_json
            .as_deref()
            .or(Some(step.call_json.as_str()))
            .unwrap_or("");
        writeln!(
            out,
            "  step {:>3}  {:<11} {:<9} {}",
            step.seq,
            step.tool,
            status,
            clip(what, 100)
        )?;
        for file in store.step_files(step.id)? {
            // The one row of a step whose files are still being recorded after the call.
            if file.change == corral::trace::PENDING {
                let said = match row.ended_how {
                    None => "record pending: what it changed is still being recorded",
                    Some(_) => {
                        "not recorded: the corral that made the call ended before recording \
                         what it changed, so it cannot be undone"
                    }
                };
                writeln!(out, "            {said}")?;
                continue;
            }
            writeln!(
                out,
                "            {:<8}  {}",
                file.change,
                String::from_utf8_lossy(&file.path)
            )?;
        }
        for (e, kind) in gate.iter().filter(|(e, _)| e.step_id == Some(step.id)) {
            if kind == "gate_phase_failed" {
                writeln!(out, "            gate: {}", e.detail)?;
            }
        }
    }
    for turn in t {
        writeln!(out, "{}", turn_line(turn))?;
    }
    Ok(())
}

fn turn_line(turn: &corral::trace::ModelTurnRow) -> String {
    let tokens = match (turn.input_tokens, turn.output_tokens) {
        (Some(i), Some(o)) => format!("{i}+{o} tokens"),
        _ => "no usage".into(),
    };
    let cost = turn
        .cost_usd
        .map(|c| format!(", ${c:.4}"))
        .unwrap_or_default();
    let error = turn
        .error
        .as_deref()
        .map(|e| format!(" · error: {}", clip(e, 100)))
        .unwrap_or_default();
    format!(
        "turn {:>3}  {}:{} · {tokens}{cost} · {} ms{error}",
        turn.turn, turn.provider, turn.model, turn.duration_ms
    )
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}
