//! Launchers beyond the classic wrappers: tracers (`strace`, `ltrace`),
//! `script -c`, `runuser`, `systemd-run`, `pkexec`, `firejail`, GNU
//! `parallel`, `expect`, and a family of tools that run the rest of their
//! argv (`unshare`, `nsenter`, `setpriv`, `fakeroot`, `valgrind`, ...).
//!
//! Where a tool's options are not modelled exactly ([`generic`]), every
//! plausible start of the command among its first operands is checked, so
//! a misread option value can only make the check stricter.

use super::opts::{Spec, parse};
use super::step::RunsUnknown;
use super::step::{Inner, Step, UNKNOWN, owned};
use super::wrappers::assignments;

fn argv(via: &str, rest: &[String]) -> Option<Vec<Step>> {
    (!rest.is_empty()).then(|| vec![Step::new(via, Inner::Argv(owned(rest)))])
}

fn assign_values(via: &str, values: Vec<&str>) -> Option<Step> {
    let pairs: Vec<(String, String)> = values
        .into_iter()
        .filter_map(|v| v.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (!pairs.is_empty()).then(|| Step::new(via, Inner::Assign(pairs)))
}

/// `strace [opts] cmd...` / `ltrace [opts] cmd...`; with `-p PID` and no
/// command they attach to a running process and start nothing.
pub(super) fn trace(name: &str, args: &[String]) -> Option<Vec<Step>> {
    let spec = if name == "strace" {
        Spec {
            short_val: "abeEIoOpPsSuUX",
            long_val: &[
                "output",
                "trace",
                "signal",
                "status",
                "attach",
                "env",
                "user",
                "string-limit",
                "summary-sort-by",
                "columns",
                "trace-path",
                "detach-on",
                "const-print-style",
                "decode-fds",
                "abbrev",
                "verbose",
                "raw",
                "read",
                "write",
                "fault",
                "inject",
                "quiet",
                "silent",
            ],
            ..Spec::default()
        }
    } else {
        Spec {
            short_val: "aADeFlnopsuwx",
            long_val: &["output", "library", "config", "indent", "align"],
            ..Spec::default()
        }
    };
    let p = parse(args, &spec);
    let mut steps: Vec<Step> = Vec::new();
    let env: Vec<&str> = p
        .values
        .iter()
        .filter(|(k, _)| k == "E" || k == "env")
        .map(|(_, v)| *v)
        .collect();
    steps.extend(assign_values(name, env));
    steps.extend(argv(name, &args[p.operand..]).into_iter().flatten());
    (!steps.is_empty()).then_some(steps)
}

/// `script [opts] [file]` runs `$SHELL -c CMD` for `-c CMD`; without it, an
/// interactive shell (the terminal check's business).
pub(super) fn script(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        short_val: "cEIOBTm",
        long_val: &[
            "command",
            "echo",
            "log-in",
            "log-out",
            "log-io",
            "log-timing",
            "logging-format",
            "output-limit",
        ],
        ..Spec::default()
    };
    let p = parse(args, &spec);
    let line = p.value("c").or_else(|| p.value("command"))?;
    Some(vec![Step::new("script -c", Inner::Line(line.to_string()))])
}

/// `runuser -u USER [--] cmd...`, or `runuser [-l] USER -c LINE` (as `su`).
pub(super) fn runuser(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        short_val: "ugGcsw",
        long_val: &[
            "user",
            "group",
            "supp-group",
            "command",
            "session-command",
            "shell",
            "whitelist-environment",
        ],
        ..Spec::default()
    };
    let p = parse(args, &spec);
    if let Some(line) = p
        .value("c")
        .or_else(|| p.value("command"))
        .or_else(|| p.value("session-command"))
    {
        return Some(vec![Step::new("runuser -c", Inner::Line(line.to_string()))]);
    }
    if p.has('u') || p.has_long("user") {
        return argv("runuser", &args[p.operand..]);
    }
    // `runuser USER ARGS...` passes ARGS to the user's shell.
    let rest = args.get(p.operand + 1..).unwrap_or(&[]);
    (!rest.is_empty()).then(|| {
        vec![Step::new(
            "runuser",
            Inner::Opaque(format!(
                "`runuser USER ARGS` passes ARGS to the user's shell: {}",
                rest.join(" ")
            )),
        )]
    })
}

/// `systemd-run [opts] cmd...` (`-E NAME=VALUE` sets a variable for it).
pub(super) fn systemd_run(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        short_val: "pEHMu",
        long_val: &[
            "property",
            "setenv",
            "host",
            "machine",
            "unit",
            "slice",
            "description",
            "uid",
            "gid",
            "nice",
            "working-directory",
            "service-type",
            "path-property",
            "socket-property",
            "timer-property",
            "on-active",
            "on-boot",
            "on-startup",
            "on-unit-active",
            "on-unit-inactive",
            "on-calendar",
            "on-timezone-change",
            "on-clock-change",
            "slice-inherit",
            "expand-environment",
        ],
        ..Spec::default()
    };
    let p = parse(args, &spec);
    let mut steps: Vec<Step> = Vec::new();
    let env: Vec<&str> = p
        .values
        .iter()
        .filter(|(k, _)| k == "E" || k == "setenv")
        .map(|(_, v)| *v)
        .collect();
    steps.extend(assign_values("systemd-run", env));
    steps.extend(
        argv("systemd-run", &args[p.operand..])
            .into_iter()
            .flatten(),
    );
    (!steps.is_empty()).then_some(steps)
}

/// `pkexec [--user USER] [--keep-cwd] [--disable-internal-agent] cmd...`
pub(super) fn pkexec(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        short_val: "u",
        long_val: &["user"],
        ..Spec::default()
    };
    let p = parse(args, &spec);
    argv("pkexec", &args[p.operand..])
}

/// `firejail [--opt[=value]]... cmd...` (`--env=NAME=VALUE` sets one).
pub(super) fn firejail(args: &[String]) -> Option<Vec<Step>> {
    let p = parse(args, &Spec::default());
    let mut steps: Vec<Step> = Vec::new();
    let env: Vec<&str> = p
        .values
        .iter()
        .filter(|(k, _)| k == "env")
        .map(|(_, v)| *v)
        .collect();
    steps.extend(assign_values("firejail", env));
    steps.extend(argv("firejail", &args[p.operand..]).into_iter().flatten());
    (!steps.is_empty()).then_some(steps)
}

const PARALLEL: Spec = Spec {
    short_val: "aCdEIjlLnNsSX",
    short_opt: "",
    long_val: &[
        "arg-file",
        "colsep",
        "delimiter",
        "eof",
        "replace",
        "jobs",
        "max-lines",
        "max-args",
        "max-replace-args",
        "sshlogin",
        "sshloginfile",
        "tmpdir",
        "results",
        "joblog",
        "env",
        "basefile",
        "workdir",
        "timeout",
        "retries",
        "tagstring",
        "memfree",
        "load",
        "delay",
        "halt",
        "block",
        "shebang-wrap",
        "cat",
        "fifo",
        "transfer-file",
        "return",
        "profile",
        "termseq",
        "limit",
        "sqlmaster",
        "sqlworker",
        "sqlandworker",
        "semaphorename",
        "id",
    ],
    numeric: false,
};

/// GNU `parallel [opts] command ::: args` runs `command ARG` through a
/// shell; without a command the arguments (or stdin's lines) are the
/// commands.
pub(super) fn parallel(
    name: &str,
    args: &[String],
    unknown_runs: RunsUnknown,
) -> Option<Vec<Step>> {
    let p = parse(args, &PARALLEL);
    let rest = &args[p.operand..];
    let end = rest
        .iter()
        .position(|a| a.starts_with(":::"))
        .unwrap_or(rest.len());
    let command = &rest[..end];
    if command.is_empty() {
        return Some(vec![Step::new(
            name,
            Inner::Opaque(format!(
                "`{name}` without a command runs its arguments or stdin's lines as commands: {}",
                rest.join(" ")
            )),
        )]);
    }
    let mut steps = vec![Step::new(name, Inner::Line(command.join(" ")))];
    let replaced = command.iter().any(|w| w.contains('{'));
    let probe: Vec<String> = if replaced {
        command.iter().map(|w| replace_braces(w)).collect()
    } else {
        command
            .iter()
            .cloned()
            .chain([UNKNOWN.to_string()])
            .collect()
    };
    steps.extend(unknown_runs(name, &probe));
    steps.push(Step::new(name, Inner::MoreArgs(probe)));
    Some(steps)
}

/// `{}`, `{.}`, `{/}`, `{1}`, ... become [`UNKNOWN`].
fn replace_braces(word: &str) -> String {
    let mut out = String::new();
    let mut rest = word;
    while let Some(open) = rest.find('{') {
        match rest[open..].find('}') {
            Some(close) => {
                out.push_str(&rest[..open]);
                out.push_str(UNKNOWN);
                rest = &rest[open + close + 1..];
            }
            None => break,
        }
    }
    out.push_str(rest);
    out
}

/// `expect -c CMDS` runs Tcl (`spawn`, `exec`): opaque. `expect FILE` and
/// `expect -f FILE` run a script.
pub(super) fn expect(args: &[String]) -> Option<Vec<Step>> {
    let spec = Spec {
        short_val: "cfbD",
        ..Spec::default()
    };
    let p = parse(args, &spec);
    if let Some(code) = p.value("c") {
        return Some(vec![Step::new(
            "expect -c",
            Inner::Opaque(format!("a Tcl program: {code}")),
        )]);
    }
    let script = p
        .value("f")
        .or_else(|| p.value("b"))
        .or_else(|| args.get(p.operand).map(String::as_str))
        .unwrap_or("-");
    Some(vec![Step::new("expect", Inner::Script(script.to_string()))])
}

/// Launchers whose options are not modelled one by one. Every operand among
/// the first three that could start the command is checked as one, and a
/// few shapes are special: `capsh ... -- -c LINE`, `sg GROUP -c LINE`,
/// `tmux`/`screen`/`xterm -e` commands (shell lines), `envdir` (variables
/// from files: opaque).
pub(super) fn generic(name: &str, args: &[String]) -> Option<Vec<Step>> {
    match name {
        "envdir" => {
            return Some(vec![Step::new(
                name,
                Inner::Opaque("`envdir` sets variables read from files corral cannot see".into()),
            )]);
        }
        "capsh" | "sg" => {
            if let Some(i) = args.iter().position(|a| a == "-c") {
                return args
                    .get(i + 1)
                    .map(|line| vec![Step::new(format!("{name} -c"), Inner::Line(line.clone()))]);
            }
            if name == "capsh" {
                // Without `-- -c`, capsh runs nothing but itself (or a shell).
                return None;
            }
        }
        "tmux" => {
            const RUNS: &[&str] = &[
                "new-session",
                "new",
                "new-window",
                "neww",
                "split-window",
                "splitw",
                "respawn-pane",
                "respawnp",
                "respawn-window",
                "respawnw",
                "run-shell",
                "run",
                "if-shell",
                "if",
                "pipe-pane",
                "pipep",
                "display-popup",
                "popup",
                "send-keys",
                "send",
                "source-file",
                "source",
            ];
            return args.iter().any(|a| RUNS.contains(&a.as_str())).then(|| {
                vec![Step::new(
                    name,
                    Inner::Opaque(format!(
                        "`tmux` runs or types commands in a shell corral does not watch: {}",
                        args.join(" ")
                    )),
                )]
            });
        }
        "screen" => {
            return args
                .iter()
                .any(|a| !a.starts_with('-') || a == "-X")
                .then(|| {
                    vec![Step::new(
                        name,
                        Inner::Opaque(format!(
                            "`screen` runs or types commands in a terminal corral does not watch: {}",
                            args.join(" ")
                        )),
                    )]
                });
        }
        "xterm" => {
            let i = args.iter().position(|a| a == "-e")?;
            return argv("xterm -e", &args[i + 1..]);
        }
        "gdb" => {
            if let Some(i) = args.iter().position(|a| a == "--args") {
                return argv("gdb --args", &args[i + 1..]);
            }
            if args
                .iter()
                .any(|a| a.starts_with("-ex") || a.starts_with("--ex"))
            {
                return Some(vec![Step::new(
                    "gdb -ex",
                    Inner::Opaque(format!("gdb commands (`shell`, `run`): {}", args.join(" "))),
                )]);
            }
            return args
                .iter()
                .find(|a| !a.starts_with('-'))
                .map(|p| vec![Step::new("gdb", Inner::Argv(vec![p.clone()]))]);
        }
        _ => {}
    }
    let mut steps = Vec::new();
    let mut rest = args;
    let env = assignments(&mut rest);
    if !env.is_empty() {
        steps.push(Step::new(name, Inner::Assign(env)));
    }
    let mut seen = 0;
    for (i, a) in rest.iter().enumerate() {
        if a == "--" {
            steps.extend(argv(name, &rest[i + 1..]).into_iter().flatten());
            break;
        }
        if a.starts_with('-') && a.len() > 1 {
            continue;
        }
        steps.extend(argv(name, &rest[i..]).into_iter().flatten());
        seen += 1;
        if seen == 3 {
            break;
        }
    }
    (!steps.is_empty()).then_some(steps)
}

/// Whether `base` (a basename) is the dynamic loader, which runs the program it is given
/// as any `execve` would: `/lib64/ld-linux-x86-64.so.2 /bin/rm x`.
pub(super) fn is_loader(base: &str) -> bool {
    base == "ld.so"
        || base.starts_with("ld-linux")
        || base.starts_with("ld-musl")
        || base.starts_with("ld64.so")
}

/// The dynamic loader run as a program: the program it loads, with its arguments; and
/// where it is told to load other libraries (`--library-path`, `--preload`, `--audit`),
/// code corral cannot see, opaque as `LD_PRELOAD` is asked about.
pub(super) fn loader(args: &[String]) -> Option<Vec<Step>> {
    const VALUED: &[&str] = &[
        "--library-path",
        "--preload",
        "--audit",
        "--argv0",
        "--inhibit-rpath",
        "--glibc-hwcaps-prefix",
        "--glibc-hwcaps-mask",
    ];
    const LOADS: &[&str] = &["--library-path", "--preload", "--audit"];
    let mut steps = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let name = a.split_once('=').map_or(a, |(n, _)| n);
        if LOADS.contains(&name) {
            steps.push(Step::new(
                "ld.so",
                Inner::Opaque(format!("`ld.so {name}` loads libraries corral cannot see")),
            ));
        }
        if VALUED.contains(&a) {
            i += 2;
        } else if a == "--" {
            i += 1;
            break;
        } else if a.starts_with("--") {
            i += 1;
        } else {
            break;
        }
    }
    if let Some(program) = args.get(i..).filter(|rest| !rest.is_empty()) {
        steps.push(Step::new("ld.so", Inner::Argv(program.to_vec())));
    }
    (!steps.is_empty()).then_some(steps)
}
