//! The official MCP Python client (`mcp` from PyPI), timing calls to stdio servers in
//! turn: `py/alternating_calls.py`, run by a venv the bench makes under
//! `target/tmp/mcp-bench-venv` on first use (packages by name).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// The client, by name, within the major version the README names.
const PACKAGE: &str = "mcp>=2.3,<3";

/// One server the client talks to: how to start it and the call it times.
pub(crate) struct Served {
    pub name: String,
    pub command: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(&'static str, PathBuf)>,
    pub tool: &'static str,
    pub arguments: Value,
    /// Requests sent once after the handshake, as `(method, params)`.
    pub setup: Vec<(&'static str, Value)>,
}

/// A Python with `mcp` installed, or why there is none.
pub(crate) fn python() -> Result<PathBuf, String> {
    let target = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.to_path_buf()))
        .ok_or("the bench cannot find its target directory")?;
    let venv = target.join("tmp").join("mcp-bench-venv");
    let python = venv.join("bin/python");
    let ready = venv.join(".installed");
    if ready.exists() {
        return Ok(python);
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .map_err(|e| format!("python3 is not installed ({e})"))?;
    if !made.success() {
        return Err("python3 -m venv failed: install python3-venv".into());
    }
    let installed = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .arg(PACKAGE)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("pip did not run ({e})"))?;
    if !installed.success() {
        return Err(format!(
            "pip could not install {PACKAGE} from the package registry"
        ));
    }
    std::fs::write(&ready, PACKAGE).map_err(|e| e.to_string())?;
    Ok(python)
}

/// Start every server once, then time `rounds` calls to each (after `warmup`), one
/// server after the other in every round. Each server's call times, by name.
pub(crate) fn alternate(
    python: &Path,
    scratch: &Path,
    servers: &[Served],
    warmup: usize,
    rounds: usize,
) -> Result<BTreeMap<String, Vec<Duration>>, String> {
    let plan = json!({
        "warmup": warmup,
        "rounds": rounds,
        "servers": servers.iter().map(|s| json!({
            "name": s.name,
            "command": s.command,
            "args": s.args,
            "cwd": s.cwd,
            "env": s.env.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "tool": s.tool,
            "arguments": s.arguments,
            "setup": s.setup.iter().map(|(m, p)| json!([m, p])).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    let plan_file = scratch.join("python-plan.json");
    let script = scratch.join("alternating_calls.py");
    std::fs::write(&plan_file, plan.to_string()).map_err(|e| e.to_string())?;
    std::fs::write(&script, include_str!("../py/alternating_calls.py"))
        .map_err(|e| e.to_string())?;
    let out = Command::new(python)
        .arg(&script)
        .arg(&plan_file)
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("the Python client did not start ({e})"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let times: BTreeMap<String, Vec<f64>> = match text.lines().last().map(serde_json::from_str) {
        Some(Ok(times)) if out.status.success() => times,
        _ => {
            let why = String::from_utf8_lossy(&out.stderr);
            let last = why.lines().rev().take(5).collect::<Vec<_>>();
            return Err(format!(
                "the Python client failed ({}): {}",
                out.status,
                last.into_iter().rev().collect::<Vec<_>>().join(" / ")
            ));
        }
    };
    Ok(times
        .into_iter()
        .map(|(name, us)| {
            let samples = us
                .into_iter()
                .map(|us| Duration::from_secs_f64(us / 1e6))
                .collect();
            (name, samples)
        })
        .collect())
}
