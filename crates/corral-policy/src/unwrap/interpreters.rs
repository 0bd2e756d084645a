//! Interpreters: an inline program (`python -c`, `node -e`, `perl -e`, ...)
//! cannot be checked inside, nor can a script file.

use super::step::{Inner, Step};

pub(super) fn interpreter(name: &str, args: &[String]) -> Option<Vec<Step>> {
    let run = match name {
        "python" | "pypy" => python(args),
        "node" | "nodejs" | "bun" => node(args),
        "deno" => deno(args),
        "perl" | "ruby" => cluster_letter(args, &['e', 'E']),
        "php" => php(args),
        "osascript" | "Rscript" | "lua" | "luajit" => flag(args, &["-e"]),
        "pwsh" | "powershell" => powershell(name, args),
        "awk" | "gawk" | "mawk" | "nawk" => awk(args),
        _ => return None,
    }?;
    Some(vec![match run {
        Run::OneLiner(flag) => Step::new(format!("{name} {flag}"), Inner::OneLiner),
        Run::Script(s) => Step::new(name, Inner::Script(s.to_string())),
    }])
}

enum Run<'a> {
    OneLiner(&'a str),
    Script(&'a str),
}

/// `python [opts] -c CODE | -m MODULE | SCRIPT | -`
fn python(args: &[String]) -> Option<Run<'_>> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "-" {
            return Some(Run::Script("-"));
        }
        if a == "--" {
            return args.get(i + 1).map(|s| Run::Script(s));
        }
        if a.starts_with("--") {
            if a == "--check-hash-based-pycs" {
                i += 1;
            }
            i += 1;
            continue;
        }
        if let Some(body) = a.strip_prefix('-') {
            for (j, c) in body.char_indices() {
                match c {
                    'c' => return Some(Run::OneLiner("-c")),
                    'm' => {
                        let rest = &body[j + 1..];
                        let module = if rest.is_empty() {
                            args.get(i + 1).map(String::as_str).unwrap_or("")
                        } else {
                            rest
                        };
                        return Some(Run::Script(module));
                    }
                    'W' | 'X' => {
                        if body[j + 1..].is_empty() {
                            i += 1;
                        }
                        break;
                    }
                    _ => {}
                }
            }
            i += 1;
            continue;
        }
        return Some(Run::Script(a));
    }
    None
}

/// `node -e|--eval|-p|--print CODE`, `node script.js`.
fn node(args: &[String]) -> Option<Run<'_>> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if matches!(a, "-e" | "--eval" | "-p" | "--print" | "-pe" | "-ep")
            || a.starts_with("--eval=")
            || a.starts_with("--print=")
        {
            return Some(Run::OneLiner("-e"));
        }
        if matches!(
            a,
            "-r" | "--require" | "--import" | "--loader" | "--experimental-loader" | "-C"
        ) {
            i += 2;
            continue;
        }
        if a == "run" || a == "x" {
            // `bun run script` / `bun x pkg`.
            return args.get(i + 1).map(|s| Run::Script(s));
        }
        if a.starts_with('-') {
            i += 1;
            continue;
        }
        return Some(Run::Script(a));
    }
    None
}

fn deno(args: &[String]) -> Option<Run<'_>> {
    match args.first().map(String::as_str) {
        Some("eval") => Some(Run::OneLiner("eval")),
        Some("run") => args[1..]
            .iter()
            .find(|a| !a.starts_with('-'))
            .map(|s| Run::Script(s)),
        _ => None,
    }
}

/// Any short-option cluster containing one of `letters` (`perl -ne`,
/// `ruby -pe`): approximate, and errs toward "one-liner".
fn cluster_letter<'a>(args: &'a [String], letters: &[char]) -> Option<Run<'a>> {
    for a in args {
        if a == "--" {
            break;
        }
        if let Some(body) = a.strip_prefix('-') {
            if !body.starts_with('-') && body.contains(letters) {
                return Some(Run::OneLiner("-e"));
            }
            continue;
        }
        return Some(Run::Script(a));
    }
    None
}

fn flag<'a>(args: &'a [String], flags: &[&'static str]) -> Option<Run<'a>> {
    for a in args {
        if let Some(f) = flags.iter().find(|f| **f == a) {
            return Some(Run::OneLiner(f));
        }
        if !a.starts_with('-') {
            return Some(Run::Script(a));
        }
    }
    None
}

/// `php -r CODE`, `php -B/-R/-E` (per-line code), `php script.php`.
fn php(args: &[String]) -> Option<Run<'_>> {
    for a in args {
        if matches!(a.as_str(), "-r" | "--run" | "-B" | "-R" | "-E" | "-F") {
            return Some(Run::OneLiner("-r"));
        }
        if !a.starts_with('-') {
            return Some(Run::Script(a));
        }
    }
    None
}

/// PowerShell takes any prefix of `-Command` / `-EncodedCommand`, with `-`
/// or `/`, in any case. A bare operand is a script for `pwsh` and a command
/// for Windows PowerShell.
fn powershell<'a>(name: &str, args: &'a [String]) -> Option<Run<'a>> {
    for a in args {
        let Some(opt) = a.strip_prefix('-').or_else(|| a.strip_prefix('/')) else {
            return Some(if name == "powershell" {
                Run::OneLiner("-Command")
            } else {
                Run::Script(a)
            });
        };
        let opt = opt.to_ascii_lowercase();
        if !opt.is_empty()
            && ("command".starts_with(&opt) || "encodedcommand".starts_with(&opt) || opt == "ec")
        {
            return Some(Run::OneLiner("-Command"));
        }
        if !opt.is_empty() && "file".starts_with(&opt) {
            return Some(Run::Script("-File"));
        }
    }
    None
}

/// `awk PROGRAM`: a program that can run commands (`system(...)`, or a pipe
/// to or from a command) is treated as a one-liner; others are left to the
/// rule on `awk` itself. An approximation: see the crate docs.
fn awk(args: &[String]) -> Option<Run<'_>> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "-f" || a.starts_with("--file") {
            return args.get(i + 1).map(|s| Run::Script(s));
        }
        if matches!(a, "-v" | "-F" | "--assign" | "--field-separator") {
            i += 2;
            continue;
        }
        if a.starts_with('-') && a.len() > 1 {
            i += 1;
            continue;
        }
        return (a.contains("system") || a.contains('|')).then_some(Run::OneLiner("PROGRAM"));
    }
    None
}
