//! How much of what coding agents write runs without a refusal once the host shell may
//! take what the grammar does not: every line of the agent corpus is planned (not run)
//! with the host shell allowed, and the share that plans is printed and held to a bar.
//! What is left is what neither bash nor the workspace allows (a `cd` out of the
//! workspace, a bash syntax error).

use crate::common;

use common::Fixture;
use corral::{Config, Policy, Run, ShellRequest, config::host_shell::HostShell};

const BAR: f64 = 0.97;

#[test]
fn with_the_host_shell_almost_every_agent_line_is_planned() {
    let text = include_str!("../../corral-line/tests/corpus/agent_lines.txt");
    let lines: Vec<&str> = text
        .split("\n%%\n")
        .skip(1)
        .map(|e| e.strip_suffix('\n').unwrap_or(e))
        .filter(|e| !e.is_empty())
        .collect();
    let fx = Fixture::new();
    let config = Config {
        host_shell: HostShell::Ask,
        ..Config::default()
    };
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .config(config)
        .policy(Policy::permissive())
        .open()
        .unwrap();
    let mut grammar = 0;
    let mut refused = Vec::new();
    for line in &lines {
        if corral::line::parse(line).is_ok() {
            grammar += 1;
        }
        if let Err(e) = run.plan_shell(&ShellRequest::new(*line)) {
            refused.push(format!("{line:?}: {e}"));
        }
    }
    let planned = lines.len() - refused.len();
    let share = planned as f64 / lines.len() as f64;
    println!(
        "{} lines: {grammar} through the grammar ({:.1} %), {planned} with the host shell ({:.1} %)",
        lines.len(),
        grammar as f64 * 100.0 / lines.len() as f64,
        share * 100.0
    );
    for r in &refused {
        println!("  refused {r}");
    }
    assert!(share >= BAR, "only {:.1} % planned", share * 100.0);
}

/// The same corpus under `corral mcp`'s own default posture (its policy, approval mode,
/// sandbox and host-shell mode), where this host enforces every sandbox layer: the share
/// of lines that plan and that no check refuses.
#[test]
fn under_the_mcp_default_posture_almost_every_agent_line_runs() {
    let text = include_str!("../../corral-line/tests/corpus/agent_lines.txt");
    let lines: Vec<&str> = text
        .split("\n%%\n")
        .skip(1)
        .map(|e| e.strip_suffix('\n').unwrap_or(e))
        .filter(|e| !e.is_empty())
        .collect();
    let fx = Fixture::new();
    let posture = corral::Posture::new(
        corral::Surface::Mcp,
        &fx.workspace(),
        Config {
            host_shell: corral::config::host_shell::MCP_DEFAULT_HOST_SHELL,
            ..Config::default()
        },
        &corral::Overrides::default(),
    )
    .unwrap();
    if !posture.sandbox_is_boundary {
        println!("skipped: this host does not enforce every sandbox layer");
        return;
    }
    let policy = posture.policy.clone();
    let approval = posture.approval;
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .config(posture.config)
        .policy(posture.policy)
        .approval(posture.approval)
        .open()
        .unwrap();
    let mut refused = Vec::new();
    for line in &lines {
        match run.plan_shell(&ShellRequest::new(*line)) {
            Ok(plan) => {
                let checks = corral::explain(&policy, &plan, approval);
                if let Some(c) = checks
                    .iter()
                    .find(|c| c.resolution == corral::policy::Resolution::Refuse)
                {
                    refused.push(format!("{line:?}: {}", c.decision));
                }
            }
            Err(e) => refused.push(format!("{line:?}: {e}")),
        }
    }
    let share = (lines.len() - refused.len()) as f64 / lines.len() as f64;
    println!(
        "{} lines under the MCP default posture: {} run without a refusal ({:.1} %)",
        lines.len(),
        lines.len() - refused.len(),
        share * 100.0
    );
    for r in &refused {
        println!("  refused {r}");
    }
    assert!(share >= 0.985, "only {:.1} % run", share * 100.0);
}
