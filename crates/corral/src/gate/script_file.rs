//! A shell script run from its file is the line it holds: `sh deploy.sh`, `bash -e
//! ./deploy.sh`, and `./deploy.sh` whose `#!` line names a shell run what the file says.
//! Where a rule written by a person or an operator must be held by corral's checks (an
//! argument pattern such as `git push*`, or any rule outside a box), the file's text is
//! checked as `sh -c TEXT` would be, and the scripts that text runs in turn, a few deep.
//!
//! What cannot be checked is asked about: a script that does not exist when the line is
//! checked or that the line itself names elsewhere (`printf … > x.sh && sh x.sh`, `cp
//! other.sh x.sh; sh x.sh`: the line may write it before it runs), and one too large to
//! read here or not text. A script rewritten between the check and the run by a command
//! still running from an earlier call is not seen; the box's stubs hold a denied program
//! there all the same, not an argument pattern.

use std::io::Read;
use std::path::{Path, PathBuf};

use corral_policy::{ApprovalMode, CommandCheck, Effect, Policy};

use super::{Check, exec_check, lexical, open_regular, shebang_argv, unnamed, written_exec_rule};
use crate::plan::{Plan, PlannedOp, Stage};

/// The largest script read to be checked.
const MAX_SCRIPT: u64 = 256 * 1024;

/// How many scripts deep a script's own scripts are followed.
const MAX_DEPTH: usize = 3;

/// A line's commands, as the script checks see them.
pub(super) struct Line<'a> {
    /// The stage the checks belong to.
    pub stage: usize,
    /// Where its relative paths lead.
    pub cwd: &'a Path,
    /// Each command the line runs (a stage's, and those of the lines it runs), with the
    /// program file it starts where that is known.
    pub commands: Vec<(Vec<String>, Option<PathBuf>)>,
    /// Every word of the line and every file it writes by a redirect, resolved: a script
    /// named among them may be written by the line before it runs.
    pub named: Vec<PathBuf>,
    /// Whether the box's stubs keep a program a rule denies by name from starting.
    pub kernel_holds_programs: bool,
}

/// The checks of the shell scripts stage `i` runs from files: its `commands` (with the
/// program file each starts, where known), `named` the line's words and written files.
pub(super) fn for_stage(
    policy: &Policy,
    mode: ApprovalMode,
    i: usize,
    stage: &Stage,
    commands: Vec<(Vec<String>, Option<PathBuf>)>,
    kernel_holds_programs: bool,
    named: &dyn Fn() -> Vec<PathBuf>,
) -> Vec<Check> {
    // The caller asked only where a written rule must hold; a line that runs no file
    // needs no words of the line.
    if !commands.iter().any(|(argv, program)| {
        program.is_some()
            || argv.first().is_some_and(|p| p.contains('/'))
            || corral_policy::stdin_script::shell_script_operand(argv).is_some()
    }) {
        return Vec::new();
    }
    let line = Line {
        stage: i,
        cwd: &stage.cwd,
        commands,
        named: named(),
        kernel_holds_programs,
    };
    checks(policy, &line, mode)
}

/// Every word of `plan`'s commands (and the lines they run) and every file its redirects
/// write, as paths from the stage's directory.
pub(super) fn named_in(plan: &Plan) -> Vec<PathBuf> {
    let mut named = Vec::new();
    for stage in plan.checked_stages() {
        let mut words: Vec<String> = corral_policy::reached(&stage.argv)
            .commands
            .into_iter()
            .flatten()
            .collect();
        if let Some(host) = &stage.host {
            words.extend(
                host.extracted
                    .commands
                    .iter()
                    .flat_map(|argv| corral_policy::reached(argv).commands)
                    .flatten(),
            );
            words.extend(host.extracted.writes.iter().cloned());
        }
        named.extend(words.iter().map(|w| lexical(&stage.cwd.join(w))));
        for redirect in &stage.redirects {
            if let PlannedOp::Write(p) | PlannedOp::Append(p) = &redirect.op {
                named.push(lexical(&stage.cwd.join(p)));
            }
        }
    }
    named
}

/// The checks of the shell scripts `line` runs from files.
pub(super) fn checks(policy: &Policy, line: &Line<'_>, mode: ApprovalMode) -> Vec<Check> {
    let Some((layer, rule)) = written_exec_rule(policy, line.kernel_holds_programs) else {
        return Vec::new();
    };
    let must_hold = format!(
        "the rule {:?} ({layer}, {}) must hold for every program it runs",
        rule.pattern(),
        rule.origin()
    );
    let mut out = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut work: Vec<(Vec<String>, Option<PathBuf>, usize)> = line
        .commands
        .iter()
        .map(|(argv, program)| (argv.clone(), program.clone(), 0))
        .collect();
    while let Some((argv, program, depth)) = work.pop() {
        let Some((shell, script)) = runs_a_script(&argv, program.as_deref(), line.cwd) else {
            continue;
        };
        if seen.contains(&script) {
            continue;
        }
        seen.push(script.clone());
        let shown = corral_line::display_argv(&argv);
        let cannot = |why: String| unnamed(line.stage, shown.clone(), why, mode);
        if depth == 0 && line.named.iter().filter(|p| **p == script).count() > 1 {
            out.push(cannot(format!(
                "the line names the script {} elsewhere, so it may write it before it runs \
                 and its text cannot be checked now, and {must_hold}",
                script.display()
            )));
            continue;
        }
        let text = match read_script(&script) {
            Ok(text) => text,
            Err(why) => {
                out.push(cannot(format!(
                    "its script {} {why}, so what it runs cannot be checked, and {must_hold}",
                    script.display()
                )));
                continue;
            }
        };
        let inline = vec![shell, "-c".to_string(), text];
        let verdict = policy.check_command(&CommandCheck {
            argv: &inline,
            program_path: None,
        });
        if verdict.effect != Effect::Allow {
            let mut check = exec_check(line.stage, &inline, verdict, mode);
            check.target = format!("{shown} (the script {})", script.display());
            out.push(check);
        }
        if depth < MAX_DEPTH {
            for command in corral_policy::reached(&inline).commands.into_iter().skip(1) {
                work.push((command, None, depth + 1));
            }
        }
    }
    out
}

/// The shell and the script file `argv` runs, when it runs one: a shell given a script
/// operand, or a program file whose `#!` line names a shell.
fn runs_a_script(argv: &[String], program: Option<&Path>, cwd: &Path) -> Option<(String, PathBuf)> {
    if let Some(at) = corral_policy::stdin_script::shell_script_operand(argv) {
        return Some((argv[0].clone(), lexical(&cwd.join(&argv[at]))));
    }
    let first = argv.first()?;
    // A path as the line names it (the way the line would name it when it writes it);
    // a program found on `PATH` as it was found.
    let program = match program {
        _ if first.contains('/') => lexical(&cwd.join(first)),
        Some(p) => p.to_path_buf(),
        None => return None,
    };
    let interpreted = shebang_argv(&program, argv)?;
    let shell = match interpreted.first().map(String::as_str) {
        Some(env) if Path::new(env).file_name().is_some_and(|n| n == "env") => interpreted
            .iter()
            .skip(1)
            .flat_map(|a| a.split_whitespace())
            .find(|w| !w.starts_with('-'))?
            .to_string(),
        Some(interpreter) => interpreter.to_string(),
        None => return None,
    };
    corral_policy::stdin_script::is_readable_shell(&shell).then_some((shell, program))
}

/// The text of the script at `path`, or why it cannot be had.
fn read_script(path: &Path) -> Result<String, String> {
    let file = open_regular(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "does not exist when the line is checked".to_string(),
        std::io::ErrorKind::InvalidInput => "is not a regular file".to_string(),
        _ => format!("cannot be read ({})", crate::redirect::plain(&e)),
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_SCRIPT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read ({})", crate::redirect::plain(&e)))?;
    if bytes.len() as u64 > MAX_SCRIPT {
        return Err(format!("is larger than {} KiB", MAX_SCRIPT / 1024));
    }
    String::from_utf8(bytes).map_err(|_| "is not text".to_string())
}
