//! `corral policy`: what the policy says, without running anything, for any surface's
//! posture (`--surface cli|mcp|library`); and the one place the CLI builds its policy from
//! files and flags.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::bail;
use corral::policy::{Act, ApprovalMode, Effect, Origin, Resolution, Rule};
use corral::{Config, Overrides, Policy, PolicyFiles, Posture, Surface};

use crate::args::{PolicyArgs, PolicyCommand};
use crate::exit::Done;
use crate::workspace::workspace_or_cwd;

/// `surface`'s posture in `workspace` with these flags: its defaults, the policy files
/// (`extra_files` after `--policy`'s), then the `--allow`/`--ask`/`--deny` rules.
pub fn posture(
    surface: Surface,
    workspace: &Path,
    args: &PolicyArgs,
    extra_files: &[PathBuf],
    config: Config,
    sandbox: Option<corral::sandbox::SandboxMode>,
) -> anyhow::Result<Posture> {
    let approval = approval_flag(args.approval.as_deref())?;
    let overrides = Overrides {
        policy_files: args.files.iter().chain(extra_files).cloned().collect(),
        sandbox,
        approval,
        model_caller: args.caller == "model",
    };
    let mut posture = Posture::new(surface, workspace, config, &overrides)?;
    push_flag_rules(&mut posture.policy, args)?;
    refuse_yes_with_never(args, posture.approval)?;
    Ok(posture)
}

/// The `--allow`/`--ask`/`--deny` rules, as the top layer (`flags`).
fn push_flag_rules(policy: &mut Policy, args: &PolicyArgs) -> anyhow::Result<()> {
    for (flag, patterns, effect) in [
        ("--allow", &args.allow, Effect::Allow),
        ("--ask", &args.ask, Effect::Ask),
        ("--deny", &args.deny, Effect::Deny),
    ] {
        for pattern in patterns {
            let rule = Rule::new(
                Act::Exec,
                pattern.as_str(),
                effect,
                Origin::Flag(flag.to_string()),
            )
            .map_err(|e| anyhow::anyhow!(corral_invalid(format!("{flag} {pattern:?}: {e}"))))?;
            policy.push_rule("flags", rule);
        }
    }
    Ok(())
}

/// What the policy files set beyond rules, onto `config`, from one read of each file and
/// of the trust store: `persist_cwd`, the memory bound unless `--memory` gave one
/// (`memory_flag`), the output budget and the undo bounds.
pub fn apply_file_settings(
    files: &PolicyFiles,
    config: &mut Config,
    memory_flag: bool,
) -> anyhow::Result<()> {
    let settings = files.settings()?;
    config.persist_cwd = settings.persist_cwd.unwrap_or(false);
    if !memory_flag && let Some(memory) = settings.memory_max {
        config.memory_max = memory;
    }
    if let Some(budget) = settings.output_budget {
        config.output_budget = budget;
    }
    config.undo_budget = settings.undo_budget(config.undo_budget);
    Ok(())
}

/// `--yes` approves what `--approval never` refuses to ask about: one of them is a mistake.
fn refuse_yes_with_never(args: &PolicyArgs, mode: ApprovalMode) -> anyhow::Result<()> {
    if args.yes && mode == ApprovalMode::Never {
        bail!(corral_invalid(
            "--yes and --approval never conflict: one approves what the other refuses to ask about; pass one"
                .into()
        ));
    }
    Ok(())
}

/// The `--approval` flag, parsed.
pub fn approval_flag(name: Option<&str>) -> anyhow::Result<Option<ApprovalMode>> {
    name.map(|name| {
        ApprovalMode::from_name(name).ok_or_else(|| {
            anyhow::anyhow!(corral_invalid(format!(
                "unknown approval mode {name:?}: use never, on-request, unless-trusted or on-failure"
            )))
        })
    })
    .transpose()
}

/// A bad-request error the exit mapping recognises (exit 2).
fn corral_invalid(message: String) -> corral::Error {
    corral::Error::invalid_request(message)
}

pub fn run(command: PolicyCommand) -> anyhow::Result<Done> {
    match command {
        PolicyCommand::Check {
            workspace,
            line,
            surface,
            policy,
            sandbox,
            host_shell,
            json,
            argv,
        } => {
            let workspace = workspace_or_cwd(workspace)?;
            let base = sandbox.config(&workspace)?;
            let posture = posture(surface, &workspace, &policy, &[], base, sandbox.mode)?;
            let plan = match (line, argv.is_empty()) {
                (Some(line), _) => match corral::line::parse(&line) {
                    // The surface's host shell takes what the grammar refuses, as its
                    // `shell` tool would.
                    Err(refusal) if !line.trim().is_empty() => corral::plan_host_line(
                        &line,
                        refusal,
                        host_shell.resolve(&posture.files, posture.surface.host_shell())?,
                        posture.config.sandbox.mode,
                        workspace.clone(),
                        std::env::var("PATH").ok().as_deref(),
                    )?,
                    _ => corral::Plan::for_line(&line, &workspace, &workspace)?,
                },
                (None, false) => corral::Plan::for_argv(argv, &workspace)?,
                (None, true) => bail!(corral_invalid(
                    "nothing to check: pass an argv after `--` or a line with --line".into()
                )),
            };
            let plan = plan.in_box(posture.config.sandbox.mode);
            // As a call's gate checks it: the policy, then the built-in asks by effect.
            let checks = posture.explain(&plan);
            // A call gets no terminal: what needs one is refused before any approver is
            // asked, as the tools refuse it.
            let terminal =
                corral::wants_a_terminal(&plan, &checks).map(|(c, t)| (c.stage, t.clone()));
            let mut out = std::io::stdout().lock();
            if !json {
                for notice in posture.policy.notices() {
                    writeln!(out, "note: {notice}")?;
                }
            }
            if json {
                // The same list; the stage that needs a terminal is marked refused, with why.
                let mut value = serde_json::to_value(&checks)?;
                if let (Some((stage, t)), Some(list)) = (&terminal, value.as_array_mut())
                    && let Some(check) = list
                        .iter_mut()
                        .find(|c| c["stage"] == *stage && c["act"] == "exec")
                {
                    check["resolution"] = serde_json::json!("refuse");
                    check["needs_terminal"] =
                        serde_json::json!({ "command": t.command, "reason": t.reason });
                }
                serde_json::to_writer_pretty(&mut out, &value)?;
                writeln!(out)?;
            } else {
                for check in &checks {
                    writeln!(out, "{}", check.decision)?;
                    for inner in check
                        .verdict
                        .iter()
                        .flat_map(|v| v.decisions.iter().skip(1))
                    {
                        if inner.via.is_empty() {
                            writeln!(out, "  also: {inner}")?;
                        } else {
                            writeln!(out, "  via {}: {inner}", inner.via.join(" > "))?;
                        }
                    }
                    if let Some(why) = check.verdict.as_ref().and_then(|v| v.not_safe.as_ref()) {
                        writeln!(out, "  not known-safe: {why}")?;
                    }
                    writeln!(
                        out,
                        "  -> {} ({surface}, approval {})",
                        resolution_words(check.resolution),
                        posture.approval
                    )?;
                }
            }
            if let (false, Some((_, t))) = (json, &terminal) {
                writeln!(
                    out,
                    "refuse terminal  {}  (needs a terminal: {}; a call has none)\n  \
                     -> refused ({surface}): start it with shell_start and tty: true, or use its \
                     non-interactive form",
                    t.command, t.reason
                )?;
            }
            let worst = checks
                .iter()
                .map(|c| resolution_rank(c.resolution))
                .chain(
                    terminal
                        .is_some()
                        .then(|| resolution_rank(Resolution::Refuse)),
                )
                .max()
                .unwrap_or(0);
            Ok(Done::Status(worst))
        }
        PolicyCommand::Show {
            workspace,
            surface,
            policy,
            sandbox,
        } => {
            let workspace = workspace_or_cwd(workspace)?;
            let base = sandbox.config(&workspace)?;
            let posture = posture(surface, &workspace, &policy, &[], base, sandbox.mode)?;
            let mut out = std::io::stdout().lock();
            writeln!(out, "# surface: {surface} ({})", surface_words(surface))?;
            writeln!(out, "# files, lowest layer first")?;
            if posture.files.files.is_empty() {
                writeln!(
                    out,
                    "#   (none: no $CORRAL_POLICY, user config or corral.toml)"
                )?;
            }
            for (layer, path) in &posture.files.files {
                writeln!(out, "#   {layer}: {}", path.display())?;
            }
            writeln!(out, "# approval mode: {}", posture.approval)?;
            writeln!(out, "# {}", posture.sandbox.line())?;
            if let Some(dir) = &posture.sandbox.caches {
                writeln!(out, "# caches: {}", dir.display())?;
            }
            writeln!(out, "# {}", posture.summary())?;
            write!(out, "{}", posture.policy.describe())?;
            writeln!(out, "# what this policy relies on")?;
            let workspace_file = posture
                .files
                .files
                .iter()
                .any(|(layer, _)| layer == "project");
            for line in relies_on(&posture.policy, posture.approval, workspace_file) {
                writeln!(out, "#   {line}")?;
            }
            Ok(Done::Status(0))
        }
        PolicyCommand::Trust { workspace } => {
            let workspace = workspace_or_cwd(workspace)?;
            let file = workspace.join("corral.toml");
            let store = corral::TrustStore::default_location().ok_or_else(|| {
                corral_invalid(
                    "no place to keep trust: set XDG_STATE_HOME or HOME (or CORRAL_TRUST_STORE)"
                        .into(),
                )
            })?;
            let hash = store.trust(&file)?;
            println!(
                "trusted {} (sha256 {hash}) in {}; a change to it makes it untrusted again",
                file.display(),
                store.path().display()
            );
            Ok(Done::Status(0))
        }
    }
}

/// What this policy's decisions rely on, for `corral policy show`: which of corral's
/// checks its rules and approval mode depend on, and what none of them covers.
fn relies_on(policy: &Policy, mode: ApprovalMode, workspace_file: bool) -> Vec<String> {
    let mut out = Vec::new();
    let ruled = policy.ruled_programs(Effect::Ask);
    if !ruled.is_empty() {
        out.push(format!(
            "its ask/deny rules on programs ({}) rely on launchers being unwrapped (env, sudo, \
             xargs, find -exec, sh -c, strace, script -c, parallel, ...; what corral cannot see \
             into is decided like an unparsable line) and on file identity (a symlink or hard \
             link under another name gets the rule; multi-call binaries go by name; a copy does not)",
            ruled.join(", ")
        ));
    }
    out.push(
        "assignments in front of a command (NAME=value, env, sudo, strace -E) are env decisions: \
         PATH, LD_*, BASH_ENV, GIT_*, PYTHON*, ... ask unless an [env] rule decides"
            .to_string(),
    );
    if mode == ApprovalMode::UnlessTrusted {
        out.push(
            "unless-trusted runs known-safe commands without asking: it relies on the reviewed \
             known-safe list (git status/diff/log, cargo --version, rg --pre, sort \
             --compress-program, sed e/w, ... are not on it)"
                .to_string(),
        );
    }
    if workspace_file {
        out.push(if policy.notices().is_empty() {
            "the workspace corral.toml is trusted as it is; a change makes it untrusted again"
                .to_string()
        } else {
            "the workspace corral.toml is not trusted: only its denies and asks apply".to_string()
        });
    }
    out.push(
        "not checked: commands typed into an interactive shell on a terminal handle (starting \
         the shell is the decision), and what a started program does (the sandbox bounds that)"
            .to_string(),
    );
    out
}

/// What the approval mode makes of a check, in words.
fn resolution_words(resolution: Resolution) -> &'static str {
    match resolution {
        Resolution::Run => "runs without asking",
        Resolution::AskApprover => "asks the approver",
        Resolution::Refuse => "refused",
    }
}

/// The exit status a check gives: 0 runs, 1 asks, 2 refused.
fn resolution_rank(resolution: Resolution) -> i32 {
    match resolution {
        Resolution::Run => 0,
        Resolution::AskApprover => 1,
        Resolution::Refuse => 2,
    }
}

fn surface_words(surface: Surface) -> &'static str {
    match surface {
        Surface::Cli => "corral exec and corral shell",
        Surface::Mcp => "corral mcp",
        Surface::Task => "corral run",
        Surface::Library => {
            "the Rust library's defaults: Policy::default() with the files, as PolicyFiles::load_onto gives them"
        }
    }
}
