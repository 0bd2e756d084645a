//! Where corral keeps its state (the trace and the trusted policies): `--state DIR`, else
//! `CORRAL_STATE_DIR`, else `$XDG_STATE_HOME/corral`, else `~/.local/state/corral`; and
//! `corral mcp` says which among its first lines, since an MCP client may start it
//! without the user's environment.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::text;

/// `corral ARGS` in `dir/ws` with only the environment `env` gives (as an MCP client
/// starts a server), besides `PATH`.
fn corral(dir: &Path, env: &[(&str, &Path)], args: &[&str]) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_corral"));
    command
        .args(args)
        .current_dir(dir.join("ws"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// The state line `corral mcp` printed, with stdin closed at once.
fn state_line(dir: &Path, env: &[(&str, &Path)], flags: &[&str]) -> String {
    let mut args = flags.to_vec();
    args.extend(["mcp", "--workspace", "."]);
    let out = corral(dir, env, &args);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // After the posture, before the run's own line.
    let line = stderr.lines().nth(1).unwrap_or_default();
    assert!(
        line.starts_with("corral mcp: state directory "),
        "not among the first lines: {stderr}"
    );
    line.to_string()
}

#[test]
fn the_state_directory_is_the_flag_then_each_variable_in_turn() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("ws")).unwrap();
    let (home, xdg, var, flag) = (d.join("home"), d.join("xdg"), d.join("var"), d.join("flag"));
    let all = [
        ("HOME", home.as_path()),
        ("XDG_STATE_HOME", xdg.as_path()),
        ("CORRAL_STATE_DIR", var.as_path()),
    ];
    let flag_str = flag.to_str().unwrap();

    let line = state_line(d, &all, &["--state", flag_str]);
    assert!(
        line.contains(&format!("{} (from --state)", flag.display()))
            && line.contains(&format!("trace {}/trace.db", flag.display()))
            && line.contains(&format!(
                "trusted policies {}/trusted-policies",
                flag.display()
            )),
        "{line}"
    );
    let line = state_line(d, &all, &[]);
    assert!(
        line.contains(&format!("{} (from CORRAL_STATE_DIR)", var.display())),
        "{line}"
    );
    let line = state_line(d, &all[..2], &[]);
    assert!(
        line.contains(&format!("{}/corral (from XDG_STATE_HOME)", xdg.display())),
        "{line}"
    );
    let line = state_line(d, &all[..1], &[]);
    assert!(
        line.contains(&format!(
            "{}/.local/state/corral (from HOME)",
            home.display()
        )),
        "{line}"
    );
    // The run of each went where the line said.
    for state in [
        flag.clone(),
        var,
        xdg.join("corral"),
        home.join(".local/state/corral"),
    ] {
        assert!(state.join("trace.db").exists(), "{}", state.display());
    }
}

#[test]
fn a_trust_given_under_one_state_directory_applies_where_it_is_passed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("ws")).unwrap();
    std::fs::write(d.join("ws/corral.toml"), "[exec]\nallow = [\"touch*\"]\n").unwrap();
    let home = d.join("home");
    let state = d.join("mine");
    let state_str = state.to_str().unwrap();
    let env = [("HOME", home.as_path())];
    let out = corral(d, &env, &["--state", state_str, "policy", "trust"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(state.join("trusted-policies").exists());
    // Passed as the flag or the variable, the trust is found; without, it is not.
    let check = ["policy", "check", "--", "touch", "x"];
    let out = corral(d, &env, &[&["--state", state_str][..], &check].concat());
    assert!(
        !text(&out.stdout).contains("not trusted"),
        "{}",
        text(&out.stdout)
    );
    let with_var = [
        ("HOME", home.as_path()),
        ("CORRAL_STATE_DIR", state.as_path()),
    ];
    let out = corral(d, &with_var, &check);
    assert!(
        !text(&out.stdout).contains("not trusted"),
        "{}",
        text(&out.stdout)
    );
    let out = corral(d, &env, &check);
    assert!(
        text(&out.stdout).contains("not trusted"),
        "{}",
        text(&out.stdout)
    );
}

/// Started with `--workspace .`, `corral mcp` names the build caches of the project it was
/// started in, not one directory for every project (the run's calls get their own).
#[test]
fn each_workspace_is_told_its_own_build_caches() {
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let named = |dir: &Path| {
        std::fs::create_dir(dir.join("ws")).unwrap();
        let cache = dir.join("cache");
        let out = corral(
            dir,
            &[("HOME", &dir.join("home")), ("XDG_CACHE_HOME", &cache)],
            &["mcp", "--workspace", "."],
        );
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let first = stderr.lines().next().unwrap_or_default();
        let (_, named) = first
            .split_once("the build caches in ")
            .unwrap_or_else(|| panic!("no build caches named: {stderr}"));
        let named = named.split(". ").next().unwrap().to_string();
        // This project's own, by its name.
        let own = cache.join("corral/workspaces/ws-");
        assert!(named.starts_with(own.to_str().unwrap()), "{first}");
        named
    };
    assert_ne!(named(one.path()), named(two.path()));
}
