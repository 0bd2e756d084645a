//! A here-document fed to a shell or an interpreter is the program it runs, not data:
//! `bash <<'EOF'` runs the body as a line, `python3 - <<'EOF'` as a program. The gate
//! checks such a body as the inline form the policy already knows (`bash -c BODY`,
//! `python3 -c BODY`), so a here-document never carries a command past the policy: in a
//! line the caller plans and in one a command runs (`bash -c 'sh <<< "rm x"'`).

use std::path::Path;

const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "rbash", "fish", "yash", "posh",
];

/// The inline argv that runs what `argv` would run with `text` on its stdin, when
/// `argv` reads its program from stdin; `None` when stdin is only data to it.
pub fn as_inline(argv: &[String], text: Option<&str>) -> Option<Vec<String>> {
    let text = text?;
    let program = argv.first()?;
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    let args = &argv[1..];
    let flag = if SHELLS.contains(&name) {
        shell_reads_stdin(args).then_some("-c")?
    } else {
        let family = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        let (flag, inline, with_value): (&str, &str, &str) = match family {
            "python" | "pypy" => ("-c", "cm", "WX"),
            "node" | "nodejs" => ("-e", "ep", "r"),
            "perl" => ("-e", "eE", ""),
            "ruby" => ("-e", "e", ""),
            "php" => ("-r", "rf", ""),
            "lua" | "luajit" => ("-e", "e", "l"),
            _ => return None,
        };
        interpreter_reads_stdin(args, inline, with_value).then_some(flag)?
    };
    Some(vec![program.clone(), flag.to_string(), text.to_string()])
}

/// Whether `argv` is a shell that reads its commands from its stdin (`bash`, `sh -s`;
/// not `bash -c …` or `bash script.sh`), in the language corral's checks read.
pub fn shell_reading_commands(argv: &[String]) -> bool {
    let Some(program) = argv.first() else {
        return false;
    };
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    name != "fish" && SHELLS.contains(&name) && shell_reads_stdin(&argv[1..])
}

/// The index in `argv` of the script file a shell runs (`bash -e deploy.sh a b`: 2), when
/// `argv` is a shell, in the language corral's checks read, running a script from a file
/// (not `-c`, not `-s`, not its stdin).
pub fn shell_script_operand(argv: &[String]) -> Option<usize> {
    let program = argv.first()?;
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    if name == "fish" || !SHELLS.contains(&name) {
        return None;
    }
    let args = &argv[1..];
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "-" || a == "--" {
            return None;
        }
        if let Some(long) = a.strip_prefix("--") {
            match long {
                "command" | "help" | "version" => return None,
                "rcfile" | "init-file" => i += 1,
                _ => {}
            }
        } else if a.len() > 1 && (a.starts_with('-') || a.starts_with('+')) {
            for c in a[1..].chars() {
                match c {
                    'c' | 's' => return None,
                    'o' | 'O' => i += 1,
                    _ => {}
                }
            }
        } else {
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// Whether `program` (a name or a path) is a shell whose language corral's checks read.
pub fn is_readable_shell(program: &str) -> bool {
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    name != "fish" && SHELLS.contains(&name)
}

/// A shell reads its script from stdin with `-s`, or with no `-c` and no script operand.
fn shell_reads_stdin(args: &[String]) -> bool {
    let mut i = 0;
    let mut stdin = false;
    while let Some(a) = args.get(i) {
        if a == "-" || a == "--" {
            return true;
        }
        if let Some(long) = a.strip_prefix("--") {
            match long {
                "command" | "help" | "version" => return false,
                "rcfile" | "init-file" => i += 1,
                _ => {}
            }
        } else if a.len() > 1 && (a.starts_with('-') || a.starts_with('+')) {
            for c in a[1..].chars() {
                match c {
                    'c' => return false,
                    's' => stdin = true,
                    'o' | 'O' => i += 1,
                    _ => {}
                }
            }
        } else {
            // A script operand, unless `-s` made the rest positional parameters.
            return stdin;
        }
        i += 1;
    }
    true
}

/// An interpreter runs stdin with no program operand, or the operand `-`; a flag in
/// `inline` names the program another way; a flag in `with_value` takes the next word.
fn interpreter_reads_stdin(args: &[String], inline: &str, with_value: &str) -> bool {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "-" {
            return true;
        }
        if a.starts_with("--") {
            // `--eval`, `--print`, `--command`: a program given inline.
            if ["--eval", "--print", "--command"]
                .iter()
                .any(|f| a.starts_with(f))
            {
                return false;
            }
        } else if let Some(flags) = a.strip_prefix('-') {
            for (j, c) in flags.char_indices() {
                if inline.contains(c) {
                    return false;
                }
                if with_value.contains(c) {
                    if flags[j + 1..].is_empty() {
                        i += 1;
                    }
                    break;
                }
            }
        } else {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inline(argv: &[&str]) -> Option<Vec<String>> {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        as_inline(&argv, Some("BODY"))
    }

    #[test]
    fn a_shell_s_script_operand_is_found_past_its_options() {
        let at = |argv: &[&str]| {
            shell_script_operand(&argv.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(at(&["sh", "x.sh"]), Some(1));
        assert_eq!(
            at(&["/bin/bash", "-e", "-o", "pipefail", "x.sh", "a"]),
            Some(4)
        );
        assert_eq!(at(&["bash", "--norc", "-x", "./x.sh"]), Some(3));
        assert_eq!(at(&["bash", "-c", "echo", "x.sh"]), None);
        assert_eq!(at(&["bash", "-s", "x.sh"]), None);
        assert_eq!(at(&["bash"]), None);
        assert_eq!(at(&["fish", "x.fish"]), None);
        assert_eq!(at(&["python3", "x.py"]), None);
    }

    #[test]
    fn shells_reading_stdin_run_the_body_as_a_line() {
        assert_eq!(inline(&["bash"]).unwrap(), ["bash", "-c", "BODY"]);
        assert_eq!(
            inline(&["/bin/sh", "-s"]).unwrap(),
            ["/bin/sh", "-c", "BODY"]
        );
        assert_eq!(inline(&["bash", "-s", "a", "b"]).unwrap()[1], "-c");
        assert_eq!(inline(&["bash", "-e", "-o", "pipefail"]).unwrap()[1], "-c");
        assert!(inline(&["bash", "script.sh"]).is_none());
        assert!(inline(&["bash", "-c", "cat"]).is_none());
    }

    #[test]
    fn interpreters_reading_stdin_run_the_body_as_a_one_liner() {
        assert_eq!(
            inline(&["python3", "-"]).unwrap(),
            ["python3", "-c", "BODY"]
        );
        assert_eq!(inline(&["python3.12"]).unwrap()[1], "-c");
        assert_eq!(
            inline(&["python", "-u", "-W", "ignore", "-"]).unwrap()[1],
            "-c"
        );
        assert_eq!(inline(&["node"]).unwrap()[1], "-e");
        assert!(inline(&["python3", "script.py"]).is_none());
        assert!(inline(&["python3", "-c", "print(1)"]).is_none());
        assert!(inline(&["python3", "-m", "json.tool"]).is_none());
        assert!(inline(&["cat"]).is_none());
    }

    #[test]
    fn no_text_no_inline_program() {
        assert!(as_inline(&["bash".to_string()], None).is_none());
    }
}
