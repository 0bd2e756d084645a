//! Stages run with OS pipes between them; statuses follow the shell and each stage's own
//! status is reported.

use crate::common;

use std::time::{Duration, Instant};

use common::{Fixture, cleanup, marker, survivors_after, testbin};
use corral::{ShellRequest, Status};

#[test]
fn data_flows_stage_to_stage() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .shell(&ShellRequest::new(format!(
            "{} lines 1000 | grep 99 | wc -l",
            testbin()
        )))
        .unwrap();
    assert_eq!(outcome.stdout.window.head.trim(), "19");
    assert_eq!(outcome.stages.len(), 3);
}

#[test]
fn a_pipeline_reports_each_stage_and_takes_the_last_status() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .shell(&ShellRequest::new(format!("{} exit 3 | cat", testbin())))
        .unwrap();
    assert_eq!(outcome.status, Status::Exited { code: 0 });
    let own: Vec<_> = outcome.stages.iter().map(|s| s.status.clone()).collect();
    assert_eq!(
        own,
        [
            Some(Status::Exited { code: 3 }),
            Some(Status::Exited { code: 0 })
        ]
    );
    assert!(
        outcome.observation.contains("stages: "),
        "{}",
        outcome.observation
    );
    assert!(
        outcome.observation.contains("→ exit 3 | cat → exit 0"),
        "{}",
        outcome.observation
    );
}

#[test]
fn connectors_short_circuit_and_skipped_stages_say_so() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .shell(&ShellRequest::new(
            "false && echo no || echo yes; true || echo never",
        ))
        .unwrap();
    assert_eq!(outcome.stdout.window.head, "yes\n");
    assert_eq!(outcome.status, Status::Exited { code: 0 });
    let ran: Vec<bool> = outcome.stages.iter().map(|s| s.status.is_some()).collect();
    assert_eq!(ran, [true, false, true, true, false]);
}

#[test]
fn the_stages_line_joins_the_stages_as_the_line_did() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .shell(&ShellRequest::new(
            "false && echo no || echo yes | cat; cd . && true",
        ))
        .unwrap();
    assert!(
        outcome.observation.contains(
            "stages: false → exit 1 && echo no → not run || echo yes → exit 0 | cat → exit 0 ; \
             true → exit 0\n"
        ),
        "{}",
        outcome.observation
    );
}

#[test]
fn an_early_stage_killed_by_sigpipe_does_not_fail_the_line() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run.shell(&ShellRequest::new("yes | head -n 2")).unwrap();
    assert_eq!(outcome.stdout.window.head, "y\ny\n");
    assert_eq!(outcome.status, Status::Exited { code: 0 });
    assert_eq!(
        outcome.stages[0].status,
        Some(Status::Signaled { signal: 13 })
    );
}

#[test]
fn an_unavailable_stage_is_127_and_says_why_on_stderr() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .shell(&ShellRequest::new("corral-no-such-program"))
        .unwrap();
    assert_eq!(outcome.status.cli_exit_code(), 127);
    assert!(
        outcome
            .stderr
            .window
            .head
            .contains("`corral-no-such-program` was not found")
    );
    let outcome = run
        .shell(&ShellRequest::new("corral-no-such-program | wc -l"))
        .unwrap();
    assert_eq!(outcome.status, Status::Exited { code: 0 });
    assert_eq!(outcome.stdout.window.head.trim(), "0");
}

#[test]
fn redirect_order_matters_as_in_the_shell() {
    let fx = Fixture::new();
    let run = fx.run();
    let both = format!("{} spew 64 64", testbin());
    run.shell(&ShellRequest::new(format!("{both} >all 2>&1")))
        .unwrap();
    let outcome = run
        .shell(&ShellRequest::new(format!("{both} 2>&1 >only-out")))
        .unwrap();
    assert_eq!(
        std::fs::read(fx.workspace().join("all")).unwrap().len(),
        128
    );
    assert_eq!(
        std::fs::read(fx.workspace().join("only-out"))
            .unwrap()
            .len(),
        64
    );
    // stderr went where stdout pointed before `>only-out`: the call's stdout.
    assert_eq!(outcome.stdout.bytes, 64);
    assert_eq!(outcome.stderr.bytes, 0);
}

#[test]
fn a_program_built_by_an_earlier_stage_can_run_by_path() {
    let fx = Fixture::new();
    let run = fx.run();
    let line = format!("cp {} ./tool && ./tool argv built", testbin());
    let outcome = run.shell(&ShellRequest::new(line)).unwrap();
    assert_eq!(
        outcome.stdout.window.head, "[\"built\"]\n",
        "{}",
        outcome.observation
    );
}

#[test]
fn a_timeout_ends_every_stage_and_starts_nothing_more() {
    let fx = Fixture::new();
    let run = fx.run();
    let mark = marker("shell-timeout");
    let line = format!(
        "{bin} sleep 60000 {mark} | {bin} sleep 60000 {mark}; touch after",
        bin = testbin()
    );
    let started = Instant::now();
    let outcome = run
        .shell(&ShellRequest::new(line).timeout(Duration::from_millis(300)))
        .unwrap();
    let left = survivors_after(&mark, Duration::from_secs(2));
    cleanup(&mark);
    assert!(
        matches!(outcome.status, Status::TimedOut { .. }),
        "{:?}",
        outcome.status
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(left.is_empty(), "survivors: {left:?}");
    assert!(
        !fx.workspace().join("after").exists(),
        "a stage started after the timeout"
    );
}

#[test]
fn a_redirect_into_a_directory_an_earlier_stage_makes_works() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .shell(&ShellRequest::new(
            "mkdir d && echo x > d/f; echo y > nodir/f; echo after",
        ))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.workspace().join("d/f")).unwrap(),
        "x\n"
    );
    assert_eq!(outcome.stdout.window.head, "after\n");
    assert!(
        outcome
            .stderr
            .window
            .head
            .contains("nodir/f: No such file or directory"),
        "{}",
        outcome.observation
    );
}

#[test]
fn a_redirect_target_replaced_after_the_check_is_not_opened() {
    let fx = Fixture::new();
    std::fs::write(fx.workspace().join("a.txt"), "keep\n").unwrap();
    std::os::unix::fs::symlink("a.txt", fx.workspace().join("link")).unwrap();
    let run = fx.run();
    let outcome = run
        .shell(&ShellRequest::new(
            "rm link && ln -s /etc/hostname link && echo x > link",
        ))
        .unwrap();
    assert_eq!(outcome.status, Status::Exited { code: 1 });
    assert!(
        outcome
            .stderr
            .window
            .head
            .contains("that was checked; it was not opened"),
        "{}",
        outcome.observation
    );
    assert_eq!(
        std::fs::read_to_string(fx.workspace().join("a.txt")).unwrap(),
        "keep\n"
    );
}

#[test]
fn the_commands_own_descriptors_are_its_own() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .shell(&ShellRequest::new(
            "echo hi > /dev/stdout; ls no-such-file 2>/dev/stdout | wc -l",
        ))
        .unwrap();
    assert_eq!(outcome.stdout.window.head, "hi\n1\n");
    let err = run
        .shell(&ShellRequest::new("echo x >> /dev/fd/5"))
        .unwrap_err();
    assert!(err.to_string().contains("corral's own process"), "{err}");
}

#[test]
fn cd_is_logical_and_pwd_is_exported() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.workspace().join("dir/inner")).unwrap();
    std::os::unix::fs::symlink("dir/inner", fx.workspace().join("in")).unwrap();
    let run = fx.run();
    let outcome = run
        .shell(&ShellRequest::new("cd in/.. && printenv PWD"))
        .unwrap();
    assert_eq!(
        outcome.stdout.window.head.trim_end(),
        fx.workspace().canonicalize().unwrap().display().to_string()
    );
}

#[test]
fn writes_into_corrals_own_trace_are_refused() {
    let fx = Fixture::new();
    let run = fx.run();
    let line = format!("echo x > {}", fx.store().display());
    let err = run.shell(&ShellRequest::new(line)).unwrap_err();
    assert!(err.to_string().contains("corral's own state"), "{err}");
}

#[test]
fn a_background_job_runs_while_the_line_goes_on_and_ends_with_the_call() {
    let fx = Fixture::new();
    let run = fx.run();
    // Were the line to wait for the sleeper, the call would time out.
    let outcome = run
        .shell(
            &ShellRequest::new(format!("{} sleep 60000 & echo started", testbin()))
                .timeout(Duration::from_secs(30)),
        )
        .unwrap();
    assert_eq!(outcome.status, Status::Exited { code: 0 });
    assert_eq!(outcome.stdout.window.head, "started\n");
    assert_eq!(outcome.leftovers_ended, 1, "{}", outcome.observation);
    // Its stage reports how it ended: by the end of the call.
    assert!(
        matches!(outcome.stages[0].status, Some(Status::Signaled { .. })),
        "{:?}",
        outcome.stages[0].status
    );
}

#[test]
fn time_reports_real_user_and_sys_as_bash_does_and_keeps_the_status() {
    let fx = Fixture::new();
    let run = fx.run();
    let hash = "head -c 30000000 /dev/zero | sha256sum | cut -c1-8";
    let untimed = run.shell(&ShellRequest::new(hash)).unwrap();
    let outcome = run
        .shell(&ShellRequest::new(format!("time {hash} && time false")))
        .unwrap();
    assert_eq!(outcome.status, Status::Exited { code: 1 });
    assert_eq!(outcome.stdout.window.head, untimed.stdout.window.head);
    let stderr = &outcome.stderr.window.head;
    let reports: Vec<&str> = stderr.split_inclusive("s\n").collect();
    assert_eq!(reports.len(), 6, "{stderr:?}");
    let mut cpu = 0.0;
    for (i, line) in stderr.trim_start_matches('\n').split('\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let (label, value) = line.split_once('\t').expect(line);
        assert!(["real", "user", "sys"].contains(&label), "{stderr:?}");
        let (minutes, seconds) = value.split_once('m').expect(value);
        let seconds = seconds.strip_suffix('s').expect(value);
        let (whole, millis) = seconds.split_once('.').expect(value);
        assert!(
            minutes.parse::<u64>().is_ok() && whole.parse::<u64>().is_ok(),
            "{value}"
        );
        assert_eq!(millis.len(), 3, "{value}");
        if i < 3 && label != "real" {
            cpu += format!("{whole}.{millis}").parse::<f64>().unwrap();
        }
    }
    assert!(stderr.starts_with("\nreal\t"), "{stderr:?}");
    // Hashing 30 MB takes CPU time, and the report counts it.
    assert!(cpu > 0.0, "{stderr:?}");
}

/// A redirect to a named pipe would wait for the pipe's other end before its stage
/// starts, and that end may be a later stage of the same line: the stage is not started,
/// its stderr says why and what to do, and the line goes on.
#[test]
fn a_redirect_to_a_named_pipe_is_refused_at_once_instead_of_waiting() {
    let fx = Fixture::new();
    let made = std::process::Command::new("mkfifo")
        .arg(fx.workspace().join("p"))
        .status()
        .unwrap();
    assert!(made.success());
    let run = fx.run();
    for line in [
        "echo hi > p & echo after",
        "cat < p",
        "echo hi >> p; echo after",
    ] {
        let began = Instant::now();
        let outcome = run
            .shell(&ShellRequest::new(line).timeout(Duration::from_secs(20)))
            .unwrap();
        assert!(
            !matches!(outcome.status, Status::TimedOut { .. }),
            "{line}: waited for the pipe: {}",
            outcome.observation
        );
        assert!(began.elapsed() < Duration::from_secs(15), "{line}");
        let stderr = outcome.stderr.window.head.as_str();
        assert!(stderr.contains("p: a named pipe"), "{line}: {stderr}");
        assert!(stderr.contains("| tee "), "{line}: {stderr}");
        if line.ends_with("after") {
            assert!(outcome.stdout.window.head.contains("after"), "{line}");
        }
    }
}
