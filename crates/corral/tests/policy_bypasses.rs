//! Ways round a deny rule or the known-safe list, tried with real programs: the victim
//! survives, the payload does not run, and the call says why.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::Fixture;
use corral::policy::{Act, Effect};
use corral::{ApprovalMode, ErrorKind, ExecRequest, Policy, Run, ShellRequest, approve::DenyAll};

/// A script that leaves `pwned` in the workspace when it runs.
fn payload(fx: &Fixture, name: &str) -> PathBuf {
    let path = fx.workspace().join(name);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    let pwned = fx.workspace().join("pwned");
    std::fs::write(&path, format!("#!/bin/sh\ntouch '{}'\n", pwned.display())).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn pwned(fx: &Fixture) -> bool {
    fx.workspace().join("pwned").exists()
}

/// What a model gets by default when it is trusted with known-safe commands only: the
/// default tier (ask about the rest), `unless-trusted`, and nobody to approve.
fn unless_trusted(fx: &Fixture) -> Run {
    Run::builder(fx.workspace())
        .store(fx.store())
        .policy(Policy::default())
        .approval(ApprovalMode::UnlessTrusted)
        .approver(DenyAll)
        .open()
        .unwrap()
}

fn deny_rm(fx: &Fixture) -> Run {
    Run::builder(fx.workspace())
        .store(fx.store())
        .policy(Policy::permissive().layer("operator").deny_exec("rm"))
        .approver(DenyAll)
        .open()
        .unwrap()
}

/// A run whose operator denies `rule`, in sandbox `mode`, with nobody to ask.
fn denying_in(fx: &Fixture, rule: &str, mode: corral::sandbox::SandboxMode) -> Run {
    Run::builder(fx.workspace())
        .store(fx.store())
        .policy(Policy::permissive().layer("operator").deny_exec(rule))
        .config(corral::Config {
            sandbox: corral::sandbox::SandboxConfig::mode(mode),
            ..corral::Config::default()
        })
        .approver(DenyAll)
        .open()
        .unwrap()
}

fn victim(fx: &Fixture) -> PathBuf {
    let v = fx.workspace().join("victim");
    std::fs::write(&v, "keep me").unwrap();
    v
}

fn refused(result: corral::Result<corral::Outcome>, says: &str) {
    let err = result.expect_err("should have been refused");
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(err.to_string().contains(says), "{err}\nshould say {says:?}");
}

#[test]
fn known_safe_commands_still_run_without_asking() {
    // The control: the same run starts what is known-safe, so the refusals below are the
    // policy's doing, not the setup's.
    let fx = Fixture::new();
    let run = unless_trusted(&fx);
    let line = run
        .shell(&ShellRequest::new("bash -c 'ls | wc -l'"))
        .unwrap();
    assert!(line.status.success(), "{}", line.observation);
}

#[test]
fn an_assignment_in_front_of_a_known_safe_program_asks() {
    let fx = Fixture::new();
    let evil = payload(&fx, "evil/ls");
    let rc = payload(&fx, "rc.sh");
    let run = unless_trusted(&fx);
    // Inside a `bash -c` line: PATH names the directory the payload is in.
    refused(
        run.shell(&ShellRequest::new(format!(
            "bash -c 'PATH={} ls'",
            evil.parent().unwrap().display()
        ))),
        "PATH",
    );
    // In corral's own grammar: bash runs BASH_ENV's file before the command.
    refused(
        run.shell(&ShellRequest::new(format!(
            "BASH_ENV={} bash -c true",
            rc.display()
        ))),
        "BASH_ENV",
    );
    refused(
        run.shell(&ShellRequest::new(format!(
            "env ENV={} sh -c true",
            rc.display()
        ))),
        "ENV",
    );
    assert!(!pwned(&fx), "the payload ran");
}

#[test]
fn an_env_deny_rule_refuses_the_assignment_and_names_the_rule() {
    let fx = Fixture::new();
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .policy(
            Policy::permissive()
                .layer("operator")
                .rule(Act::Env, "LD_*", Effect::Deny),
        )
        .open()
        .unwrap();
    refused(
        run.shell(&ShellRequest::new(
            "bash -c 'LD_PRELOAD=/nonexistent.so cat /dev/null'",
        )),
        r#"rule "LD_*" in layer operator"#,
    );
}

#[test]
fn git_reads_that_run_repository_programs_ask() {
    let fx = Fixture::new();
    let hook = payload(&fx, "fsmonitor.sh");
    let ws = fx.workspace();
    for args in [
        &["init", "-q"][..],
        &["config", "core.fsmonitor", hook.to_str().unwrap()],
    ] {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&ws)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }
    let run = unless_trusted(&fx);
    refused(run.shell(&ShellRequest::new("git status")), "not approved");
    refused(run.shell(&ShellRequest::new("git diff")), "not approved");
    assert!(!pwned(&fx), "git ran the repository's fsmonitor");
    // What it stays safe for: nothing the repository names runs.
    let line = run
        .shell(&ShellRequest::new("git rev-parse --git-dir"))
        .unwrap();
    assert!(line.status.success(), "{}", line.observation);
    assert!(!pwned(&fx));
}

#[test]
fn known_safe_programs_with_flags_that_run_code_ask() {
    let fx = Fixture::new();
    let p = payload(&fx, "p.sh");
    std::fs::write(fx.workspace().join("f"), "b\na\n").unwrap();
    let run = unless_trusted(&fx);
    for line in [
        format!("sort --compress-program={} -S 1 f", p.display()),
        format!("sort --compress={} f", p.display()),
        format!("sed -n '1e {}' f", p.display()),
        format!("sed 's/a/{}/e' f", p.display()),
        format!("find . -name f -exec {} ';'", p.display()),
        format!("bash -c 'sed 1e{} f'", p.display()),
    ] {
        refused(run.shell(&ShellRequest::new(line.as_str())), "not approved");
    }
    assert!(!pwned(&fx), "a known-safe program ran the payload");
}

#[test]
fn launchers_do_not_reach_a_denied_program() {
    let fx = Fixture::new();
    let v = victim(&fx);
    let run = deny_rm(&fx);
    for line in [
        "strace -f -o /dev/null rm victim",
        "script -qc 'rm victim' /dev/null",
        "runuser -u root -- rm victim",
        "systemd-run --wait -q rm victim",
        "setpriv --reuid=0 rm victim",
        "unshare -m rm victim",
    ] {
        refused(run.shell(&ShellRequest::new(line)), r#"rule "rm""#);
        assert!(v.exists(), "{line}: the victim is gone");
    }
    // What corral cannot see into asks (and nobody approves), never runs on its name.
    for line in [
        "echo 'rm victim' | xargs sh -c",
        "echo victim | xargs -I{} sh -c 'rm {}'",
        "echo 'rm victim' | xargs bash",
    ] {
        let err = run.shell(&ShellRequest::new(line)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Refused, "{line}: {err}");
        assert!(v.exists(), "{line}: the victim is gone");
    }
}

#[test]
fn a_denied_program_under_another_name_is_still_denied() {
    let fx = Fixture::new();
    let ws = fx.workspace();
    let v = victim(&fx);
    std::os::unix::fs::symlink("/bin/rm", ws.join("del")).unwrap();
    let run = deny_rm(&fx);
    for line in ["./del victim", "env ./del victim", "bash -c './del victim'"] {
        refused(
            run.shell(&ShellRequest::new(line)),
            "the program is the same file as",
        );
        assert!(v.exists(), "{line}: the victim is gone");
    }
    let err = run
        .exec(&ExecRequest::new(["./del", "victim"]))
        .unwrap_err();
    assert!(err.to_string().contains(r#"rule "rm""#), "{err}");
    assert!(v.exists());
}

#[test]
fn a_denied_program_under_another_name_on_the_commands_own_path_is_denied() {
    // The command's PATH leads to a directory that corral's own PATH does not have: the
    // file the command would run, found there, is the denied one.
    let fx = Fixture::new();
    let ws = fx.workspace();
    let v = victim(&fx);
    let bin = ws.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink("/bin/rm", bin.join("del")).unwrap();
    let mut config = corral::Config::default();
    config
        .env
        .set
        .insert("PATH".into(), format!("{}:/usr/bin:/bin", bin.display()));
    let run = Run::builder(&ws)
        .store(fx.store())
        .config(config)
        .policy(Policy::permissive().layer("operator").deny_exec("rm"))
        .approver(DenyAll)
        .open()
        .unwrap();
    refused(
        run.exec(&ExecRequest::new(["del", "victim"])),
        "the program is the same file as",
    );
    assert!(v.exists(), "the victim is gone");
}

#[test]
fn a_hard_link_to_a_denied_path_is_denied() {
    let fx = Fixture::new();
    let ws = fx.workspace();
    let tool = payload(&fx, "tools/tool");
    std::fs::hard_link(&tool, ws.join("alias")).unwrap();
    let run = Run::builder(&ws)
        .store(fx.store())
        .policy(Policy::permissive().deny_exec(tool.to_str().unwrap()))
        .open()
        .unwrap();
    let err = run.shell(&ShellRequest::new("./alias")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(err.to_string().contains("device"), "{err}");
    assert!(err.to_string().contains("inode"), "{err}");
    assert!(!pwned(&fx));
}

#[test]
fn a_multi_call_binary_is_judged_by_the_name_it_runs_under() {
    let fx = Fixture::new();
    let mc = fx.workspace().join("mc");
    std::fs::create_dir(&mc).unwrap();
    std::fs::copy(which("echo"), mc.join("busybox")).unwrap();
    std::os::unix::fs::symlink("busybox", mc.join("rm")).unwrap();
    std::os::unix::fs::symlink("busybox", mc.join("hello")).unwrap();
    let denied = mc.join("rm");
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .policy(Policy::permissive().deny_exec(denied.to_str().unwrap()))
        .open()
        .unwrap();
    // `hello` is the same file as the denied `rm`, but a multi-call binary is every
    // program: its name decides.
    let line = run.shell(&ShellRequest::new("./mc/hello hi")).unwrap();
    assert!(line.status.success(), "{}", line.observation);
    let err = run.shell(&ShellRequest::new("./mc/rm x")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
}

fn which(name: &str) -> PathBuf {
    std::env::var("PATH")
        .unwrap()
        .split(':')
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not on PATH"))
}

#[test]
fn commands_in_options_do_not_reach_a_denied_program() {
    let fx = Fixture::new();
    let v = victim(&fx);
    let ws = fx.workspace();
    std::fs::write(ws.join("f"), "x\n").unwrap();
    let ok = std::process::Command::new("tar")
        .args(["-cf", "a.tar", "f"])
        .current_dir(&ws)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let run = deny_rm(&fx);
    for line in [
        "tar --to-command='rm victim' -xf a.tar",
        "tar -I 'rm victim' -cf b.tar f",
        "tar --checkpoint=1 --checkpoint-action=exec='rm victim' -cf c.tar f",
        "sed -n '1e rm victim' f",
        "git -c alias.x='!rm victim' x",
        "perl -e 'system(\"rm victim\")'",
        "awk 'BEGIN { system(\"rm victim\") }'",
    ] {
        refused(run.shell(&ShellRequest::new(line)), r#"rule "rm""#);
        assert!(v.exists(), "{line}: the victim is gone");
    }
}

/// A shell or an interpreter that reads its program from a pipe runs what the stage
/// before it writes: written in the line (`echo`), it is checked as that program; made
/// when the line runs (`cat FILE`), it is taken to match the deny rule.
#[test]
fn a_program_piped_into_a_shell_does_not_pass_a_deny_rule() {
    let fx = Fixture::new();
    let run = deny_rm(&fx);
    let v = victim(&fx);
    std::fs::write(fx.workspace().join("cmds.txt"), "rm -f victim\n").unwrap();
    for line in [
        "echo 'rm -f victim' | sh",
        "echo -n rm -f victim | bash -s",
        "cat cmds.txt | sh",
        "cat cmds.txt | python3 -",
        "cat < cmds.txt | bash",
    ] {
        refused(run.shell(&ShellRequest::new(line)), "rm");
        assert!(v.exists(), "{line}: the victim is gone");
    }
    // Data piped into a program that does not run it is only data.
    let outcome = run
        .shell(&ShellRequest::new("cat cmds.txt | wc -l"))
        .unwrap();
    assert_eq!(outcome.status, corral::Status::Exited { code: 0 });
    let outcome = run
        .shell(&ShellRequest::new("cat cmds.txt | sort"))
        .unwrap();
    assert!(
        outcome.observation.contains("rm -f victim"),
        "{}",
        outcome.observation
    );
    assert!(v.exists());
}

/// A script whose `#!` line names a denied program runs that program: the kernel starts
/// `/bin/rm ./tool victim`. Refused as rm is, whether the line names it by path or
/// through `env`; a script of an allowed interpreter runs as before.
#[test]
fn a_script_whose_interpreter_is_denied_is_refused() {
    let fx = Fixture::new();
    let run = deny_rm(&fx);
    let v = victim(&fx);
    for (name, shebang) in [("tool", "#!/bin/rm\n"), ("tool2", "#!/usr/bin/env rm\n")] {
        let script = fx.workspace().join(name);
        std::fs::write(&script, shebang).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        refused(
            run.shell(&ShellRequest::new(format!("./{name} victim"))),
            "rule \"rm\"",
        );
        refused(
            run.exec(&ExecRequest::new([format!("./{name}"), "victim".into()])),
            "rule \"rm\"",
        );
        assert!(v.exists(), "{name} removed the victim");
    }
    payload(&fx, "fine.sh");
    let ran = run.shell(&ShellRequest::new("./fine.sh")).unwrap();
    assert!(ran.status.success(), "{}", ran.observation);
    assert!(pwned(&fx));
}

/// Inside a line a command runs (`sh -c`), a program the line itself makes is no more
/// checkable than at the top: asked about where a rule must hold for every program, and
/// refused with nobody to ask.
#[test]
fn a_program_made_inside_a_nested_line_is_asked_about() {
    let fx = Fixture::new();
    let run = denying_in(&fx, "rm", corral::sandbox::SandboxMode::Full);
    let v = victim(&fx);
    let err = run
        .shell(&ShellRequest::new(
            "sh -c 'cp /bin/rm tool && ./tool victim'",
        ))
        .expect_err("asked, and nobody approves");
    assert!(
        err.to_string()
            .contains("does not exist when the line is checked"),
        "{err}"
    );
    assert!(v.exists());
    assert!(!fx.workspace().join("tool").exists(), "the line ran");
}

/// A shell script run from its file is the line it holds (`sh y.sh`, `bash ./y.sh`,
/// `./y.sh` whose `#!` names a shell, from inside a `sh -c`, a script another script
/// runs): outside a box, where corral's checks alone hold a deny, its text is checked. A
/// script the line itself writes first, or one that is not there, cannot be checked:
/// asked about, and refused with nobody to ask. A script of allowed commands runs.
#[test]
fn a_shell_script_run_from_its_file_is_checked_as_its_text() {
    let fx = Fixture::new();
    let run = denying_in(&fx, "rm", corral::sandbox::SandboxMode::Full);
    let v = victim(&fx);
    let ws = fx.workspace();
    std::fs::write(ws.join("y.sh"), "echo cleaning\nrm victim\n").unwrap();
    std::fs::write(ws.join("outer.sh"), "echo start\nsh y.sh\n").unwrap();
    std::fs::write(ws.join("run.sh"), "#!/bin/sh\nrm -f victim\n").unwrap();
    std::fs::write(ws.join("env.sh"), "#!/usr/bin/env bash\nrm victim\n").unwrap();
    for name in ["run.sh", "env.sh"] {
        std::fs::set_permissions(ws.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for line in [
        "sh y.sh",
        "bash -e ./y.sh",
        "cd . && /bin/sh y.sh",
        "./run.sh",
        "./env.sh",
        "bash -c 'sh y.sh'",
        "sh outer.sh",
    ] {
        refused(run.shell(&ShellRequest::new(line)), "rule \"rm\"");
        assert!(v.exists(), "{line}: the victim is gone");
    }
    refused(run.exec(&ExecRequest::new(["bash", "y.sh"])), "rule \"rm\"");
    // A named pipe where the script should be is not waited on.
    assert!(
        std::process::Command::new("mkfifo")
            .arg(ws.join("pipe.sh"))
            .status()
            .unwrap()
            .success()
    );
    for line in [
        "printf 'rm victim' > z.sh && sh z.sh",
        "cp y.sh w.sh; sh w.sh",
        "sh missing.sh",
        "sh pipe.sh",
    ] {
        refused(run.shell(&ShellRequest::new(line)), "cannot be checked");
        assert!(v.exists(), "{line}: the victim is gone");
        assert!(
            !ws.join("z.sh").exists() && !ws.join("w.sh").exists(),
            "{line} ran"
        );
    }
    std::fs::write(ws.join("ok.sh"), "echo fine > done.txt\n").unwrap();
    let ran = run.shell(&ShellRequest::new("sh ok.sh")).unwrap();
    assert!(ran.status.success(), "{}", ran.observation);
    assert!(ws.join("done.txt").exists());
}

/// In the box the stubs hold a program denied by name, not a rule over arguments: a
/// script holding `git push` is refused by its text under `git push*` before it starts.
#[test]
fn a_script_s_text_holds_a_rule_over_arguments_in_the_box() {
    let fx = Fixture::new();
    let run = denying_in(
        &fx,
        "git push*",
        corral::sandbox::SandboxMode::WorkspaceWrite,
    );
    let ws = fx.workspace();
    std::fs::write(ws.join("ship.sh"), "touch ran\ngit push origin HEAD\n").unwrap();
    refused(
        run.shell(&ShellRequest::new("sh ship.sh")),
        "rule \"git push*\"",
    );
    assert!(!ws.join("ran").exists(), "the script ran");
    std::fs::write(ws.join("build.sh"), "touch built\n").unwrap();
    let ran = run.shell(&ShellRequest::new("sh build.sh")).unwrap();
    assert!(ran.status.success(), "{}", ran.observation);
    assert!(ws.join("built").exists());
}
