//! The gate between a plan and its spawn: every stage and every redirect is checked
//! against the policy, asks go to the approver, and only then does anything start.
//!
//! 1. Every stage's argv (with its resolved program) and every redirect target (as a read
//!    or a write) gets a decision. A deny anywhere refuses the whole request: nothing
//!    starts, no approver is asked.
//! 2. A stage that needs a terminal (`vim`, `less`, `ssh`, `sudo` without `-n`, …) is
//!    refused outside a terminal session, with a message that says so.
//! 3. What is left to ask about is filtered through the run's approval cache (argvs
//!    approved for the run, exactly or by prefix), then put to the approver in one
//!    request. Its answer, and every refusal, is a row in `policy_events`.
//!
//! The boundary, stated plainly: the gate decides what may *start*. It does not see what a
//! started process then does: `make` runs whatever its Makefile says, and a started
//! `python script.py` can delete anything its user can.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use corral_policy::{
    Act, ApprovalMode, CommandCheck, Decision, Effect, Policy, Resolution, SimpleCommand, Verdict,
};
use corral_trace::NewPolicyEvent;
use serde::Serialize;

pub(crate) mod by_effect;
mod git_effect;
mod lift;
mod script_file;

pub(crate) use git_effect::subcommand as git_subcommand;
pub use lift::{Lift, exact_allow};

use crate::approve::{Approval, ApprovalRequest, Approver, AskedItem};
use crate::error::{Denial, DenialStatus, Error, Result};
use crate::identity::Ruled;
use crate::plan::{Plan, PlannedOp, Stage};

/// One check made on a plan: a stage, or one of its redirects.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// The stage it belongs to (0-based, in the order written).
    pub stage: usize,
    /// `exec` for the stage itself, `read`/`write` for a redirect.
    pub act: Act,
    /// What was checked: the joined argv, or the resolved path.
    pub target: String,
    /// The decision that produced the effect, with its rule, layer and origin.
    pub decision: Decision,
    /// For a stage: every decision, including the commands it would run.
    pub verdict: Option<Verdict>,
    /// What the approval mode makes of it.
    pub resolution: Resolution,
}

impl Check {
    /// The effect the policy gave.
    pub fn effect(&self) -> Effect {
        self.decision.effect
    }

    /// The decisions of this check that did not allow: for a stage, every one of its
    /// verdict (the command's own and those of the commands it runs); for a redirect, its
    /// own.
    pub fn asking(&self) -> impl Iterator<Item = &Decision> {
        let decisions = match &self.verdict {
            Some(verdict) => verdict.decisions.as_slice(),
            None => std::slice::from_ref(&self.decision),
        };
        decisions.iter().filter(|d| d.effect != Effect::Allow)
    }

    /// What would let exactly this check through.
    pub fn lift(&self) -> Lift {
        Lift::of(self.asking())
    }
}

/// Decide about every stage and redirect of `plan`, without asking anyone or recording
/// anything: what `corral policy check` prints, and the gate's first step.
pub fn explain(policy: &Policy, plan: &Plan, mode: ApprovalMode) -> Vec<Check> {
    let path_var = std::env::var("PATH").ok();
    let ruled = Ruled::find(policy, path_var.as_deref());
    explain_with(policy, plan, mode, &ruled, path_var.as_deref())
}

/// A stage's verdict: its assignments and argv, with the programs it reaches that are the
/// same file as a ruled program (see [`crate::identity`]).
///
/// A stage given as bytes that are not UTF-8 is checked twice, in the escaped form
/// (`\xff`) and in the lossy form (U+FFFD), and the stricter verdict stands: a rule that
/// refuses either form refuses the bytes, and an allow must hold for both. Its program is
/// the file its bytes name, so the identity checks need no text.
fn stage_verdict(policy: &Policy, stage: &Stage, ruled: &Ruled, path_var: Option<&str>) -> Verdict {
    let escaped = text_verdict(policy, stage, ruled, path_var);
    match stage.lossy() {
        None => escaped,
        Some(lossy) => stricter(escaped, text_verdict(policy, &lossy, ruled, path_var)),
    }
}

/// The stricter of two verdicts on one command: the stronger effect, and between equal
/// effects the one that is not known-safe.
fn stricter(a: Verdict, b: Verdict) -> Verdict {
    let rank = |v: &Verdict| (v.effect, !v.known_safe);
    if rank(&b) > rank(&a) { b } else { a }
}

/// [`stage_verdict`] of one text form of the stage.
fn text_verdict(policy: &Policy, stage: &Stage, ruled: &Ruled, path_var: Option<&str>) -> Verdict {
    // `./mc/rm` resolves to `/ws/./mc/rm`: a rule on `/ws/mc/rm` must hold for it.
    let program = stage.program.as_ref().ok().map(|p| lexical(p));
    // The stage's own program is the file the plan found for it, the one that will run
    // (found on the command's own `PATH`, and by its bytes where it was given as bytes):
    // its identity checks use that file instead of looking the name up again.
    let named = stage
        .program
        .as_deref()
        .ok()
        .map(|p| (stage.argv[0].as_str(), p));
    let found = Found {
        program: program.as_deref(),
        named,
        cwd: &stage.cwd,
        ruled,
        path_var,
    };
    command_verdict(policy, &stage.env, &stage.argv, &found)
}

/// What is known of where a command's program is, for its identity checks.
struct Found<'a> {
    program: Option<&'a Path>,
    /// The stage's own `argv[0]` as checked and the file the plan found for it.
    named: Option<(&'a str, &'a Path)>,
    cwd: &'a Path,
    ruled: &'a Ruled,
    path_var: Option<&'a str>,
}

/// The verdict on one simple command: its rules, the rules of any other name its program
/// file has (a symlink, a hard link), and a known-safe name only where it finds a system
/// program.
fn command_verdict(
    policy: &Policy,
    env: &[(String, String)],
    argv: &[String],
    found: &Found<'_>,
) -> Verdict {
    let mut command = SimpleCommand {
        env,
        argv,
        program_path: found.program,
        same_files: &[],
    };
    let verdict = policy.check_simple(&command);
    let same = found
        .ruled
        .same_files(&verdict.programs, found.named, found.cwd, found.path_var);
    let mut verdict = if same.is_empty() {
        verdict
    } else {
        command.same_files = &same;
        policy.check_simple(&command)
    };
    // A known-safe name is only as safe as the file it finds: `bash -c 'ls'` with a
    // workspace directory on PATH may run the workspace's own `ls`.
    if verdict.known_safe
        && let Some((name, path)) = crate::identity::outside_system_dirs(
            &verdict.programs,
            found.named,
            found.cwd,
            found.path_var,
        )
    {
        verdict.known_safe = false;
        verdict.not_safe = Some(format!(
            "{name} resolves to {}, outside the system directories",
            path.display()
        ));
    }
    verdict
}

/// `path` without `.` components, and with each `..` taking off the component before it.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn explain_with(
    policy: &Policy,
    plan: &Plan,
    mode: ApprovalMode,
    ruled: &Ruled,
    path_var: Option<&str>,
) -> Vec<Check> {
    let mut checks = Vec::new();
    // Every word and written file of the line, for the script checks (made only when a
    // script is run where a written rule must hold).
    let named = std::cell::OnceCell::new();
    let named = || named.get_or_init(|| script_file::named_in(plan)).clone();
    for (i, stage) in plan.checked_stages().enumerate() {
        if let Some(host) = &stage.host {
            let found = Found {
                program: None,
                named: None,
                cwd: &stage.cwd,
                ruled,
                path_var,
            };
            host_checks(policy, mode, i, stage, host, &found, &mut checks);
            if written_exec_rule(policy, host.kernel_holds_denied_programs).is_some() {
                let commands = host
                    .extracted
                    .commands
                    .iter()
                    .flat_map(|argv| corral_policy::reached(argv).commands)
                    .map(|argv| (argv, None))
                    .collect();
                let kernel = host.kernel_holds_denied_programs;
                checks.extend(script_file::for_stage(
                    policy, mode, i, stage, commands, kernel, &named,
                ));
            }
            continue;
        }
        // A program that does not exist when the line is checked, in a line whose earlier
        // stages could make it (`ln -s /bin/rm ./tool; ./tool`): what it will be cannot be
        // checked against a rule that must hold.
        if i > 0
            && stage.program.is_err()
            && let Some((layer, rule)) =
                written_exec_rule(policy, plan.kernel_holds_denied_programs)
        {
            let target = corral_line::display_argv(&stage.argv);
            let why = format!(
                "`{}` does not exist when the line is checked, so what it runs cannot be \
                 checked against the rule {:?} ({layer}, {}) that must hold for every program",
                stage.argv.first().map_or("", String::as_str),
                rule.pattern(),
                rule.origin()
            );
            checks.push(unnamed(i, target, why, mode));
        }
        // The same inside a line this stage runs (`sh -c 'cp /bin/rm x && ./x'`).
        if let Some(check) = made_inside(policy, plan, i, stage, mode) {
            checks.push(check);
        }
        if written_exec_rule(policy, plan.kernel_holds_denied_programs).is_some() {
            let mut commands: Vec<(Vec<String>, Option<PathBuf>)> =
                corral_policy::reached(&stage.argv)
                    .commands
                    .into_iter()
                    .map(|argv| (argv, None))
                    .collect();
            if let Some(first) = commands.first_mut() {
                first.1 = stage.program.as_ref().ok().cloned();
            }
            let kernel = plan.kernel_holds_denied_programs;
            checks.extend(script_file::for_stage(
                policy, mode, i, stage, commands, kernel, &named,
            ));
        }
        let argv = stage.checked_argv();
        let verdict = stage_verdict(policy, stage, ruled, path_var);
        // A script's `#!` line names what the kernel starts for it: `./tool` whose first
        // line is `#!/bin/rm` runs rm. Where that command is denied, so is the stage (an
        // ask or an allow of the interpreter leaves the stage's own decision: `npm` is a
        // script of node's, and a rule on `npm*` decides it).
        if let Some(interpreted) = stage
            .program
            .as_deref()
            .ok()
            .and_then(|script| shebang_argv(script, &stage.argv))
            && let verdict = policy.check_command(&CommandCheck {
                argv: &interpreted,
                program_path: None,
            })
            && verdict.effect == Effect::Deny
        {
            checks.push(exec_check(i, &interpreted, verdict, mode));
        }
        // An inline program (`python3 -c`, `perl -e`) may run any command with any
        // arguments from its own code: where a rule holds by its arguments (`git push*`),
        // which no file taken away can hold, it is asked about.
        if let Some((layer, rule)) = argument_rule(policy)
            && verdict.decisions.iter().any(|d| {
                d.effect == Effect::Allow
                    && matches!(d.why, corral_policy::Why::InterpreterOneLiner)
            })
        {
            let target = corral_line::display_argv(&argv);
            let why = format!(
                "an inline program can run any command with any arguments from its own code, \
                 and the rule {:?} ({layer}, {}) holds by arguments, which corral cannot check \
                 in it",
                rule.pattern(),
                rule.origin()
            );
            checks.push(unnamed(i, target, why, mode));
        }
        checks.push(exec_check(i, &argv, verdict, mode));
        // A shell or an interpreter reading its program from a pipe whose text is made
        // when the line runs: what it will run cannot be known here.
        if stage.fed.is_none()
            && stage.piped
            && corral_policy::stdin_script::as_inline(&stage.argv, Some("")).is_some()
        {
            checks.push(piped_program(policy, mode, i, &stage.argv));
        }
        // A body fed to a shell or an interpreter is the program it runs.
        if let Some(inline) =
            corral_policy::stdin_script::as_inline(&stage.argv, stage.fed.as_deref())
        {
            let verdict = policy.check_command(&CommandCheck {
                argv: &inline,
                program_path: None,
            });
            checks.push(exec_check(i, &inline, verdict, mode));
        }
        for redirect in &stage.redirects {
            let (act, path) = match &redirect.op {
                PlannedOp::Read(p) => (Act::Read, p),
                PlannedOp::Write(p) | PlannedOp::Append(p) => (Act::Write, p),
                PlannedOp::Dup(_) | PlannedOp::Text(_) => continue,
            };
            // The null device holds nothing and reveals nothing.
            if path == Path::new("/dev/null") {
                continue;
            }
            let decision = policy.check_path(act, path);
            let resolution =
                corral_policy::resolve(mode, decision.effect, false, decision.is_explicit());
            checks.push(Check {
                stage: i,
                act,
                target: path.display().to_string(),
                decision,
                verdict: None,
                resolution,
            });
        }
    }
    checks
}

/// The exec rules a person or an operator wrote that deny or ask (not the built-in
/// ones), with their layers: what a command corral cannot fully name must not slip past.
fn written_exec_rules(policy: &Policy) -> impl Iterator<Item = (&str, &corral_policy::Rule)> {
    policy
        .layers()
        .iter()
        .flat_map(|l| l.rules().iter().map(move |r| (l.name(), r)))
        .filter(|(_, r)| {
            r.act() == Act::Exec
                && *r.origin() != corral_policy::Origin::Builtin
                && matches!(r.effect(), Effect::Deny | Effect::Ask)
        })
}

/// The first of [`written_exec_rules`] that a line whose programs cannot all be named
/// must be asked about for. Where the kernel keeps a program denied by name from starting
/// (`kernel_holds_programs`: a box with stubs), such a deny holds without asking.
fn written_exec_rule(
    policy: &Policy,
    kernel_holds_programs: bool,
) -> Option<(&str, &corral_policy::Rule)> {
    written_exec_rules(policy)
        .find(|(_, r)| r.effect() == Effect::Ask || !(kernel_holds_programs && r.names_a_program()))
}

/// A question the gate asks of its own, no rule deciding it: what stage `stage` would run
/// (`target`) cannot be named before it runs, and `why` says which rule must hold. No
/// setting lifts it (see `lift::UNNAMED`): a person decides.
/// A program that a line this stage runs names by a path (`sh -c 'cp /bin/rm x && ./x'`)
/// and that does not exist when the line is checked, where a rule must hold for every
/// program: asked about, as such a stage of the line itself is.
fn made_inside(
    policy: &Policy,
    plan: &Plan,
    i: usize,
    stage: &Stage,
    mode: ApprovalMode,
) -> Option<Check> {
    let (layer, rule) = written_exec_rule(policy, plan.kernel_holds_denied_programs)?;
    let reached = corral_policy::reached(&stage.argv);
    let made = reached
        .commands
        .iter()
        .skip(1)
        .filter_map(|argv| argv.first())
        .find(|program| {
            program.contains('/')
                && !program.contains(corral_policy::UNKNOWN_WORD)
                && !stage.cwd.join(program).exists()
        })?;
    let why = format!(
        "`{made}`, run by the line this command runs, does not exist when the line is \
         checked, so what it runs cannot be checked against the rule {:?} ({layer}, {}) that \
         must hold for every program",
        rule.pattern(),
        rule.origin()
    );
    Some(unnamed(
        i,
        corral_line::display_argv(&stage.argv),
        why,
        mode,
    ))
}

/// What the kernel starts for the script `script` run as `argv`, when its first line is a
/// `#!` line: the interpreter, its one argument, the script, then `argv`'s arguments.
fn shebang_argv(script: &Path, argv: &[String]) -> Option<Vec<String>> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = open_regular(script).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n')?];
    let line = std::str::from_utf8(line).ok()?.trim();
    // The kernel splits the line once: the interpreter, then the rest as one argument.
    let (interpreter, arg) = match line.split_once([' ', '\t']) {
        Some((i, a)) => (i, Some(a.trim())),
        None => (line, None),
    };
    if interpreter.is_empty() {
        return None;
    }
    let mut out = vec![interpreter.to_string()];
    out.extend(arg.filter(|a| !a.is_empty()).map(str::to_string));
    out.push(argv.first()?.clone());
    out.extend(argv.iter().skip(1).cloned());
    Some(out)
}

/// `path` opened for reading if it is a regular file. Opened without waiting: a named
/// pipe put where a script or a program is expected would hold the check forever.
fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// The check of stage `stage` running `argv`, as `verdict` decided it.
fn exec_check(stage: usize, argv: &[String], verdict: Verdict, mode: ApprovalMode) -> Check {
    Check {
        stage,
        act: Act::Exec,
        target: corral_line::display_argv(argv),
        decision: verdict.decisive().clone(),
        resolution: verdict.resolve(mode),
        verdict: Some(verdict),
    }
}

fn unnamed(stage: usize, target: String, why: String, mode: ApprovalMode) -> Check {
    own_question(stage, target, why, lift::UNNAMED, mode)
}

/// A question the gate asks of its own about stage `stage` (`target`), `why` saying
/// why, reached through `via` (which says who may lift it: see `lift`).
fn own_question(stage: usize, target: String, why: String, via: &str, mode: ApprovalMode) -> Check {
    Check {
        stage,
        act: Act::Exec,
        target: target.clone(),
        decision: Decision {
            effect: Effect::Ask,
            act: Act::Exec,
            target: target.clone(),
            rule: None,
            why: corral_policy::Why::UnparsableInnerLine {
                line: target,
                refusal: why,
            },
            via: vec![via.to_string()],
            wrapper: false,
        },
        verdict: None,
        resolution: corral_policy::resolve(mode, Effect::Ask, false, true),
    }
}

/// A shell or an interpreter started to read what a model types (a handle's terminal or
/// stdin pipe), where a rule holds by its arguments: what is typed later, with history,
/// completion, pastes and continuations, cannot be checked as a line is, so the start is
/// asked about.
fn typed_input(policy: &Policy, plan: &Plan, mode: ApprovalMode) -> Option<Check> {
    let (layer, rule) = argument_rule(policy)?;
    let (i, stage) = plan
        .checked_stages()
        .enumerate()
        .find(|(_, s)| corral_policy::stdin_script::as_inline(&s.argv, Some("")).is_some())?;
    let target = corral_line::display_argv(&stage.argv);
    let why = format!(
        "it reads the commands a model types into it, which corral cannot check as it checks \
         a line, and the rule {:?} ({layer}, {}) holds by arguments",
        rule.pattern(),
        rule.origin()
    );
    Some(unnamed(i, target, why, mode))
}

/// The first of [`written_exec_rules`] that holds by its arguments (`git push*`, `npm
/// publish*`): no file taken away can hold it.
fn argument_rule(policy: &Policy) -> Option<(&str, &corral_policy::Rule)> {
    written_exec_rules(policy).find(|(_, r)| !r.names_a_program())
}

/// The first exec deny rule, for what could be anything (a command word computed when
/// the line runs, a program piped in): it is taken to match that rule.
fn first_exec_deny(policy: &Policy) -> Option<&corral_policy::Rule> {
    policy
        .layers()
        .iter()
        .flat_map(|l| l.rules())
        .find(|r| r.act() == Act::Exec && r.effect() == Effect::Deny)
}

/// The check for a shell or interpreter that runs whatever the stage before it writes:
/// decided like a line corral cannot read (`unparsable_inner_line`), and refused when an
/// exec deny rule exists, since the program could be anything that rule names.
fn piped_program(policy: &Policy, mode: ApprovalMode, i: usize, argv: &[String]) -> Check {
    let target = format!(
        "{} (its program from the pipe)",
        corral_line::display_argv(argv)
    );
    let (effect, why) = match first_exec_deny(policy) {
        Some(rule) => (
            Effect::Deny,
            format!(
                "it runs as a program whatever the stage before it writes, which is made when \
                 the line runs, so it is taken to match the deny rule `{}`; write the commands \
                 in the line itself, or in a here-document",
                rule.pattern()
            ),
        ),
        None => (
            policy.effects().unparsable_inner_line,
            "it runs as a program whatever the stage before it writes, which is made when the \
             line runs"
                .to_string(),
        ),
    };
    let decision = Decision {
        effect,
        act: Act::Exec,
        target: target.clone(),
        rule: None,
        why: corral_policy::Why::UnparsableInnerLine {
            line: target.clone(),
            refusal: why,
        },
        via: vec![],
        wrapper: false,
    };
    let resolution = match effect {
        Effect::Deny => Resolution::Refuse,
        effect => corral_policy::resolve(mode, effect, false, true),
    };
    Check {
        stage: i,
        act: Act::Exec,
        target,
        decision,
        verdict: None,
        resolution,
    }
}

/// The checks for a line the host shell runs: the shell itself, every command a bash
/// parser found in the line, every static write target, a computed command word as a
/// match for the first exec deny rule, and a person's approval when no fully enforced
/// sandbox holds it.
fn host_checks(
    policy: &Policy,
    mode: ApprovalMode,
    i: usize,
    stage: &crate::plan::Stage,
    host: &crate::plan::HostCheck,
    found: &Found<'_>,
    checks: &mut Vec<Check>,
) {
    let mut command = |env: &[(String, String)], argv: &[String]| {
        let verdict = command_verdict(policy, env, argv, found);
        checks.push(exec_check(i, argv, verdict, mode));
    };
    command(&[], &stage.argv[..1]);
    for (n, argv) in host.extracted.commands.iter().enumerate() {
        let env = host
            .extracted
            .assignments
            .get(n)
            .map_or(&[][..], Vec::as_slice);
        command(env, argv);
    }
    let synthetic = |effect: Effect, target: &str, why: String| Decision {
        effect,
        act: Act::Exec,
        target: target.to_string(),
        rule: None,
        why: corral_policy::Why::UnparsableInnerLine {
            line: target.to_string(),
            refusal: why,
        },
        via: vec!["host shell".to_string()],
        wrapper: false,
    };
    if let Some(rule) = first_exec_deny(policy) {
        for word in &host.extracted.computed {
            let why = format!(
                "its command word is computed when the line runs, so it is taken to match the \
                 deny rule `{}`",
                rule.pattern()
            );
            checks.push(Check {
                stage: i,
                act: Act::Exec,
                target: word.clone(),
                decision: synthetic(Effect::Deny, word, why),
                verdict: None,
                resolution: Resolution::Refuse,
            });
        }
    }
    for target in &host.extracted.writes {
        let path = stage.cwd.join(target);
        if path == Path::new("/dev/null") {
            continue;
        }
        let decision = policy.check_path(Act::Write, &path);
        let resolution =
            corral_policy::resolve(mode, decision.effect, false, decision.is_explicit());
        checks.push(Check {
            stage: i,
            act: Act::Write,
            target: path.display().to_string(),
            decision,
            verdict: None,
            resolution,
        });
    }
    // What runs programs the parser cannot name is asked about where a rule the person
    // or the operator wrote must hold (a deny, an ask): the rule cannot be checked
    // against what it will run. Built-in asks do not count: without such a rule, the
    // line runs in the box as any other.
    let rule = written_exec_rule(policy, host.kernel_holds_denied_programs);
    if let (Some(what), Some((layer, rule))) = (host.unmodelled.first(), rule) {
        let line = stage.argv.last().cloned().unwrap_or_default();
        let also = match host.unmodelled.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        let why = format!(
            "it uses {what}{also}, which runs programs corral cannot name before the line \
             runs, and the rule {:?} ({}, {}) must hold for every program it runs",
            rule.pattern(),
            layer,
            rule.origin()
        );
        checks.push(Check {
            stage: i,
            act: Act::Exec,
            target: line.clone(),
            decision: synthetic(Effect::Ask, &line, why),
            verdict: None,
            resolution: corral_policy::resolve(mode, Effect::Ask, false, true),
        });
    }
    if host.ask {
        let line = stage.argv.last().cloned().unwrap_or_default();
        let why = format!(
            "{}; it would run through the host shell outside a fully enforced sandbox",
            host.refusal
        );
        checks.push(Check {
            stage: i,
            act: Act::Exec,
            target: line.clone(),
            decision: synthetic(Effect::Ask, &line, why),
            verdict: None,
            resolution: corral_policy::resolve(mode, Effect::Ask, false, true),
        });
    }
}

/// Approvals given for the rest of the run.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    argvs: HashSet<(bool, Vec<String>)>,
    prefixes: Vec<Vec<String>>,
    paths: HashSet<(String, PathBuf)>,
}

impl Cache {
    pub(crate) fn covers(&self, item: &AskedItem) -> bool {
        match (&item.act, &item.path) {
            (Act::Exec, _) | (_, None) => {
                self.argvs.contains(&(item.bytes, item.argv.clone()))
                    || self.prefixes.iter().any(|p| item.argv.starts_with(p))
            }
            (act, Some(path)) => self.paths.contains(&(act.name().to_string(), path.clone())),
        }
    }

    pub(crate) fn remember(&mut self, item: &AskedItem) {
        match (&item.act, &item.path) {
            (Act::Exec, _) | (_, None) => {
                self.argvs.insert((item.bytes, item.argv.clone()));
            }
            (act, Some(path)) => {
                self.paths.insert((act.name().to_string(), path.clone()));
            }
        }
    }
}

/// A run's policy, approval mode, approver and approval cache.
#[derive(Debug)]
pub(crate) struct Gate {
    pub policy: Policy,
    pub mode: ApprovalMode,
    pub approver: Arc<dyn Approver>,
    /// Refuse programs that need a terminal (they would hang or fail without one).
    pub refuse_interactive: bool,
    pub(crate) cache: Mutex<Cache>,
    /// The ruled programs found on disk, once per run.
    ruled: std::sync::OnceLock<(Ruled, Option<String>)>,
    /// Whether the undo record holds git's refs and index (`git_write`): what moves them
    /// is put back by `corral undo` only then.
    pub refs_recorded: bool,
}

/// Where a check is made, for the record.
#[derive(Debug)]
pub(crate) struct Context<'a> {
    pub run_id: &'a str,
    pub step_id: i64,
    pub tool: &'a str,
    pub line: Option<&'a str>,
    /// The call runs on a terminal: programs that need one may start.
    pub terminal: bool,
    /// The environment the call's programs start with (what the terminal check reads of
    /// it: the editor git starts); empty for the file tools.
    pub env: &'a [crate::env::Var],
    /// What it starts reads input typed later (a handle's terminal or stdin pipe).
    pub typed: bool,
    pub workspace: &'a Path,
    pub now_ms: i64,
    /// What a refusal says did not happen: `Nothing ran.`, or `Nothing was changed.` for
    /// the file tools.
    pub nothing: &'static str,
    /// Who already approved what this call runs, when a person set it (the task's
    /// verification gate, from `--verify` or a trusted file): its asks pass, recorded as
    /// approved by that name, and no approver is asked. Denies still refuse.
    pub approved_by: Option<&'a str>,
    /// Why what this call changes cannot be recorded for undo, when it cannot: what it
    /// would destroy is then asked about by effect (see `by_effect`).
    pub unrecorded: Option<&'a str>,
}

/// What the gate concluded.
#[derive(Debug)]
pub(crate) enum Passage {
    /// Start it.
    Pass,
    /// Do not start it, and end the run: the approver aborted.
    Abort(Error),
}

impl Gate {
    pub(crate) fn new(policy: Policy, mode: ApprovalMode, approver: Arc<dyn Approver>) -> Self {
        Self {
            policy,
            mode,
            approver,
            refuse_interactive: true,
            cache: Mutex::new(Cache::default()),
            ruled: std::sync::OnceLock::new(),
            refs_recorded: true,
        }
    }

    /// `message` with the policy's notices (an untrusted file being ignored) after it.
    fn noted(&self, mut message: String) -> String {
        for notice in self.policy.notices() {
            message.push_str("\n[policy] ");
            message.push_str(notice);
        }
        message
    }

    /// Check `plan`; record refusals and answers through `record`. `Err` refuses the call.
    pub(crate) fn check(
        &self,
        plan: &Plan,
        ctx: &Context<'_>,
        record: &mut dyn FnMut(NewPolicyEvent),
    ) -> Result<Passage> {
        let (ruled, path_var) = self.ruled.get_or_init(|| {
            let path_var = std::env::var("PATH").ok();
            (Ruled::find(&self.policy, path_var.as_deref()), path_var)
        });
        let mut checks = explain_with(&self.policy, plan, self.mode, ruled, path_var.as_deref());
        if ctx.typed {
            checks.extend(typed_input(&self.policy, plan, self.mode));
        }
        checks.extend(by_effect::checks(
            plan,
            ctx.workspace,
            ctx.unrecorded,
            crate::destructive::is_on(&self.policy),
            self.refs_recorded,
            self.mode,
        ));
        // Denies and refusals first: one refuses everything, and no approver is asked.
        if let Some(c) = checks.iter().find(|c| c.resolution == Resolution::Refuse) {
            return Err(self.refuse(c, ctx, record));
        }
        let stages: Vec<_> = plan.checked_stages().collect();
        if self.refuse_interactive
            && !ctx.terminal
            && let Some((c, terminal)) = terminal_wanted(plan, &checks, |stage| {
                // The call's environment is in force too (`GIT_SEQUENCE_EDITOR` given
                // with the call): the stage's verdict saw only its own assignments. A
                // verdict the stage's own words do not give (a command inside a line the
                // host shell runs) stands as it is.
                ctx.env.is_empty()
                    || self
                        .policy
                        .needs_terminal_with(&stage.argv, &stage.env)
                        .is_none()
                    || {
                        let mut assigned: Vec<(String, String)> = ctx
                            .env
                            .iter()
                            .filter_map(|(k, v)| Some((k.to_str()?.into(), v.to_str()?.into())))
                            .collect();
                        assigned.extend(stage.env.iter().cloned());
                        self.policy
                            .needs_terminal_with(&stage.argv, &assigned)
                            .is_some()
                    }
            })
        {
            return Err(refuse_without_terminal(c, terminal, ctx, record));
        }
        let asked = |c: &Check| {
            let stage = stages[c.stage];
            AskedItem {
                act: c.act,
                // Assignments are part of what is approved and of the cache key:
                // `GIT_CONFIG_*=… git status` is not `git status`.
                argv: stage.checked_argv(),
                bytes: stage.bytes.is_some(),
                program: stage.program.as_ref().ok().cloned(),
                cwd: stage.cwd.clone(),
                path: (c.act != Act::Exec).then(|| PathBuf::from(&c.target)),
                decision: c.decision.clone(),
            }
        };
        let asks = self.uncached(&checks, asked, ctx, record);
        if asks.is_empty() {
            return Ok(Passage::Pass);
        }
        if let Some(by) = ctx.approved_by {
            for (c, _) in &asks {
                record(event(ctx, c, Decided::Approved, by, None));
            }
            return Ok(Passage::Pass);
        }
        self.ask(&asks, ctx, record)
    }

    /// Check what a file tool touches, `(act, path)` each, as [`Gate::check`] checks a
    /// plan: a deny refuses all of it, asks go to the approver in one request, every
    /// refusal and answer recorded. The approver is shown the tool and the path.
    pub(crate) fn check_paths(
        &self,
        items: &[(Act, PathBuf)],
        ctx: &Context<'_>,
        record: &mut dyn FnMut(NewPolicyEvent),
    ) -> Result<Passage> {
        let checks: Vec<Check> = items
            .iter()
            .map(|(act, path)| {
                let decision = self.policy.check_path(*act, path);
                let resolution = corral_policy::resolve(
                    self.mode,
                    decision.effect,
                    false,
                    decision.is_explicit(),
                );
                Check {
                    stage: 0,
                    act: *act,
                    target: path.display().to_string(),
                    decision,
                    verdict: None,
                    resolution,
                }
            })
            .collect();
        if let Some(c) = checks.iter().find(|c| c.resolution == Resolution::Refuse) {
            return Err(self.refuse(c, ctx, record));
        }
        let asked = |c: &Check| AskedItem {
            act: c.act,
            argv: vec![ctx.tool.to_string(), c.target.clone()],
            bytes: false,
            program: None,
            cwd: ctx.workspace.to_path_buf(),
            path: Some(PathBuf::from(&c.target)),
            decision: c.decision.clone(),
        };
        let asks = self.uncached(&checks, asked, ctx, record);
        if asks.is_empty() {
            return Ok(Passage::Pass);
        }
        self.ask(&asks, ctx, record)
    }

    /// The error for a check the policy refuses outright (a deny, or an ask in a mode
    /// that asks no one), recorded.
    fn refuse(
        &self,
        c: &Check,
        ctx: &Context<'_>,
        record: &mut dyn FnMut(NewPolicyEvent),
    ) -> Error {
        let denied = c.decision.effect == Effect::Deny;
        let why = if denied {
            format!("refused by policy: {}", c.decision)
        } else {
            format!(
                "refused: it needs approval and the approval mode is `{}`: {}",
                self.mode, c.decision
            )
        };
        record(event(ctx, c, Decided::Refused, "policy", Some(why.clone())));
        let hint = if denied {
            deny_hint(c)
        } else {
            format!(
                "This {} needs a person's approval and the approval mode `{}` asks no one: {}",
                c.act,
                self.mode,
                c.lift().words(self.policy.is_from_files())
            )
        };
        Error::denied(
            self.noted(format!("{why}. {} {hint}", ctx.nothing)),
            denial(DenialStatus::Refused, &c.decision, hint.clone()),
        )
    }

    /// The checks to ask about, each with what the approver is shown (`item`): the asks
    /// minus what the run already approved (recorded as such).
    fn uncached<'c>(
        &self,
        checks: &'c [Check],
        item: impl Fn(&Check) -> AskedItem,
        ctx: &Context<'_>,
        record: &mut dyn FnMut(NewPolicyEvent),
    ) -> Vec<(&'c Check, AskedItem)> {
        let asks = checks
            .iter()
            .filter(|c| c.resolution == Resolution::AskApprover)
            .map(|c| (c, item(c)));
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let (cached, asks): (Vec<_>, Vec<_>) = asks.partition(|(_, item)| cache.covers(item));
        drop(cache);
        for (c, _) in &cached {
            record(event(ctx, c, Decided::ApprovedCached, "cache", None));
        }
        asks
    }

    /// Ask the approver about `asks` at once, record its answer, and act on it.
    fn ask(
        &self,
        asks: &[(&Check, AskedItem)],
        ctx: &Context<'_>,
        record: &mut dyn FnMut(NewPolicyEvent),
    ) -> Result<Passage> {
        let request = ApprovalRequest {
            tool: ctx.tool.to_string(),
            line: ctx.line.map(str::to_string),
            items: asks.iter().map(|(_, item)| item.clone()).collect(),
        };
        let answer = self.approver.approve(&request, ctx.workspace);
        let by = self.approver.name().to_string();
        let mut each = |decision: Decided, reason: Option<&str>| {
            for (c, _) in asks {
                record(event(ctx, c, decision, &by, reason.map(str::to_string)));
            }
        };
        match answer {
            Approval::Approve => {
                each(Decided::Approved, None);
                Ok(Passage::Pass)
            }
            Approval::ApproveForRun | Approval::ApprovePrefix(_) => {
                let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
                if let Approval::ApprovePrefix(prefix) = &answer {
                    cache.prefixes.push(prefix.clone());
                }
                for (_, item) in asks {
                    cache.remember(item);
                }
                each(Decided::ApprovedForRun, None);
                Ok(Passage::Pass)
            }
            Approval::Deny(reason) => {
                let reason = reason.unwrap_or_else(|| "declined".into());
                each(Decided::Denied, Some(&reason));
                let first = asks[0].0;
                let lift = Lift::of(asks.iter().flat_map(|(c, _)| c.asking()));
                // Not an invitation to find a way around it: what was refused is the
                // effect, whichever command would have had it.
                let hint = format!(
                    "Do not run it again, nor another command to the same effect: tell the \
                     person what it was for, or ask them what they want done instead; {}",
                    lift.words(self.policy.is_from_files())
                );
                let question = request.question(ctx.workspace);
                Err(Error::denied(
                    self.noted(format!(
                        "not approved: {question} ({by}: {reason}). {} {hint}",
                        ctx.nothing
                    )),
                    denial(DenialStatus::Declined, &first.decision, hint.clone()),
                ))
            }
            Approval::Abort(reason) => {
                let reason = reason.unwrap_or_else(|| "aborted".into());
                each(Decided::Aborted, Some(&reason));
                let question = request.question(ctx.workspace);
                Ok(Passage::Abort(Error::new(
                    crate::ErrorKind::Closed,
                    format!("not approved, and the run was ended: {question} ({by}: {reason})"),
                )))
            }
        }
    }
}

/// A question the sandbox puts to the approver about a call's first stage, after the
/// sandbox refused something: rerun with a path writable, allow a domain for the run.
pub(crate) struct SandboxQuestion<'a> {
    /// What is asked, as an approver's request names it (`rerun-sandboxed`, `allow-domain`).
    pub tool: &'static str,
    pub act: Act,
    pub stage: &'a Stage,
    /// The line as asked, for `shell`.
    pub line: Option<String>,
    /// The path a rerun would make writable.
    pub path: Option<PathBuf>,
    /// The question in words.
    pub target: String,
}

/// How the approver answered a [`SandboxQuestion`].
pub(crate) enum SandboxAnswer {
    Approved,
    /// Approved for the rest of the run.
    ApprovedForRun,
    /// Declined; the reason, when one was given.
    Declined(Option<String>),
    /// Declined, and the run is to end, as for any question the approver aborts.
    Aborted(Error),
}

impl Gate {
    /// Put a sandbox's question to the run's approver, as the gate puts its own.
    /// Ask whether to apply a change a call made to a file the host runs (see
    /// `autorun`): `diff` is the change as the one renderer shows it. `false` where
    /// nobody is asked (approval `never`) or the answer is no.
    pub(crate) fn ask_held(&self, path: &Path, runs: &str, diff: String, workspace: &Path) -> bool {
        if self.mode == ApprovalMode::Never {
            return false;
        }
        let item = AskedItem {
            act: Act::Write,
            argv: Vec::new(),
            bytes: false,
            program: None,
            cwd: workspace.to_path_buf(),
            path: Some(path.to_path_buf()),
            decision: Decision {
                effect: Effect::Ask,
                act: Act::Write,
                target: runs.to_string(),
                rule: None,
                why: corral_policy::Why::ActDefault,
                via: Vec::new(),
                wrapper: false,
            },
        };
        let request = ApprovalRequest {
            tool: "apply-held".into(),
            line: Some(diff),
            items: vec![item],
        };
        matches!(
            self.approver.approve(&request, workspace),
            Approval::Approve | Approval::ApproveForRun | Approval::ApprovePrefix(_)
        )
    }

    pub(crate) fn ask_sandbox(&self, q: SandboxQuestion<'_>, workspace: &Path) -> SandboxAnswer {
        let item = AskedItem {
            act: q.act,
            argv: q.stage.argv.clone(),
            bytes: q.stage.bytes.is_some(),
            program: q.stage.program.as_ref().ok().cloned(),
            cwd: q.stage.cwd.clone(),
            path: q.path,
            decision: Decision {
                effect: Effect::Ask,
                act: q.act,
                target: q.target,
                rule: None,
                why: corral_policy::Why::ActDefault,
                via: Vec::new(),
                wrapper: false,
            },
        };
        let request = ApprovalRequest {
            tool: q.tool.into(),
            line: q.line,
            items: vec![item],
        };
        match self.approver.approve(&request, workspace) {
            Approval::Approve | Approval::ApprovePrefix(_) => SandboxAnswer::Approved,
            Approval::ApproveForRun => SandboxAnswer::ApprovedForRun,
            Approval::Deny(reason) => SandboxAnswer::Declined(reason),
            Approval::Abort(reason) => {
                let by = self.approver.name();
                let reason = reason.unwrap_or_else(|| "aborted".into());
                let question = request.question(workspace);
                SandboxAnswer::Aborted(Error::new(
                    crate::ErrorKind::Closed,
                    format!("not approved, and the run was ended: {question} ({by}: {reason})"),
                ))
            }
        }
    }
}

/// What became of a question the gate or the sandbox decided or asked, as the trace's
/// `policy_events.decision` records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decided {
    /// The policy refused it; no one was asked.
    Refused,
    /// The run had already approved it.
    ApprovedCached,
    /// A person approved it, once.
    Approved,
    /// A person approved it for the rest of the run.
    ApprovedForRun,
    /// A person declined it.
    Denied,
    /// A person declined it and ended the run.
    Aborted,
    /// A rerun in the sandbox with a denied path writable: approved once.
    RerunApproved,
    /// The same, approved for the rest of the run.
    RerunApprovedForRun,
    /// The same, declined.
    RerunDenied,
    /// The same, declined and the run ended.
    RerunAborted,
    /// A domain the proxy refused, allowed for the rest of the run.
    DomainAllowedForRun,
    /// The same, declined for the rest of the run.
    DomainDeclinedForRun,
    /// The same, declined and the run ended.
    DomainAborted,
}

impl Decided {
    /// The word the trace records.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Decided::Refused => "refused",
            Decided::ApprovedCached => "approved_cached",
            Decided::Approved => "approved",
            Decided::ApprovedForRun => "approved_for_run",
            Decided::Denied => "denied",
            Decided::Aborted => "aborted",
            Decided::RerunApproved => "rerun_sandboxed_approved",
            Decided::RerunApprovedForRun => "rerun_sandboxed_approved_for_run",
            Decided::RerunDenied => "rerun_sandboxed_denied",
            Decided::RerunAborted => "rerun_sandboxed_aborted",
            Decided::DomainAllowedForRun => "domain_allowed_for_run",
            Decided::DomainDeclinedForRun => "domain_declined_for_run",
            Decided::DomainAborted => "domain_aborted",
        }
    }
}

/// The policy event a check's outcome is recorded as.
fn event(
    ctx: &Context<'_>,
    c: &Check,
    decision: Decided,
    answered_by: &str,
    reason: Option<String>,
) -> NewPolicyEvent {
    NewPolicyEvent {
        run_id: ctx.run_id.to_string(),
        step_id: Some(ctx.step_id),
        at_ms: ctx.now_ms,
        act: c.act.name().to_string(),
        target: c.target.clone(),
        effect: c.decision.effect.name().to_string(),
        rule: c.decision.rule.as_ref().map(|r| r.pattern().to_string()),
        layer: c.decision.rule.as_ref().map(|r| r.layer().to_string()),
        origin: c.decision.rule.as_ref().map(|r| r.origin().to_string()),
        decision: decision.word().to_string(),
        answered_by: Some(answered_by.to_string()),
        reason,
    }
}

/// The first stage of `plan` that needs a terminal, with why, when the call gives it none.
/// A REPL or a database shell given its input (`python3 <<'EOF'`, `… | psql`, `sqlite3 db
/// < q.sql`) runs that and ends: it needs none. What the gate refuses in a call without a
/// terminal and what `corral policy check` says about it.
pub fn wants_a_terminal<'c>(
    plan: &Plan,
    checks: &'c [Check],
) -> Option<(&'c Check, &'c corral_policy::Terminal)> {
    terminal_wanted(plan, checks, |_| true)
}

/// [`wants_a_terminal`], where a stage whose verdict wants one wants it still only when
/// `still` says so (with what the verdict did not see: the call's environment).
fn terminal_wanted<'c>(
    plan: &Plan,
    checks: &'c [Check],
    still: impl Fn(&Stage) -> bool,
) -> Option<(&'c Check, &'c corral_policy::Terminal)> {
    let stages: Vec<_> = plan.checked_stages().collect();
    checks.iter().filter(|c| c.act == Act::Exec).find_map(|c| {
        let terminal = c.verdict.as_ref()?.needs_terminal.as_ref()?;
        let stage = stages[c.stage];
        if !still(stage) {
            return None;
        }
        let stdin_given =
            stage.piped || stage.fed.is_some() || stage.redirects.iter().any(|r| r.fd == 0);
        let runs_its_input =
            stdin_given && corral_policy::interactive::reads_its_stdin(terminal.reason);
        (!runs_its_input).then_some((c, terminal))
    })
}

/// The error for a program that needs a terminal in a call without one, recorded.
fn refuse_without_terminal(
    c: &Check,
    terminal: &corral_policy::Terminal,
    ctx: &Context<'_>,
    record: &mut dyn FnMut(NewPolicyEvent),
) -> Error {
    let why = format!(
        "`{}` needs a terminal ({}), and this call has none: run it in a terminal session, \
         or use a non-interactive form",
        terminal.command, terminal.reason
    );
    record(event(ctx, c, Decided::Refused, "policy", Some(why.clone())));
    let hint = "start it with shell_start and tty: true, then drive it with shell_write, \
                shell_keys and shell_screen; or use its non-interactive form"
        .to_string();
    Error::denied(
        format!("refused: {why}. {}", ctx.nothing),
        Denial {
            status: DenialStatus::Refused,
            rule: None,
            layer: Some("terminal".into()),
            hint,
        },
    )
}

/// The fields of a refusal or a declined approval decided by `decision`.
fn denial(status: DenialStatus, decision: &Decision, hint: String) -> Denial {
    Denial {
        status,
        rule: decision.rule.as_ref().map(|r| r.pattern().to_string()),
        layer: decision.rule.as_ref().map(|r| r.layer().to_string()),
        hint,
    }
}

/// What to do about a deny: it cannot be approved, only avoided or lifted by the operator
/// with a rule of the right kind.
fn deny_hint(check: &Check) -> String {
    let whose = match &check.decision.rule {
        Some(rule) => format!(
            "The rule {:?} in layer {} ({}) denies it",
            rule.pattern(),
            rule.layer(),
            rule.origin()
        ),
        None => format!(
            "The policy denies every {} not allowed by a rule",
            check.act
        ),
    };
    let instead = match check.act {
        Act::Exec => "run a different command that does the job",
        Act::Read => "read a different path",
        Act::Write => "write somewhere else, such as a file in the workspace",
        Act::Env => "run the command without that variable",
        _ => "leave it undone, and tell the person what it was for",
    };
    format!("{whose}, and no approval can lift a deny: {instead}")
}
