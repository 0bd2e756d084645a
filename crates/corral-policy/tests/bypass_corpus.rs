//! Under `deny rm`, every way of reaching `rm` through a launcher is denied,
//! and harmless commands are not.

use std::path::Path;

use corral_policy::{CommandCheck, Effect, Policy};

fn policy() -> Policy {
    Policy::permissive().layer("operator").deny_exec("rm")
}

fn check(policy: &Policy, argv: &[&str]) -> corral_policy::Verdict {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    policy.check_command(&CommandCheck {
        argv: &argv,
        program_path: None,
    })
}

const CORPUS: &[&[&str]] = &[
    &["rm", "x"],
    &["/bin/rm", "x"],
    &["env", "rm", "x"],
    &["env", "-i", "FOO=1", "rm", "x"],
    &["nice", "-n", "5", "rm", "x"],
    &["timeout", "5", "rm", "x"],
    &["timeout", "-s", "KILL", "5", "rm", "x"],
    &["xargs", "rm"],
    &["xargs", "-0", "-n1", "rm"],
    &["sudo", "rm", "x"],
    &["sudo", "-u", "root", "rm", "x"],
    &["command", "rm", "x"],
    &["find", ".", "-exec", "rm", "{}", "+"],
    &["find", ".", "-name", "x", "-execdir", "rm", "{}", ";"],
    &["busybox", "rm", "x"],
    &["bash", "-c", "rm -rf x"],
    &["sh", "-c", "ls && rm x"],
    &["bash", "-lc", "cd /tmp; rm x"],
    &["env", "bash", "-c", "nice rm x"],
    &["nohup", "setsid", "rm", "x"],
    &["stdbuf", "-oL", "rm", "x"],
    &["/lib64/ld-linux-x86-64.so.2", "/bin/rm", "x"],
    &[
        "/lib/ld-linux-aarch64.so.1",
        "--argv0",
        "ls",
        "/bin/rm",
        "x",
    ],
    &["env", "/lib/ld-musl-x86_64.so.1", "rm", "x"],
    &["ld.so", "--library-path", "/tmp", "--", "/usr/bin/rm", "x"],
    &["sh", "-c", "echo rm x | sh"],
    &["bash", "-c", "printf 'rm x' | bash -s"],
    &["bash", "-c", "bash <<< 'rm x'"],
    &["sh", "-c", "sh <<EOF\nrm x\nEOF"],
    &[
        "bash",
        "-c",
        "python3 - <<< 'import os; os.system(\"rm x\")'",
    ],
];

#[test]
fn every_launcher_of_rm_is_denied() {
    let policy = policy();
    for argv in CORPUS {
        let verdict = check(&policy, argv);
        assert_eq!(verdict.effect, Effect::Deny, "{argv:?}:\n{verdict}");
        let decisive = verdict.decisive();
        assert_eq!(decisive.rule.as_ref().unwrap().pattern(), "rm", "{argv:?}");
        assert_eq!(decisive.rule.as_ref().unwrap().layer(), "operator");
    }
}

#[test]
fn more_launchers_are_denied() {
    let policy = policy();
    for argv in [
        &["/usr/bin/env", "rm", "x"][..],
        &["sudo", "-nu", "root", "--", "rm", "x"],
        &["doas", "rm", "x"],
        &["su", "-c", "rm x"],
        &["su", "root", "-c", "rm x"],
        &["toybox", "rm", "x"],
        &["find", ".", "-delete"],
        &["find", ".", "-ok", "rm", "{}", ";"],
        &["watch", "rm", "x"],
        &["watch", "-x", "rm", "x"],
        &["flock", "/tmp/l", "rm", "x"],
        &["flock", "/tmp/l", "-c", "rm x"],
        &["chroot", "/", "rm", "x"],
        &["ionice", "-c3", "rm", "x"],
        &["taskset", "-c", "0", "rm", "x"],
        &["chrt", "-f", "10", "rm", "x"],
        &["unbuffer", "rm", "x"],
        &["time", "-p", "rm", "x"],
        &["exec", "rm", "x"],
        &["env", "-S", "rm x"],
        &["bash", "-o", "pipefail", "-c", "ls | rm x"],
        &["bash", "-c", "echo $HOME; rm -rf x"],
        &["sh", "-c", "sh -c 'bash -c \"rm x\"'"],
        &["python3", "-c", "x"],
    ] {
        let verdict = check(&policy, argv);
        let expected = if argv[0] == "python3" {
            Effect::Ask
        } else {
            Effect::Deny
        };
        assert_eq!(verdict.effect, expected, "{argv:?}:\n{verdict}");
    }
}

#[test]
fn the_resolved_path_is_checked_too() {
    let policy = Policy::permissive().deny_exec("/usr/bin/rm");
    let argv = vec!["rm".to_string(), "x".to_string()];
    let verdict = policy.check_command(&CommandCheck {
        argv: &argv,
        program_path: Some(Path::new("/usr/bin/rm")),
    });
    assert_eq!(verdict.effect, Effect::Deny);
    let verdict = policy.check_command(&CommandCheck {
        argv: &argv,
        program_path: Some(Path::new("/bin/rm")),
    });
    assert_eq!(verdict.effect, Effect::Allow);
}

#[test]
fn harmless_commands_are_not_denied() {
    let policy = policy();
    for argv in [
        &["ls"][..],
        &["env", "ls"],
        &["bash", "-c", "ls | wc -l"],
        &["rmdir", "x"],
        &["echo", "rm"],
        &["find", ".", "-name", "rm"],
        &["xargs", "echo"],
    ] {
        let verdict = check(&policy, argv);
        assert_eq!(verdict.effect, Effect::Allow, "{argv:?}:\n{verdict}");
    }
}

#[test]
fn inner_decisions_say_how_they_were_reached() {
    let verdict = check(&policy(), &["env", "bash", "-c", "nice rm x"]);
    let d = verdict.decisive();
    assert_eq!(d.target, "rm x");
    assert_eq!(d.via, ["env", "bash -c", "nice"]);
    assert_eq!(
        d.to_string(),
        "deny  exec  rm x  (rule \"rm\" in layer operator, library; via env > bash -c > nice)"
    );
}

fn check_env(policy: &Policy, env: &[(&str, &str)], argv: &[&str]) -> corral_policy::Verdict {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    policy.check_simple(&corral_policy::SimpleCommand {
        env: &env,
        argv: &argv,
        ..Default::default()
    })
}

/// Class 1: an assignment in front of a known-safe program is checked,
/// wherever the line is parsed, and keeps it off the known-safe list.
#[test]
fn assignments_that_change_what_runs_ask_and_are_not_known_safe() {
    let policy = Policy::permissive();
    for argv in [
        &["bash", "-c", "PATH=./evil ls"][..],
        &["sh", "-c", "LD_PRELOAD=/tmp/x.so cat f"],
        &["bash", "-c", "BASH_ENV=./rc bash -c true"],
        &["sh", "-c", "GIT_EXTERNAL_DIFF=./x git diff"],
        &["sh", "-c", "ENV=./rc sh -c true"],
        &["bash", "-c", "PAGER=./x git log"],
        &["bash", "-c", "EDITOR=./x VISUAL=./x ls"],
        &["bash", "-c", "PYTHONPATH=. python3 --version"],
        &["bash", "-c", "NODE_OPTIONS=--require=./x node --version"],
        &["bash", "-c", "PERL5OPT=-Mevil perl --version"],
        &["bash", "-c", "RUBYOPT=-r./x ruby --version"],
        &["bash", "-c", "HOME=. git --version"],
        &["bash", "-c", "XDG_CONFIG_HOME=. ls"],
        &["bash", "-c", "RIPGREP_CONFIG_PATH=./rc rg x"],
        &["env", "BASH_FUNC_ls%%=() { id; }", "bash", "-c", "ls"],
        &["env", "GIT_SSH_COMMAND=./x", "git", "--version"],
        &["env", "-i", "LD_LIBRARY_PATH=.", "ls"],
        &["sudo", "LD_PRELOAD=x.so", "ls"],
        &["strace", "-E", "LD_PRELOAD=x.so", "ls"],
        &["systemd-run", "-E", "PATH=/tmp", "ls"],
        &["firejail", "--env=LD_PRELOAD=x.so", "ls"],
        &["zsh", "-c", "PATH=./evil ls"],
        &["nice", "env", "PATH=.", "ls"],
    ] {
        let verdict = check(&policy, argv);
        assert_eq!(verdict.effect, Effect::Ask, "{argv:?}:\n{verdict}");
        assert!(!verdict.known_safe, "{argv:?}");
        let d = verdict.decisive();
        assert_eq!(d.act, corral_policy::Act::Env, "{argv:?}:\n{verdict}");
        assert!(
            matches!(d.why, corral_policy::Why::RiskyVariable { .. }),
            "{argv:?}: {d}"
        );
        assert!(
            verdict
                .not_safe
                .as_deref()
                .unwrap_or("")
                .contains("assigns")
                || verdict.not_safe.is_some()
        );
    }
    // The assignments a caller parsed itself (corral's grammar, a bash parser).
    let v = check_env(&policy, &[("LD_PRELOAD", "/tmp/x.so")], &["ls"]);
    assert_eq!(v.effect, Effect::Ask, "{v}");
    assert!(!v.known_safe);
    assert_eq!(
        v.decisions[0].to_string(),
        "ask   env   LD_PRELOAD=/tmp/x.so  (LD_PRELOAD: the loader injects code into every program; built-in default for env = ask)"
    );
    let v = check_env(&policy, &[("FOO", "1")], &["ls"]);
    assert_eq!(v.effect, Effect::Allow, "{v}");
    assert!(v.known_safe);
}

#[test]
fn env_rules_decide_assignments() {
    let text = "[env]\ndeny = [\"LD_*\"]\nallow = [\"PYTHONPATH\", \"RUST_LOG=debug\"]\nask = [\"SECRET=*\"]\n";
    let file = corral_policy::config::parse(text, "corral.toml", "project").unwrap();
    let policy = Policy::permissive().with_file(file);
    let v = check(&policy, &["bash", "-c", "LD_PRELOAD=x.so ls"]);
    assert_eq!(v.effect, Effect::Deny, "{v}");
    assert_eq!(v.decisive().rule.as_ref().unwrap().pattern(), "LD_*");
    assert!(
        v.decisive().to_string().contains("corral.toml:2"),
        "{}",
        v.decisive()
    );
    let v = check(&policy, &["env", "PYTHONPATH=src", "python3", "--version"]);
    assert_eq!(v.effect, Effect::Allow, "{v}");
    // An allowed risky variable still keeps the command off the known-safe list.
    assert!(!v.known_safe);
    let v = check(&policy, &["bash", "-c", "SECRET=x ls"]);
    assert_eq!(v.effect, Effect::Ask, "{v}");
    let v = check(&policy, &["bash", "-c", "RUST_LOG=debug ls"]);
    assert_eq!(v.effect, Effect::Allow, "{v}");
    assert_eq!(
        policy.check(corral_policy::Act::Env, "LD_AUDIT=x").effect,
        Effect::Deny
    );
    // A deny in another layer is not lifted by an allow.
    let policy = Policy::permissive()
        .layer("operator")
        .rule(corral_policy::Act::Env, "PATH", Effect::Deny)
        .layer("project")
        .rule(corral_policy::Act::Env, "PATH", Effect::Allow);
    assert_eq!(
        check(&policy, &["bash", "-c", "PATH=. ls"]).effect,
        Effect::Deny
    );
    // A strict tier makes an unruled risky assignment a deny.
    let v = check(
        &Policy::strict().allow_exec("ls"),
        &["bash", "-c", "PATH=. ls"],
    );
    assert_eq!(v.effect, Effect::Deny, "{v}");
}

/// Class 3: launchers that run their arguments are unwrapped, or decided
/// like an unparsable line when corral cannot see what they run.
#[test]
fn launchers_reach_the_denied_program() {
    let policy = policy();
    for argv in [
        &["strace", "rm", "x"][..],
        &["strace", "-f", "-o", "/tmp/t", "rm", "x"],
        &["ltrace", "-o", "/tmp/t", "rm", "x"],
        &["script", "-qc", "rm x", "/dev/null"],
        &["script", "-q", "-c", "rm x", "/dev/null"],
        &["script", "--command=rm x"],
        &["tcsh", "-c", "rm x"],
        &["csh", "-c", "rm x"],
        &["nu", "-c", "rm x"],
        &["elvish", "-c", "rm x"],
        &["xonsh", "-c", "rm x"],
        &["fish", "-c", "true; and rm x"],
        &["zsh", "-c", "=rm x"],
        &["zsh", "-c", "noglob rm x"],
        &["zsh", "-c", "nocorrect rm x"],
        &["zsh", "-c", "true; - rm x"],
        &["parallel", "rm", ":::", "x"],
        &["parallel", "-j2", "rm {}", ":::", "x"],
        &["parallel", ":::", "rm x"],
        &["expect", "-c", "spawn rm x"],
        &["runuser", "-u", "nobody", "--", "rm", "x"],
        &["runuser", "-l", "nobody", "-c", "rm x"],
        &["systemd-run", "--user", "-p", "Nice=5", "rm", "x"],
        &["systemd-run", "--unit", "u1", "rm", "x"],
        &["pkexec", "--user", "root", "rm", "x"],
        &["firejail", "--noprofile", "rm", "x"],
        &["sudo", "-s", "rm x"],
        &["sudo", "-i", "rm", "x"],
        &["unshare", "-m", "rm", "x"],
        &["nsenter", "-t", "1", "-m", "rm", "x"],
        &["setpriv", "--reuid=1000", "rm", "x"],
        &["fakeroot", "rm", "x"],
        &["valgrind", "--tool=none", "rm", "x"],
        &["capsh", "--", "-c", "rm x"],
        &["sg", "users", "-c", "rm x"],
        &["gdb", "--args", "rm", "x"],
        &["xterm", "-e", "rm", "x"],
        &["builtin", "exec", "rm", "x"],
        &["prlimit", "--nofile=10", "rm", "x"],
        &["tmux", "new-session", "-d", "rm x"],
        &["screen", "-dm", "rm", "x"],
    ] {
        let verdict = check(&policy, argv);
        assert_eq!(verdict.effect, Effect::Deny, "{argv:?}:\n{verdict}");
        assert!(!verdict.known_safe, "{argv:?}");
    }
}

/// What a launcher runs that corral cannot see is asked about, never
/// allowed by the launcher's own name, even when nothing names a denied
/// program.
#[test]
fn opaque_launchers_ask_with_a_reason() {
    let policy = Policy::permissive();
    for (argv, reason) in [
        (&["xargs", "sh", "-c"][..], "adds words it reads"),
        (&["xargs", "env"], "adds words it reads"),
        (&["xargs", "bash"], "adds words it reads"),
        (&["xargs", "-I{}", "sh", "-c", "{}"], "adds words it reads"),
        (&["find", ".", "-exec", "{}", ";"], "adds words it reads"),
        (
            &["find", ".", "-exec", "sh", "-c", "{}", ";"],
            "adds words it reads",
        ),
        (&["parallel"], "runs its arguments or stdin's lines"),
        (
            &["parallel", ":::", "echo hi"],
            "runs its arguments or stdin's lines",
        ),
        (&["fish", "-c", "echo hi"], "not in a language corral reads"),
        (&["tcsh", "-c", "echo hi"], "not in a language corral reads"),
        (&["expect", "-c", "puts hi"], "a Tcl program"),
        (&["envdir", "./env", "ls"], "variables read from files"),
        (
            &["tmux", "send-keys", "-t", "0", "echo hi", "Enter"],
            "tmux",
        ),
        (&["runuser", "nobody", "-x"], "user's shell"),
    ] {
        let verdict = check(&policy, argv);
        assert_eq!(verdict.effect, Effect::Ask, "{argv:?}:\n{verdict}");
        assert!(
            verdict.to_string().contains(reason),
            "{argv:?} should say {reason:?}:\n{verdict}"
        );
    }
    // Still fine: what they run is known.
    for argv in [
        &["xargs", "rm"][..],
        &["xargs", "sh", "-c", "echo hi", "_"],
        &["find", ".", "-exec", "sh", "-c", "echo hi", "_", "{}", ";"],
        &["tmux", "ls"],
        &["strace", "-p", "1"],
    ] {
        let verdict = check(&Policy::permissive(), argv);
        assert_eq!(verdict.effect, Effect::Allow, "{argv:?}:\n{verdict}");
    }
}

/// Class 4: a program that is the same file as a denied one is denied,
/// and the decision names the file.
#[test]
fn a_program_that_is_the_same_file_as_a_denied_one_is_denied() {
    let policy = policy();
    let same = [corral_policy::SameFile {
        program: "./del".into(),
        path: "/usr/bin/rm".into(),
        device: 2049,
        inode: 1234,
    }];
    for argv in [
        &["./del", "x"][..],
        &["env", "./del", "x"],
        &["bash", "-c", "./del x"],
    ] {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let v = policy.check_simple(&corral_policy::SimpleCommand {
            argv: &argv,
            same_files: &same,
            ..Default::default()
        });
        assert_eq!(v.effect, Effect::Deny, "{argv:?}:\n{v}");
        let d = v.decisive();
        assert!(matches!(d.why, corral_policy::Why::SameFile { .. }), "{d}");
        assert!(
            d.to_string().contains(
                "the program is the same file as /usr/bin/rm (device 2049, inode 1234); rule \"rm\""
            ),
            "{d}"
        );
        assert!(!v.known_safe);
        assert!(
            v.programs.contains(&"./del".to_string()),
            "{:?}",
            v.programs
        );
    }
    assert_eq!(policy.ruled_programs(Effect::Ask), ["rm"]);
}

/// Programs that run a command given in an option: the command is checked, or decided
/// like an unparsable line (and denied when it names a denied program).
#[test]
fn commands_in_options_reach_the_denied_program() {
    let policy = policy();
    for argv in [
        &["tar", "--to-command=rm x", "-xf", "a.tar"][..],
        &["tar", "--to-command", "rm x", "-xf", "a.tar"],
        &["tar", "-I", "rm x", "-cf", "a.tar", "f"],
        &["tar", "--use-compress-program=rm x", "-cf", "a.tar", "f"],
        &[
            "tar",
            "--checkpoint=1",
            "--checkpoint-action=exec=rm x",
            "-cf",
            "a.tar",
            "f",
        ],
        &["rsync", "-e", "rm x", "a", "b:c"],
        &["rsync", "--rsh=rm x", "a", "b:c"],
        &["ssh", "-o", "ProxyCommand=rm x", "h"],
        &[
            "ssh",
            "-oLocalCommand=rm x",
            "-oPermitLocalCommand=yes",
            "h",
        ],
        &["scp", "-S", "rm", "a", "h:b"],
        &["git", "-c", "alias.x=!rm x", "x"],
        &["git", "-c", "core.pager=rm x", "log"],
        &["git", "-c", "core.sshCommand=rm x", "fetch"],
        &["git", "rebase", "--exec", "rm x", "HEAD~1"],
        &["git", "rebase", "-x", "rm x", "HEAD~1"],
        &["git", "grep", "-Orm", "x"],
        &["git", "submodule", "foreach", "rm", "x"],
        &["git", "bisect", "run", "rm", "x"],
        &["git", "fetch", "--upload-pack=rm x", "origin"],
        &["sed", "1e rm x", "f"],
        &["sed", "-n", "-e", "1e rm x", "f"],
        &["vim", "-es", "-c", "!rm x", "-c", "q"],
        &["vim", "+!rm x", "f"],
        &["emacs", "--batch", "--eval", "(shell-command \"rm x\")"],
        &["man", "-P", "rm x", "ls"],
        &["zip", "-T", "-TT", "rm x", "a.zip", "f"],
        &["npx", "-c", "rm x"],
        &["npm", "exec", "--", "rm", "x"],
        &["perl", "-e", "system(\"rm x\")"],
        &["awk", "BEGIN { system(\"rm x\") }"],
        &["python3", "-c", "import os; os.system('rm x')"],
    ] {
        let verdict = check(&policy, argv);
        assert_eq!(verdict.effect, Effect::Deny, "{argv:?}:\n{verdict}");
    }
    // The schedulers run later, outside corral: asked about.
    for argv in [
        &["crontab", "-"][..],
        &["crontab", "jobs.txt"],
        &["at", "now"],
        &["batch"],
    ] {
        let verdict = check(&Policy::permissive(), argv);
        assert_eq!(verdict.effect, Effect::Ask, "{argv:?}:\n{verdict}");
    }
    // Harmless uses are left alone.
    for argv in [
        &["tar", "-xf", "a.tar"][..],
        &["git", "-c", "user.name=x", "commit", "-m", "m"],
        &["sed", "-i", "s/hello/world/", "f"],
        &["crontab", "-l"],
        &["ssh", "-o", "BatchMode=yes", "h", "ls"],
    ] {
        let verdict = check(&Policy::permissive(), argv);
        assert_eq!(verdict.effect, Effect::Allow, "{argv:?}:\n{verdict}");
    }
}

/// A rule over git's words (`git push*`) holds whatever comes between `git` and them:
/// options before the subcommand, an alias the line defines, the subcommand's own program.
#[test]
fn a_rule_over_git_words_holds_through_its_options_and_aliases() {
    let policy = Policy::permissive()
        .layer("operator")
        .deny_exec("git push*");
    for argv in [
        &["git", "push", "origin", "main"][..],
        &["git", "-C", ".", "push", "origin"],
        &["/usr/bin/git", "--no-pager", "push"],
        &["git", "-P", "push"],
        &["git", "--git-dir=.git", "--work-tree=.", "push"],
        &["git", "-c", "push.default=current", "push"],
        &["git", "-c", "alias.p=push", "p", "origin"],
        &["git", "-c", "alias.p=push --force", "p"],
        &["/usr/lib/git-core/git-push", "origin"],
        &["env", "git", "-C", "sub", "push"],
        &["bash", "-c", "git --no-pager push origin"],
        &["git", "-c", "alias.s=!git push", "s"],
        &["git", "send-pack", "origin", "main"],
        &[
            "git",
            "-C",
            ".",
            "http-push",
            "https://example.com/r.git",
            "main",
        ],
        &["/usr/lib/git-core/git-send-pack", "origin", "main"],
    ] {
        let verdict = check(&policy, argv);
        assert_eq!(verdict.effect, Effect::Deny, "{argv:?}:\n{verdict}");
        let rule = verdict.decisive().rule.clone().unwrap();
        assert_eq!(rule.pattern(), "git push*", "{argv:?}");
    }
    for argv in [
        &["git", "-C", "sub", "status"][..],
        &["git", "--no-pager", "log", "--", "push"],
        &["git", "-c", "alias.p=pull", "p"],
    ] {
        let verdict = check(&policy, argv);
        assert_ne!(verdict.effect, Effect::Deny, "{argv:?}:\n{verdict}");
    }
}

/// A git subcommand git does not have is an alias from its configuration (`git config
/// alias.pp push` in a call before): it may be any git command, so a rule over git's words
/// is asked about; git's own commands, and any subcommand without such a rule, are not.
#[test]
fn a_git_alias_from_configuration_is_asked_about_under_a_rule_over_git_words() {
    let policy = Policy::permissive()
        .layer("operator")
        .deny_exec("git push*");
    for argv in [
        &["git", "pp", "origin", "main"][..],
        &["git", "-C", "sub", "pp"],
        &["bash", "-c", "git pp"],
    ] {
        let verdict = check(&policy, argv);
        assert_eq!(verdict.effect, Effect::Ask, "{argv:?}:\n{verdict}");
        assert!(
            verdict.to_string().contains("none of git's"),
            "{argv:?}:\n{verdict}"
        );
    }
    for argv in [
        &["git", "status"][..],
        &["git", "log", "--oneline"],
        &["git", "commit", "-m", "pp"],
    ] {
        let verdict = check(&policy, argv);
        assert_eq!(verdict.effect, Effect::Allow, "{argv:?}:\n{verdict}");
    }
    let verdict = check(&Policy::permissive(), &["git", "pp", "origin"]);
    assert_eq!(verdict.effect, Effect::Allow, "{verdict}");
}

/// Arguments a launcher adds when it runs (`xargs git`, `find -exec git {}`) could make
/// a rule over git's words match: asked about, not run unasked; words that cannot make
/// it match (`git add …`) leave the command as it was.
#[test]
fn arguments_added_when_it_runs_are_asked_about_where_they_could_match() {
    let policy = Policy::permissive()
        .layer("operator")
        .deny_exec("git push*");
    for argv in [
        &["xargs", "git"][..],
        &["xargs", "-n1", "git"],
        &["bash", "-c", "echo push origin | xargs git"],
        &["find", ".", "-name", "x", "-exec", "git", "{}", ";"],
        &["parallel", "git", ":::", "push"],
    ] {
        let verdict = check(&policy, argv);
        assert_eq!(verdict.effect, Effect::Ask, "{argv:?}:\n{verdict}");
        assert!(
            verdict
                .to_string()
                .contains("\"git push*\" (layer operator)"),
            "{argv:?}:\n{verdict}"
        );
    }
    for argv in [
        &["xargs", "git", "add"][..],
        &["find", ".", "-exec", "git", "add", "{}", "+"],
        &["xargs", "ls"],
    ] {
        let verdict = check(&policy, argv);
        assert_eq!(verdict.effect, Effect::Allow, "{argv:?}:\n{verdict}");
    }
}
