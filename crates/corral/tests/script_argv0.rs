//! A program named by a path is started by that path as the line wrote it, as bash starts
//! it: a script's `$0` is `./t.sh`, not the workspace's absolute path (a `configure` that
//! compares `$0`'s directory with `.` builds in the tree only then). A bare name found on
//! `PATH` keeps its name as `argv[0]`.

use crate::common;

use common::Fixture;
use corral::{Config, Run, ShellRequest, sandbox::SandboxConfig, sandbox::SandboxMode};

fn stdout(outcome: &corral::Outcome) -> String {
    format!(
        "{}{}",
        outcome.stdout.window.head, outcome.stdout.window.tail
    )
}

/// A script printing its `$0`, and the ways of naming it, with what bash says for each.
fn script_and_its_names(fx: &Fixture) -> [(&'static str, &'static str); 4] {
    use std::os::unix::fs::PermissionsExt;
    let ws = fx.workspace();
    std::fs::create_dir(ws.join("sub")).unwrap();
    let script = ws.join("t.sh");
    std::fs::write(&script, "#!/bin/sh\nprintf '%s\\n' \"$0\"\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("t.sh", ws.join("link.sh")).unwrap();
    [
        ("./t.sh", "./t.sh"),
        ("sub/../t.sh", "sub/../t.sh"),
        ("./link.sh", "./link.sh"),
        ("cd sub && ../t.sh", "../t.sh"),
    ]
}

fn dollar_zero_as_written(run: &Run, fx: &Fixture) {
    for (line, expected) in script_and_its_names(fx) {
        let outcome = run.shell(&ShellRequest::new(line)).unwrap();
        assert!(outcome.status.success(), "{line}: {}", outcome.observation);
        assert_eq!(stdout(&outcome), format!("{expected}\n"), "{line}");
    }
}

#[test]
fn a_script_sees_its_path_as_written() {
    let fx = Fixture::new();
    dollar_zero_as_written(&fx.run(), &fx);
}

#[test]
fn a_script_sees_its_path_as_written_in_the_box() {
    let fx = Fixture::new();
    let run = fx.run_with(Config {
        sandbox: SandboxConfig::mode(SandboxMode::WorkspaceWrite),
        ..Config::default()
    });
    dollar_zero_as_written(&run, &fx);
}

#[test]
fn a_name_found_on_path_keeps_its_name() {
    let fx = Fixture::new();
    let run = fx.approving_run(Config::default());
    // `sh -c 'echo $0'` prints argv[0] of `sh` itself.
    let outcome = run
        .shell(&ShellRequest::new("sh -c 'printf \"%s\\n\" \"$0\"'"))
        .unwrap();
    assert!(outcome.status.success(), "{}", outcome.observation);
    assert_eq!(stdout(&outcome), "sh\n");
}
