//! `corral init`: a commented `corral.toml` for the project, from what its files say: its
//! commands as allow rules, a few denies, and its test command as the gate.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use corral::task::project;

use crate::exit::Done;

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Replace an existing corral.toml.
    #[arg(long)]
    pub force: bool,
    /// Print it on stdout instead of writing it.
    #[arg(long)]
    pub print: bool,
}

pub fn run(args: InitArgs) -> anyhow::Result<Done> {
    let workspace = crate::workspace::workspace_or_cwd(args.workspace)?;
    let found = project::detect(&workspace);
    let text = project::init_toml(&found);
    if args.print {
        std::io::stdout().lock().write_all(text.as_bytes())?;
        return Ok(Done::Status(0));
    }
    let path = workspace.join("corral.toml");
    if path.exists() && !args.force {
        return Err(corral::Error::invalid_request(format!(
            "{} exists: pass --force to replace it, or --print to see what would be written",
            path.display()
        ))
        .into());
    }
    std::fs::write(&path, &text).with_context(|| format!("writing {}", path.display()))?;
    // The person who ran init wrote this file: its allow rules apply until it changes.
    let trusted = match corral::TrustStore::default_location() {
        Some(store) => match store.trust(&path) {
            Ok(_) => {
                "trusted as written (a change makes it untrusted: `corral policy trust` again)"
                    .to_string()
            }
            Err(e) => {
                format!("not trusted ({e}): run `corral policy trust` so its allow rules apply")
            }
        },
        None => {
            "not trusted (set HOME or XDG_STATE_HOME, then run `corral policy trust`)".to_string()
        }
    };
    let names: Vec<String> = found
        .toolchains
        .iter()
        .map(|t| format!("{} ({})", t.name, t.evidence))
        .collect();
    eprintln!(
        "corral: wrote {} · {trusted} · found {} · gate: {}",
        path.display(),
        if names.is_empty() {
            "no build or test files".to_string()
        } else {
            names.join(", ")
        },
        found
            .test()
            .map(|t| corral::line::display_argv(t))
            .unwrap_or_else(|| no_gate(&workspace))
    );
    Ok(Done::Status(0))
}

/// What init says when it found no test command to take as the gate.
fn no_gate(workspace: &std::path::Path) -> String {
    let placeholder = std::fs::read_to_string(workspace.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|json| json.pointer("/scripts/test")?.as_str().map(str::to_string))
        .is_some_and(|t| corral::task::project::is_npm_placeholder(&t));
    if placeholder {
        "none: package.json's test script is npm's placeholder (`echo \"Error: no test \
         specified\" && exit 1`), which only fails; edit [verify]"
            .into()
    } else {
        "none (edit [verify])".into()
    }
}
