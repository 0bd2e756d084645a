//! Each row of [`GIT`]: its example is classified by effect as the row says, asked as the
//! row says with and without a working record, and the policy layer holds exactly the
//! rows asked whatever the record.

use std::path::Path;

use corral_policy::{ApprovalMode, CommandCheck, Effect, Policy};

use super::checks as by_effect;
use crate::destructive::{GIT, Loss, is_on, layer};
use crate::gate::Check;
use crate::plan::Plan;

fn checks(
    policy: &Policy,
    plan: &Plan,
    ws: &Path,
    unrecorded: Option<&str>,
    mode: ApprovalMode,
) -> Vec<Check> {
    by_effect(plan, ws, unrecorded, is_on(policy), true, mode)
}

fn workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/a.txt"), "a").unwrap();
    (dir, ws)
}

/// Whether the by-effect check asks about `line` in `ws`.
fn asked(policy: &Policy, ws: &Path, line: &str, unrecorded: Option<&str>) -> bool {
    let plan = Plan::for_line(line, ws, ws).unwrap();
    !checks(policy, &plan, ws, unrecorded, ApprovalMode::OnRequest).is_empty()
}

/// What the policy layer alone says of `argv`.
fn by_layer(policy: &Policy, line: &str) -> Effect {
    let argv: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    policy
        .check_command(&CommandCheck {
            argv: &argv,
            program_path: None,
        })
        .effect
}

#[test]
fn every_row_is_asked_as_the_table_says() {
    let (_dir, ws) = workspace();
    let model = Policy::permissive().with_layer(layer(&ws));
    let person = Policy::permissive();
    assert!(is_on(&model) && !is_on(&person));
    for row in GIT {
        let line = format!("git {}", row.example);
        // Git's refs are recorded where git may write its data (`refs_recorded` here).
        let always = !matches!(row.loss, Loss::Recorded | Loss::Refs);
        assert_eq!(asked(&model, &ws, &line, None), always, "{line}");
        let plan = Plan::for_line(&line, &ws, &ws).unwrap();
        let question = checks(&model, &plan, &ws, Some("off"), ApprovalMode::OnRequest);
        let said = question
            .first()
            .map(|c| c.decision.to_string())
            .unwrap_or_default();
        assert!(said.contains(row.why), "{line}: {said}");
        assert_eq!(
            asked(&person, &ws, &line, Some("recording is off")),
            row.loss != Loss::Remote,
            "{line}"
        );
        assert!(!asked(&person, &ws, &line, None), "{line}");
        // Git's options before the subcommand do not take it past the check.
        let spelled = format!("git -c x=y --git-dir=.git -P {}", row.example);
        assert_eq!(asked(&model, &ws, &spelled, None), always, "{spelled}");
        // The layer holds the rows asked whatever the record, and only those.
        let expected = if row.pattern.is_some() {
            Effect::Ask
        } else {
            Effect::Allow
        };
        assert_eq!(by_layer(&model, &line), expected, "{line}");
        // (`git clean -x` has none: a glob would ask about `--dry-run` too.)
        assert!(
            row.pattern.is_none() || always,
            "{line}: a pattern is for what is always asked"
        );
        let sub = row.example.split_whitespace().next().unwrap();
        assert!(
            include_str!("../../destructive_table.md").contains(sub),
            "the table does not say what `git {sub}` does"
        );
    }
}

#[test]
fn routine_commands_are_not_asked() {
    let (_dir, ws) = workspace();
    let model = Policy::permissive().with_layer(layer(&ws));
    for line in [
        "git status",
        "git reset HEAD a.txt",
        "git reset --soft HEAD~1",
        "git clean -n",
        "git clean -fdx --dry-run",
        "git checkout main",
        "git checkout -b topic",
        "git push origin main",
        "git push -u origin feature/x",
        "git push --follow-tags",
        "git commit -m fix",
        "git stash",
        "git restore --staged src/a.txt",
        "git gc",
    ] {
        assert!(!asked(&model, &ws, line, None), "{line}");
        assert_eq!(by_layer(&model, line), Effect::Allow, "{line}");
    }
}
