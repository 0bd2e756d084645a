//! `corral policy`: what the policy says, without running anything; and the one place the
//! CLI builds its policy from files and flags.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use corral::policy::{Act, ApprovalMode, Effect, Origin, Rule};
use corral::{Policy, PolicyFiles};

use crate::args::{PolicyArgs, PolicyCommand};
use crate::exit::Done;

/// The policy a person typing a command gets: everything no file or flag denies is
/// allowed (the person typing is the approver), files stacked, then the flags.
pub fn build(workspace: &Path, args: &PolicyArgs) -> anyhow::Result<(Policy, ApprovalMode)> {
    let files = PolicyFiles::discover(workspace, &args.files)?;
    let mut policy = files.load_onto(Policy::permissive())?;
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
    let mode = match &args.approval {
        Some(name) => ApprovalMode::from_name(name).ok_or_else(|| {
            corral_invalid(format!(
                "unknown approval mode {name:?}: use never, on-request, unless-trusted or on-failure"
            ))
        })?,
        None => policy.approval_mode().unwrap_or_default(),
    };
    if args.yes && mode == ApprovalMode::Never {
        bail!(corral_invalid(
            "--yes and --approval never conflict: one approves what the other refuses to ask about; pass one"
                .into()
        ));
    }
    Ok((policy, mode))
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
            policy,
            json,
            argv,
        } => {
            let workspace = workspace_or_cwd(workspace)?;
            let (policy, mode) = build(&workspace, &policy)?;
            let plan = match (line, argv.is_empty()) {
                (Some(line), _) => corral::Plan::for_line(&line, &workspace, &workspace)?,
                (None, false) => corral::Plan::for_argv(argv, &workspace)?,
                (None, true) => bail!(corral_invalid(
                    "nothing to check: pass an argv after `--` or a line with --line".into()
                )),
            };
            let checks = corral::explain(&policy, &plan, mode);
            let mut out = std::io::stdout().lock();
            if json {
                serde_json::to_writer_pretty(&mut out, &checks)?;
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
                }
            }
            let worst = checks
                .iter()
                .map(|c| c.effect())
                .max()
                .unwrap_or(Effect::Allow);
            Ok(Done::Status(match worst {
                Effect::Allow => 0,
                Effect::Ask => 1,
                Effect::Deny => 2,
            }))
        }
        PolicyCommand::Show { workspace, policy } => {
            let workspace = workspace_or_cwd(workspace)?;
            let files = PolicyFiles::discover(&workspace, &policy.files)?;
            let (built, mode) = build(&workspace, &policy)?;
            let mut out = std::io::stdout().lock();
            writeln!(out, "# files, lowest layer first")?;
            if files.files.is_empty() {
                writeln!(
                    out,
                    "#   (none: no $CORRAL_POLICY, user config or corral.toml)"
                )?;
            }
            for (layer, path) in &files.files {
                writeln!(out, "#   {layer}: {}", path.display())?;
            }
            writeln!(out, "# approval mode: {mode}")?;
            write!(out, "{}", built.describe())?;
            Ok(Done::Status(0))
        }
    }
}

/// The workspace a flag names, or the current directory.
pub(crate) fn workspace_or_cwd(workspace: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match workspace {
        Some(dir) => Ok(dir),
        None => std::env::current_dir().context("reading the current directory"),
    }
}
