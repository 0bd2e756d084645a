//! Commands that run other commands, and how to find what they run.
//!
//! One module per family; [`unwrap`] dispatches on the basename of `argv[0]`
//! (with a version suffix and `.exe` removed: `python3.12` is `python`).

mod find;
mod git;
mod interpreters;
mod launchers;
mod multicall;
mod option_commands;
pub(crate) mod opts;
pub(crate) mod privilege;
pub(crate) mod shells;
mod step;
mod wrappers;
mod xargs;

use crate::pattern::basename;
pub(crate) use step::{Inner, Step, UNKNOWN};

/// `argv[0]`'s basename without `.exe` and without a trailing version
/// (`python3.12` → `python`, `perl5.36` → `perl`).
pub(crate) fn family(argv0: &str) -> &str {
    let base = basename(argv0);
    let base = match base.len().checked_sub(4) {
        Some(cut) if base.is_char_boundary(cut) && base[cut..].eq_ignore_ascii_case(".exe") => {
            &base[..cut]
        }
        _ => base,
    };
    let trimmed = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if trimmed.is_empty() { base } else { trimmed }
}

/// Everything `argv` would run besides itself, or `None` if it is not a
/// command that runs commands.
pub(crate) fn unwrap(argv: &[String]) -> Option<Vec<Step>> {
    let (first, args) = argv.split_first()?;
    let name = family(first);
    match name {
        "env" => wrappers::env(args),
        "nice" => wrappers::nice(args),
        "nohup" => wrappers::simple(name, args),
        "timeout" => wrappers::timeout(args),
        "stdbuf" => wrappers::stdbuf(args),
        "setsid" => wrappers::simple(name, args),
        "time" => wrappers::time(args),
        "command" => wrappers::command(args),
        "exec" => wrappers::exec(args),
        "chroot" => wrappers::chroot(args),
        "ionice" => wrappers::ionice(args),
        "taskset" => wrappers::taskset(args),
        "chrt" => wrappers::chrt(args),
        "unbuffer" => wrappers::simple(name, args),
        "flock" => wrappers::flock(args),
        "watch" => shells::watch(args),
        "xargs" => xargs::xargs(args, unknown_runs),
        "sudo" => privilege::sudo(args),
        "doas" => privilege::doas(args),
        "su" => privilege::su(args),
        "busybox" | "toybox" => multicall::multicall(name, args),
        "find" => find::find(args, unknown_runs),
        "noglob" | "nocorrect" | "-" => wrappers::simple(name, args),
        "builtin" => wrappers::simple(name, args),
        "strace" | "ltrace" => launchers::trace(name, args),
        "script" => launchers::script(args),
        "runuser" => launchers::runuser(args),
        "systemd-run" => launchers::systemd_run(args),
        "pkexec" => launchers::pkexec(args),
        "firejail" => launchers::firejail(args),
        "parallel" | "sem" => launchers::parallel(name, args, unknown_runs),
        "expect" => launchers::expect(args),
        "setpriv" | "unshare" | "nsenter" | "prlimit" | "numactl" | "cgexec" | "eatmydata"
        | "fakeroot" | "valgrind" | "catchsegv" | "dbus-run-session" | "xvfb-run" | "faketime"
        | "torsocks" | "torify" | "proxychains" | "proxychains4" | "setarch" | "linux32"
        | "linux64" | "rlwrap" | "bwrap" | "sg" | "capsh" | "ssh-agent" | "dbus-launch"
        | "chronic" | "entr" | "tsp" | "nq" | "daemonize" | "setuidgid" | "chpst" | "envdir"
        | "softlimit" | "lckdo" | "gdb" | "cpulimit" | "trickle" | "with-lock-ex" | "ifne"
        | "vipe" | "tmux" | "screen" | "xterm" | "sshpass" => launchers::generic(name, args),
        "tar" | "gtar" | "bsdtar" => option_commands::tar(args),
        "rsync" => option_commands::rsync(args),
        "ssh" | "scp" | "sftp" => option_commands::ssh(name, args),
        "git" => git::git(args),
        "sed" | "gsed" => option_commands::sed(args),
        "vi" | "vim" | "nvim" | "ex" | "view" | "vimdiff" | "emacs" => {
            option_commands::editor(name, args)
        }
        "man" => option_commands::man(args),
        "zip" => option_commands::zip(args),
        "npx" | "npm" => option_commands::npm(name, args),
        "at" | "batch" | "crontab" => option_commands::scheduler(name, args),
        _ if launchers::is_loader(basename(first)) => launchers::loader(args),
        _ if basename(first).len() > 4 && basename(first).starts_with("git-") => {
            git::dashed(&basename(first)[4..], args)
        }
        _ if shells::is_foreign_shell(name) => shells::foreign(name, args),
        _ if shells::is_shell(name) => shells::shell(name, args),
        _ => interpreters::interpreter(name, args),
    }
}

/// How deep commands may nest (`env bash -c 'nice sh -c "..."'`): each
/// wrapper and each shell line is one level. Deeper nesting is decided by
/// the `unparsable_inner_line` setting.
pub const MAX_DEPTH: usize = 16;

/// Whether `word` would be run as a program, or as part of a shell line, by
/// `argv` or anything it runs.
pub(crate) fn runs_word(argv: &[String], word: &str, depth: usize) -> bool {
    // Too deep to tell is taken as yes.
    if depth > MAX_DEPTH || argv.first().is_some_and(|a| a.contains(word)) {
        return true;
    }
    unwrap(argv)
        .into_iter()
        .flatten()
        .any(|step| match &step.inner {
            Inner::Argv(inner) => runs_word(inner, word, depth + 1),
            Inner::Line(line) | Inner::ZshLine(line) | Inner::Opaque(line) => line.contains(word),
            Inner::Script(script) => script.contains(word),
            Inner::Assign(pairs) => pairs
                .iter()
                .any(|(k, v)| k.contains(word) || v.contains(word)),
            Inner::OneLiner | Inner::MoreArgs(_) => false,
        })
}

/// `argv` with `UNKNOWN` standing for what a launcher adds at run time: an
/// [`Inner::Opaque`] step when those words would be run as a command.
pub(crate) fn unknown_runs(via: &str, probe: &[String]) -> Option<Step> {
    runs_word(probe, UNKNOWN, 0).then(|| {
        Step::new(
            via,
            Inner::Opaque(format!(
                "`{via}` adds words it reads when it runs, and `{}` would run them as a command",
                probe.first().map_or("", String::as_str)
            )),
        )
    })
}

/// Every command `argv` runs, itself first, as far as its words tell: what wrappers and
/// launchers run (`env`, `sudo`, `xargs`, `find -exec`), and the simple commands of the
/// lines shells run (`bash -c`). Where a word a launcher adds when it runs is passed on,
/// it is [`UNKNOWN_WORD`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reached {
    /// Each command found, its words.
    pub commands: Vec<Vec<String>>,
    /// Something it runs cannot be seen from its words: an inline program, a script, a
    /// line that does not parse, commands read when it runs, nesting past [`MAX_DEPTH`].
    pub unseen: bool,
}

/// The word standing for what a launcher adds when it runs (`xargs`' input, `find`'s
/// `{}`) in [`Reached::commands`].
pub const UNKNOWN_WORD: &str = UNKNOWN;

/// Every command `argv` runs (see [`Reached`]).
pub fn reached(argv: &[String]) -> Reached {
    let mut out = Reached::default();
    reach(argv, 0, &mut out);
    out
}

fn reach(argv: &[String], depth: usize, out: &mut Reached) {
    if depth > MAX_DEPTH {
        out.unseen = true;
        return;
    }
    out.commands.push(argv.to_vec());
    for step in unwrap(argv).into_iter().flatten() {
        match step.inner {
            Inner::Argv(inner) => reach(&inner, depth + 1, out),
            Inner::Line(line) | Inner::ZshLine(line) => match corral_line::parse(&line) {
                Ok(parsed) => {
                    for command in parsed.commands() {
                        if let corral_line::Command::Simple(simple) = command {
                            let words: Vec<String> =
                                simple.argv.iter().map(|w| w.value.clone()).collect();
                            reach(&words, depth + 1, out);
                        }
                    }
                }
                Err(_) => out.unseen = true,
            },
            // The command itself is the step beside it, with the words known.
            Inner::Assign(_) | Inner::MoreArgs(_) => {}
            Inner::Opaque(_) | Inner::OneLiner | Inner::Script(_) => out.unseen = true,
        }
    }
}
