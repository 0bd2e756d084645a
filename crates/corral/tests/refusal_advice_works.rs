//! Every refusal's advice works when followed literally: for each construct a model
//! commonly writes and the grammar refuses, the line is refused with the advice, and the
//! line the advice describes then runs and does what the refused one meant.

use crate::common;

use common::Fixture;
use corral::{Outcome, Run, ShellRequest, handle::KillRequest, handle::StartRequest};

fn stdout(outcome: &Outcome) -> String {
    match &outcome.stdout.capture {
        Some(path) => String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned(),
        None => String::new(),
    }
}

/// `line` is refused, and the refusal says `advice`.
fn refused_with(run: &Run, line: &str, advice: &str) {
    let err = run
        .shell(&ShellRequest::new(line))
        .expect_err("the line should be refused");
    assert!(
        err.to_string().contains(advice),
        "{line:?}: the refusal does not say {advice:?}: {err}"
    );
}

/// `line` runs to exit 0 and prints `expected`.
fn runs(run: &Run, line: &str, expected: &str) {
    let outcome = run
        .shell(&ShellRequest::new(line))
        .unwrap_or_else(|e| panic!("{line:?} was not run: {e}"));
    assert_eq!(
        outcome.status.cli_exit_code(),
        0,
        "{line:?}: {}",
        outcome.observation
    );
    assert_eq!(stdout(&outcome), expected, "{line:?}");
}

#[test]
fn source_an_activate_script_becomes_the_program_by_path() {
    let fx = Fixture::new();
    let bin = fx.workspace().join(".venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("activate"), "VIRTUAL_ENV=.venv\n").unwrap();
    let pytest = bin.join("pytest");
    std::fs::write(&pytest, "#!/bin/sh\necho '3 passed'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&pytest, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = fx.run();
    refused_with(
        &run,
        "source .venv/bin/activate && pytest",
        "`.venv/bin/pytest`",
    );
    runs(&run, ".venv/bin/pytest", "3 passed\n");
}

#[test]
fn a_loop_becomes_each_command_written_out() {
    let fx = Fixture::new();
    let run = fx.run();
    refused_with(
        &run,
        "for f in a b; do echo $f; done",
        "write each command out, joined with `&&`",
    );
    runs(&run, "echo a && echo b", "a\nb\n");
}

#[test]
fn a_background_job_becomes_a_handle() {
    let fx = Fixture::new();
    let run = fx.run();
    // One pipeline in the background is admitted; a whole `&&` list there is not.
    refused_with(&run, "true && sleep 30 & echo started", "shell_start");
    let started = run
        .shell_start(&StartRequest::new("true && sleep 30"))
        .unwrap();
    runs(&run, "echo started", "started\n");
    run.shell_kill(&KillRequest {
        handle: started.handle,
    })
    .unwrap();
}

#[test]
fn a_substitution_becomes_its_output_written_in() {
    let fx = Fixture::new();
    let run = fx.run();
    refused_with(
        &run,
        "echo \"branch: $(echo main)\"",
        "run the inner command as its own call first",
    );
    let inner = run.shell(&ShellRequest::new("echo main")).unwrap();
    let value = stdout(&inner);
    runs(
        &run,
        &format!("echo 'branch: {}'", value.trim_end()),
        "branch: main\n",
    );
}

#[test]
fn a_message_of_several_lines_goes_through_a_here_document() {
    let fx = Fixture::new();
    let run = fx.run();
    refused_with(
        &run,
        "git commit -m \"$(git log -1 --format=%s)\"",
        "git commit -F- <<'EOF'",
    );
    runs(
        &run,
        "git init -q && git -c user.name=a -c user.email=a@example.com commit -q --allow-empty -F- <<'EOF' && git log -1 --format=%B\nFirst line\n\nMore.\nEOF",
        "First line\n\nMore.\n\n",
    );
}

#[test]
fn an_expanding_here_document_becomes_a_quoted_one() {
    let fx = Fixture::new();
    let run = fx.run();
    refused_with(
        &run,
        "cat <<EOF\ncost: $5\nEOF",
        "quote the delimiter (`<<'EOF'`)",
    );
    runs(&run, "cat <<'EOF'\ncost: $5\nEOF", "cost: $5\n");
}

/// A glob is expanded as bash expands it; a pattern where corral does not expand one (a
/// redirect target) is refused with what to write instead, and that works.
#[test]
fn a_glob_is_expanded_and_a_redirect_pattern_becomes_the_name() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.workspace().join("dir")).unwrap();
    std::fs::write(fx.workspace().join("dir/a.py"), "").unwrap();
    let run = fx.run();
    runs(&run, "ls dir/*.py", "dir/a.py\n");
    let err = run
        .shell(&corral::ShellRequest::new("echo x > dir/*.py"))
        .unwrap_err();
    assert!(err.to_string().contains("write the file's name"), "{err}");
    runs(&run, "echo x > dir/a.py && cat dir/a.py", "x\n");
}

#[test]
fn a_redirect_target_with_braces_becomes_one_name() {
    let fx = Fixture::new();
    let run = fx.run();
    // Brace expansion among arguments is admitted; a redirect has room for one name.
    runs(&run, "mkdir -p src/{a,b} && ls src", "a\nb\n");
    refused_with(
        &run,
        "echo x > out.{txt,log}",
        "a redirect's target must stay one file name",
    );
    runs(&run, "echo x > out.txt && cat out.txt", "x\n");
}

#[test]
fn export_becomes_an_assignment_in_front() {
    let fx = Fixture::new();
    let run = fx.run();
    refused_with(
        &run,
        "export MODE=fast && printenv MODE",
        "`NAME=value cmd`",
    );
    runs(&run, "MODE=fast printenv MODE", "fast\n");
}

#[test]
fn cd_in_a_pipeline_becomes_cd_and() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.workspace().join("dir")).unwrap();
    std::fs::write(fx.workspace().join("dir/f"), "").unwrap();
    let run = fx.run();
    refused_with(&run, "cd dir | ls", "`cd DIR && …`");
    runs(&run, "cd dir && ls", "f\n");
}

#[test]
fn another_users_home_becomes_the_path_in_full() {
    let fx = Fixture::new();
    let run = fx.run();
    refused_with(&run, "ls -d ~root", "write the path in full");
    runs(&run, "ls -d /", "/\n");
}
