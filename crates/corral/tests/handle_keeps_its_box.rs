//! A background handle and a yielded call run in the same sandbox a foreground call
//! would, and say so: the result carries the report, the trace keeps its rows; and the
//! line a handle is recorded and announced under is the line as asked.

use crate::common;

use common::Fixture;
use corral::{
    Config, ExecRequest, ShellRequest, handle::KillRequest, handle::StartRequest,
    sandbox::SandboxConfig, sandbox::SandboxMode,
};

fn boxed(fx: &Fixture) -> corral::Run {
    fx.run_with(Config {
        sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
        ..Config::default()
    })
}

fn store(fx: &Fixture) -> corral::trace::Store {
    corral::trace::Store::open_existing(&fx.store()).unwrap()
}

#[test]
fn a_handle_keeps_its_sandbox_report_and_its_line() {
    let fx = Fixture::new();
    let run = boxed(&fx);
    std::fs::create_dir(fx.workspace().join("sub")).unwrap();
    let line = "cd sub && sleep 30; echo done";
    let started = run.shell_start(&StartRequest::new(line)).unwrap();
    let report = started.sandbox.as_ref().expect("a sandbox report");
    assert_eq!(report.mode, SandboxMode::WorkspaceWrite);
    assert!(
        started.observation.contains("sandbox: workspace-write"),
        "{}",
        started.observation
    );
    let store = store(&fx);
    let step = &store.steps(Some(run.id()), 10).unwrap()[0];
    let events = store.sandbox_events(step.id).unwrap();
    assert!(
        !events.is_empty(),
        "no sandbox_events row for the handle's step"
    );
    assert!(events.iter().all(|e| e.mode == "workspace-write"));
    let handles = store.handles(run.id()).unwrap();
    assert_eq!(handles[0].line, line);
    run.shell_kill(&KillRequest {
        handle: started.handle,
    })
    .unwrap();
}

#[test]
fn a_yielded_call_keeps_its_sandbox_report() {
    let fx = Fixture::new();
    let run = boxed(&fx);
    let outcome = run
        .shell(&ShellRequest::new("sleep 30").yield_after(50))
        .unwrap();
    let report = outcome.sandbox.as_ref().expect("a sandbox report");
    assert_eq!(report.mode, SandboxMode::WorkspaceWrite);
    assert!(
        outcome.observation.contains("sandbox: workspace-write"),
        "{}",
        outcome.observation
    );
    let quick = run
        .exec(&ExecRequest::new(["true"]).yield_after(10_000))
        .unwrap();
    assert!(quick.sandbox.is_some(), "{}", quick.observation);
}

#[test]
fn the_status_line_comes_once_per_run_and_again_when_it_changes() {
    let fx = Fixture::new();
    let run = boxed(&fx);
    let status = |o: &str| -> Vec<String> {
        o.lines()
            .filter(|l| corral::sandbox::SandboxReport::is_status(l))
            .map(str::to_string)
            .collect()
    };
    let first = run.exec(&ExecRequest::new(["true"])).unwrap();
    let shown = status(&first.observation);
    assert_eq!(shown.len(), 1, "{}", first.observation);
    let every_layer = first
        .sandbox
        .as_ref()
        .unwrap()
        .unenforced(corral::CONFINEMENT)
        .is_empty();
    if every_layer {
        assert_eq!(shown[0], "sandbox: workspace-write, network off");
    } else {
        assert!(shown[0].contains("corral sandbox report"), "{}", shown[0]);
    }
    // The same box: neither a second call nor a handle repeats it.
    let second = run.exec(&ExecRequest::new(["true"])).unwrap();
    assert!(
        status(&second.observation).is_empty(),
        "{}",
        second.observation
    );
    let started = run.shell_start(&StartRequest::new("sleep 30")).unwrap();
    assert!(
        status(&started.observation).is_empty(),
        "{}",
        started.observation
    );
    run.shell_kill(&KillRequest {
        handle: started.handle,
    })
    .unwrap();
    // Another run, with another box, says its own on its first result.
    let widened = fx.run_with(Config {
        sandbox: SandboxConfig {
            network: true,
            ..SandboxConfig::mode(SandboxMode::WorkspaceWrite)
        },
        ..Config::default()
    });
    let on = widened.exec(&ExecRequest::new(["true"])).unwrap();
    assert!(
        status(&on.observation)
            .first()
            .is_some_and(|l| l.starts_with("sandbox: workspace-write, network on")),
        "{}",
        on.observation
    );
}
