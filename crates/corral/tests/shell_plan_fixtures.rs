//! Snapshots of what a line becomes: its stages (argv, working directory, status), its
//! exit code and its stdout for admitted lines in `fixtures/plan/ok/`, and the error for
//! lines in `fixtures/plan/err/`.
//!
//! A `.line` file holds one line; a single trailing newline is not part of it. `TB` stands
//! for the path of `corral-testbin`. Paths are shown relative to the workspace (`$WS`).

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{Fixture, testbin};
use corral::{Config, EnvPolicy, Run, ShellRequest, Status};
use serde::Serialize;

#[derive(Serialize)]
struct OkView {
    line: String,
    exit: i32,
    stdout: String,
    stages: Vec<StageView>,
}

#[derive(Serialize)]
struct StageView {
    argv: Vec<String>,
    cwd: String,
    status: String,
}

#[derive(Serialize)]
struct ErrView {
    line: String,
    kind: String,
    error: String,
}

fn seed(ws: &Path) {
    std::fs::write(
        ws.join("a.txt"),
        "banana\napple\ncherry\napple\nxylophone\nbandana\n",
    )
    .unwrap();
    std::fs::create_dir(ws.join("dir")).unwrap();
    std::fs::write(ws.join("dir/b.txt"), "bee\nbuzz\n").unwrap();
    std::fs::create_dir(ws.join("sub")).unwrap();
    std::fs::write(ws.join("with space.txt"), "spaced out\n").unwrap();
}

fn open(fx: &Fixture) -> Run {
    let env: BTreeMap<String, String> = [
        ("PATH", "/usr/bin:/bin".to_string()),
        ("HOME", fx.dir.path().display().to_string()),
        ("LANG", "C.UTF-8".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let config = Config {
        env: EnvPolicy {
            explicit: Some(env),
            non_interactive: false,
            deny: vec![],
            ..Default::default()
        },
        ..Default::default()
    };
    Run::builder(fx.workspace())
        .store(fx.store())
        .config(config)
        // What may run is not under test here: approve whatever the policy asks about.
        .approver(corral::approve::ApproveAll)
        .open()
        .unwrap()
}

fn read_line(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.strip_suffix('\n').unwrap_or(&text).to_string()
}

/// Replaces the machine-specific paths in `text`.
struct Paths {
    workspace: String,
    root: String,
    testbin: String,
}

impl Paths {
    fn new(fx: &Fixture, run: &Run) -> Self {
        Self {
            workspace: run.workspace().display().to_string(),
            root: fx.dir.path().canonicalize().unwrap().display().to_string(),
            testbin: testbin(),
        }
    }

    fn scrub(&self, text: &str) -> String {
        text.replace(&self.testbin, "$TB")
            .replace(&self.workspace, "$WS")
            .replace(&self.root, "$TMP")
    }
}

fn status(status: &Option<Status>) -> String {
    match status {
        None => "not run".into(),
        Some(Status::Exited { code }) => format!("exit {code}"),
        Some(Status::Signaled { signal }) => format!("signal {signal}"),
        Some(Status::Unavailable { .. }) => "unavailable".into(),
        Some(other) => format!("{other:?}"),
    }
}

#[test]
fn admitted_lines() {
    insta::glob!("fixtures/plan/ok/*.line", |path| {
        let fx = Fixture::new();
        seed(&fx.workspace());
        let run = open(&fx);
        let paths = Paths::new(&fx, &run);
        let line = read_line(path);
        let outcome = run
            .shell(&ShellRequest::new(line.replace("TB", &paths.testbin)))
            .unwrap_or_else(|e| panic!("{}: {line:?} was not run: {e}", path.display()));
        let stdout = match &outcome.stdout.capture {
            Some(p) => String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned(),
            None => String::new(),
        };
        let stages = outcome
            .stages
            .iter()
            .map(|s| StageView {
                argv: s.argv.iter().map(|a| paths.scrub(a)).collect(),
                cwd: match s.cwd.strip_prefix(run.workspace()) {
                    Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
                    Ok(rel) => rel.display().to_string(),
                    Err(_) => paths.scrub(&s.cwd.display().to_string()),
                },
                status: status(&s.status),
            })
            .collect();
        let view = OkView {
            line,
            exit: outcome.status.cli_exit_code(),
            stdout: paths.scrub(&stdout),
            stages,
        };
        insta::assert_yaml_snapshot!(view);
    });
}

#[test]
fn refused_lines() {
    insta::glob!("fixtures/plan/err/*.line", |path| {
        let fx = Fixture::new();
        seed(&fx.workspace());
        let run = open(&fx);
        let paths = Paths::new(&fx, &run);
        let line = read_line(path);
        let err = match run.shell(&ShellRequest::new(line.as_str())) {
            Ok(outcome) => panic!(
                "{}: {line:?} ran ({:?}) but should have been refused",
                path.display(),
                outcome.status
            ),
            Err(e) => e,
        };
        // A refusal by the grammar carries the construct, a `cd` out of the workspace
        // names the workspace as what refused it; nothing else is a refusal here.
        if err.kind() == corral::ErrorKind::Refused {
            let by_grammar = err.line_refusal().is_some();
            let by_workspace = err
                .denial()
                .is_some_and(|d| d.layer.as_deref() == Some("workspace"));
            assert!(by_grammar || by_workspace, "{err}");
        }
        let view = ErrView {
            line,
            kind: format!("{:?}", err.kind()),
            error: paths.scrub(&err.to_string()),
        };
        insta::assert_yaml_snapshot!(view);
    });
}
