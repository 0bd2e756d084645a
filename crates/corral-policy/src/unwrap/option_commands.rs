//! Programs that run a command given in one of their options: `tar --to-command`,
//! `rsync -e`, `ssh -o ProxyCommand=`, `sed 'e cmd'`, `vim -c '!cmd'`, `man -P`, `zip -TT`, `npx -c`, and the schedulers
//! `at`, `batch` and `crontab`, which run what they read later, outside corral. Git's
//! own (`git -c alias.x='!cmd'`, `git rebase --exec`, its options before the subcommand)
//! are in [`super::git`].
//!
//! A command given as a shell line is checked as one ([`Inner::Line`]); one whose
//! language is not a shell's (an editor command, a sed script, a git config value) is
//! [`Inner::Opaque`]: decided like an unparsable line, and denied if a word of it names
//! a denied program.

use super::step::{Inner, Step};

pub(super) fn line(via: impl Into<String>, cmd: &str) -> Step {
    Step::new(via, Inner::Line(cmd.to_string()))
}

pub(super) fn opaque(via: impl Into<String>, why: String) -> Step {
    Step::new(via, Inner::Opaque(why))
}

/// The value of `--name=V`, `--name V`, `-xV` or `-x V` at `args[i]`, and how many words
/// it took.
fn value_at<'a>(args: &'a [String], i: usize, long: &[&str], short: &[char]) -> Option<&'a str> {
    let a = args[i].as_str();
    if let Some(rest) = a.strip_prefix("--") {
        let (name, value) = match rest.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (rest, None),
        };
        if long.contains(&name) {
            return value.or_else(|| args.get(i + 1).map(String::as_str));
        }
        return None;
    }
    let body = a.strip_prefix('-')?;
    let mut chars = body.char_indices();
    let (_, c) = chars.next()?;
    if short.contains(&c) {
        let rest = &body[c.len_utf8()..];
        return if rest.is_empty() {
            args.get(i + 1).map(String::as_str)
        } else {
            Some(rest)
        };
    }
    None
}

/// Every value of the given options.
pub(super) fn values<'a>(args: &'a [String], long: &[&str], short: &[char]) -> Vec<&'a str> {
    (0..args.len())
        .filter_map(|i| value_at(args, i, long, short))
        .collect()
}

pub(super) fn tar(args: &[String]) -> Option<Vec<Step>> {
    let mut steps: Vec<Step> = values(
        args,
        &[
            "to-command",
            "use-compress-program",
            "info-script",
            "new-volume-script",
            "rsh-command",
            "rmt-command",
        ],
        &['I', 'F'],
    )
    .into_iter()
    .map(|cmd| line("tar command option", cmd))
    .collect();
    for a in args {
        if let Some(action) = a.strip_prefix("--checkpoint-action=")
            && let Some(cmd) = action.strip_prefix("exec=")
        {
            steps.push(line("tar --checkpoint-action=exec", cmd));
        }
    }
    (!steps.is_empty()).then_some(steps)
}

pub(super) fn rsync(args: &[String]) -> Option<Vec<Step>> {
    let steps: Vec<Step> = values(args, &["rsh"], &['e'])
        .into_iter()
        .map(|cmd| line("rsync -e", cmd))
        .collect();
    (!steps.is_empty()).then_some(steps)
}

/// `ssh`/`scp`/`sftp`: `-o ProxyCommand=`, `LocalCommand=`, `KnownHostsCommand=`,
/// `RemoteCommand` is remote; `-F FILE` names a configuration that can hold any of them.
pub(super) fn ssh(name: &str, args: &[String]) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    for opt in values(args, &[], &['o']) {
        let (key, value) = opt
            .split_once('=')
            .or_else(|| opt.split_once(' '))
            .unwrap_or((opt, ""));
        let key = key.trim().to_ascii_lowercase();
        if matches!(
            key.as_str(),
            "proxycommand" | "localcommand" | "knownhostscommand"
        ) {
            steps.push(line(format!("{name} -o {key}"), value.trim()));
        }
    }
    for file in values(args, &[], &['F']) {
        steps.push(opaque(
            format!("{name} -F"),
            format!("`{name} -F {file}` reads a configuration that can name commands to run"),
        ));
    }
    if name == "sftp" || name == "scp" {
        for program in values(args, &[], &['S']) {
            steps.push(Step::new(
                format!("{name} -S"),
                Inner::Argv(vec![program.to_string()]),
            ));
        }
    }
    (!steps.is_empty()).then_some(steps)
}

/// `sed` scripts with `e` (run a command) or the `s///e` flag: opaque. A script that the
/// known-safe check reads as plain is left alone.
pub(super) fn sed(args: &[String]) -> Option<Vec<Step>> {
    let mut scripts: Vec<&str> = values(args, &["expression"], &['e']);
    let files = values(args, &["file"], &['f']);
    if scripts.is_empty() && files.is_empty() {
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            if a == "-l" || a == "--line-length" {
                i += 2;
                continue;
            }
            if !a.starts_with('-') || a == "-" {
                scripts.push(a);
                break;
            }
            i += 1;
        }
    }
    let mut steps = Vec::new();
    for script in scripts {
        if !crate::sed::script_is_plain(script) && script.contains('e') {
            steps.push(opaque(
                "sed script",
                format!("a sed script that may run commands (`e`): {script}"),
            ));
        }
    }
    for file in files {
        steps.push(Step::new("sed -f", Inner::Script(file.to_string())));
    }
    (!steps.is_empty()).then_some(steps)
}

/// `vim -c CMD`, `+CMD`, `--cmd CMD`, `-S FILE`; `emacs --eval EXPR`, `-l FILE`.
pub(super) fn editor(name: &str, args: &[String]) -> Option<Vec<Step>> {
    let mut code: Vec<&str> = Vec::new();
    if name == "emacs" {
        code.extend(values(args, &["eval", "load", "script"], &[]));
        for (i, a) in args.iter().enumerate() {
            if matches!(a.as_str(), "-eval" | "-l" | "-load") {
                code.extend(args.get(i + 1).map(String::as_str));
            }
        }
    } else {
        code.extend(values(args, &["cmd"], &['c', 'S']));
        code.extend(
            args.iter()
                .filter_map(|a| a.strip_prefix('+'))
                .filter(|c| !c.is_empty() && !c.bytes().all(|b| b.is_ascii_digit())),
        );
    }
    (!code.is_empty()).then(|| {
        vec![opaque(
            format!("{name} commands"),
            format!("editor commands (`!`, `system()`): {}", code.join(" ")),
        )]
    })
}

/// `man -P PAGER`, `--pager=PAGER`, `-H BROWSER`, `--html=BROWSER`.
pub(super) fn man(args: &[String]) -> Option<Vec<Step>> {
    let steps: Vec<Step> = values(args, &["pager", "html"], &['P', 'H'])
        .into_iter()
        .map(|cmd| line("man -P", cmd))
        .collect();
    (!steps.is_empty()).then_some(steps)
}

/// `zip -TT CMD` / `--unzip-command CMD`.
pub(super) fn zip(args: &[String]) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let cmd = if a == "-TT" || a == "--unzip-command" {
            args.get(i + 1).map(String::as_str)
        } else {
            a.strip_prefix("--unzip-command=")
        };
        if let Some(cmd) = cmd {
            steps.push(line("zip -TT", cmd));
        }
    }
    (!steps.is_empty()).then_some(steps)
}

/// `npx -c CMD`, `npm exec -c CMD` / `--call CMD`, and `npm exec -- cmd...`.
pub(super) fn npm(name: &str, args: &[String]) -> Option<Vec<Step>> {
    let args = if name == "npm" {
        match args.first().map(String::as_str) {
            Some("exec" | "x") => &args[1..],
            _ => return None,
        }
    } else {
        args
    };
    let mut steps: Vec<Step> = values(args, &["call"], &['c'])
        .into_iter()
        .map(|cmd| line(format!("{name} -c"), cmd))
        .collect();
    if let Some(at) = args.iter().position(|a| a == "--")
        && at + 1 < args.len()
    {
        steps.push(Step::new(
            format!("{name} exec"),
            Inner::Argv(args[at + 1..].to_vec()),
        ));
    }
    (!steps.is_empty()).then_some(steps)
}

/// `at`, `batch`, `crontab FILE|-`: commands run later, by another daemon, outside
/// corral. Listing and removing (`atq`, `crontab -l`, `-r`) run nothing.
pub(super) fn scheduler(name: &str, args: &[String]) -> Option<Vec<Step>> {
    if name == "crontab"
        && args
            .iter()
            .any(|a| matches!(a.as_str(), "-l" | "-r" | "-e" | "-i"))
    {
        return None;
    }
    if name == "at"
        && args
            .iter()
            .any(|a| matches!(a.as_str(), "-l" | "-d" | "-r" | "-c"))
    {
        return None;
    }
    Some(vec![opaque(
        name,
        format!("`{name}` schedules commands that run later, outside corral"),
    )])
}
