//! The README's client snippets, run as written where they can run here: the command each
//! client config starts answers `tools/list` through the official Rust client (Claude
//! Code's and Codex's own programs are not here), the OpenAI Agents SDK snippet through
//! the SDK up to its model call, and the TypeScript SDK snippet through the SDK from the
//! npm registry (skipped with a note where npm cannot reach it). The pydantic-ai snippet
//! is run by `python_clients.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::Value;

use crate::python_clients::{python, readme, script};

fn readme_text() -> String {
    std::fs::read_to_string(readme()).unwrap()
}

/// The first fenced block of `language` after `marker` in the README.
fn block(marker: &str, language: &str) -> String {
    let readme = readme_text();
    let after = &readme[readme
        .find(marker)
        .unwrap_or_else(|| panic!("the README has no {marker}"))..];
    let fence = format!("```{language}\n");
    let start = after.find(&fence).unwrap() + fence.len();
    after[start..start + after[start..].find("```").unwrap()].to_string()
}

/// The directory holding `corral`, first on a `PATH` as a user's would be.
fn path_with_corral() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_corral")).parent().unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A home (its own state, config and caches) with an empty workspace `ws`.
fn home() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ws")).unwrap();
    dir
}

/// The tools `program ARGS`, started from `home/ws` as a client starts it, lists.
async fn tools_of(home: &Path, program: &str, args: &[String]) -> Vec<String> {
    let command = tokio::process::Command::new(program).configure(|cmd| {
        cmd.args(args)
            .current_dir(home.join("ws"))
            .env_clear()
            .env("PATH", path_with_corral())
            .env("HOME", home);
    });
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    client.cancel().await.unwrap();
    tools.into_iter().map(|t| t.name.to_string()).collect()
}

fn has_the_tools(tools: &[String]) {
    for name in ["exec", "shell", "shell_start", "output"] {
        assert!(tools.iter().any(|t| t == name), "{name} missing: {tools:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_codes_command_serves_and_its_settings_deny_bash() {
    let line = block("**Claude Code**", "sh");
    let command = line.trim().split_once(" -- ").unwrap().1;
    let mut words = command.split_whitespace().map(str::to_string);
    let program = words.next().unwrap();
    let args: Vec<String> = words.collect();
    let home = home();
    has_the_tools(&tools_of(home.path(), &program, &args).await);

    let settings: Value = serde_json::from_str(&block("**Claude Code**", "json")).unwrap();
    assert!(
        settings["permissions"]["deny"]
            .as_array()
            .unwrap()
            .contains(&Value::from("Bash")),
        "{settings}"
    );
}

/// The string value of `key = "…"` in a TOML snippet, and the array of `key = […]`.
fn toml_string(toml: &str, key: &str) -> String {
    let line = toml
        .lines()
        .find(|l| l.starts_with(&format!("{key} = ")))
        .unwrap();
    serde_json::from_str(line.split_once(" = ").unwrap().1).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn codexs_table_serves_and_turns_its_shell_off() {
    let toml = block("**Codex**", "toml");
    let program = toml_string(&toml, "command");
    let args: Vec<String> = toml
        .lines()
        .find_map(|l| l.strip_prefix("args = "))
        .map(|a| serde_json::from_str(a).unwrap())
        .unwrap();
    let home = home();
    has_the_tools(&tools_of(home.path(), &program, &args).await);
    let features = &toml[toml.find("[features]").expect("a [features] table")..];
    assert!(
        features.lines().any(|l| l.trim() == "shell_tool = false"),
        "{toml}"
    );
}

#[test]
fn the_agents_sdk_snippet_gets_the_tools() {
    let home = home();
    let out = Command::new(python())
        .arg(script("agents_sdk.py"))
        .arg(readme())
        .current_dir(home.path().join("ws"))
        .env("PATH", path_with_corral())
        .env("HOME", home.path())
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("OPENAI_API_KEY", "not-used")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let tools: Vec<String> = serde_json::from_value(seen["tools"].clone()).unwrap();
    has_the_tools(&tools);
}

/// What the README's TypeScript heading says to install: `(`npm install PACKAGE`)`.
fn typescript_package() -> String {
    let readme = readme_text();
    let after = &readme[readme.find("**TypeScript SDK** (`npm install ").unwrap()..];
    let start = after.find("npm install ").unwrap() + "npm install ".len();
    after[start..start + after[start..].find('`').unwrap()].to_string()
}

/// A directory with the TypeScript SDK installed from the npm registry, made once; `None`
/// (with a note) where npm is missing or cannot reach the registry.
fn typescript_sdk() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let package = typescript_package();
        corral_test_support::made_once("ts-client", &package, |dir| {
            std::fs::write(dir.join("package.json"), "{\"type\": \"module\"}\n").unwrap();
            let installed = Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--silent"])
                .arg(&package)
                .current_dir(dir)
                .status();
            let made = installed.as_ref().is_ok_and(|s| s.success());
            if !made {
                eprintln!("skipped: npm could not install {package} ({installed:?})");
            }
            made
        })
    })
    .as_deref()
}

#[test]
fn the_typescript_snippet_gets_the_tools() {
    let Some(sdk) = typescript_sdk() else { return };
    let snippet = block("**TypeScript SDK**", "js");
    // Beside a link to the SDK's node_modules, in a directory this user may write.
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(sdk.join("node_modules"), dir.path().join("node_modules")).unwrap();
    let file = dir.path().join("snippet.mjs");
    std::fs::write(
        &file,
        format!(
            "{snippet}\nconsole.log(JSON.stringify(tools.map((t) => t.name)));\nawait corral.close();\n"
        ),
    )
    .unwrap();
    let home = home();
    let out = Command::new("node")
        .arg(&file)
        .current_dir(home.path().join("ws"))
        .env("PATH", path_with_corral())
        .env("HOME", home.path())
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tools: Vec<String> = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    has_the_tools(&tools);
}

/// The first fenced block of `language` after `marker` in corral-mcp's README.
fn mcp_block(marker: &str, language: &str) -> String {
    let readme = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../corral-mcp/README.md"),
    )
    .unwrap();
    let after = &readme[readme
        .find(marker)
        .unwrap_or_else(|| panic!("corral-mcp's README has no {marker}"))..];
    let fence = format!("```{language}\n");
    let start = after.find(&fence).unwrap() + fence.len();
    after[start..start + after[start..].find("```").unwrap()].to_string()
}

/// `initialize` POSTed to `url` (the README's, on `port`) with `headers`: the status.
fn initialize_at(url: &str, port: u16, headers: &[(String, String)]) -> u16 {
    use std::io::{Read, Write};
    let url = url.replace(":8765", &format!(":{port}"));
    let authority = url
        .strip_prefix("http://")
        .unwrap()
        .strip_suffix("/mcp")
        .unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"readme","version":"1"}}}"#;
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    stream
        .write_all(format!("{head}\r\n{body}").as_bytes())
        .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.split(' ').nth(1).unwrap().parse().unwrap()
}

/// The HTTP section as written: the loopback server line makes its token in the state
/// directory, the `export` line reads it into the client's environment, and Claude Code's
/// `.mcp.json` (its `${VAR}` expanded as Claude Code expands it) and Codex's
/// `bearer_token_env_var` each open a session with it; without it, none opens.
#[test]
fn the_http_clients_read_the_token_from_their_environment() {
    let home = home();
    let server_line = mcp_block("### Over HTTP", "sh");
    let server_line = server_line.lines().next().unwrap();
    let command = server_line.split_once('#').unwrap().0.trim();
    let command = command.replace("127.0.0.1:8765", "127.0.0.1:0");
    let mut words = command.split_whitespace();
    let mut server = Command::new(words.next().unwrap())
        .args(words)
        .current_dir(home.path().join("ws"))
        .env_clear()
        .env("PATH", path_with_corral())
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = std::io::BufReader::new(server.stderr.take().unwrap());
    let port: u16 = loop {
        let mut line = String::new();
        assert!(
            std::io::BufRead::read_line(&mut log, &mut line).unwrap() > 0,
            "corral mcp exited"
        );
        if let Some(url) = line
            .trim()
            .strip_prefix("corral mcp: listening on http://127.0.0.1:")
        {
            break url.strip_suffix("/mcp").unwrap().parse().unwrap();
        }
    };
    std::thread::spawn(move || std::io::copy(&mut log, &mut std::io::sink()));

    let export = mcp_block("Give the client that token through its environment", "sh");
    let export = export
        .lines()
        .next()
        .unwrap()
        .split_once('#')
        .unwrap()
        .0
        .trim();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{export} && printf %s \"$CORRAL_MCP_TOKEN\""))
        .env_clear()
        .env("PATH", path_with_corral())
        .env("HOME", home.path())
        .output()
        .unwrap();
    let token = String::from_utf8(out.stdout).unwrap();
    assert_eq!(token.len(), 64, "{token:?}");

    let claude: Value =
        serde_json::from_str(&mcp_block("**Claude Code** (`.mcp.json`", "json")).unwrap();
    let corral = &claude["mcpServers"]["corral"];
    assert_eq!(corral["type"], "http", "{claude}");
    let headers: Vec<(String, String)> = corral["headers"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let v = v.as_str().unwrap().replace("${CORRAL_MCP_TOKEN}", &token);
            (k.clone(), v)
        })
        .collect();
    let url = corral["url"].as_str().unwrap();
    assert_eq!(initialize_at(url, port, &headers), 200);
    assert_eq!(initialize_at(url, port, &[]), 401);

    let codex = mcp_block("**Codex** (`~/.codex/config.toml`), which reads", "toml");
    assert_eq!(
        toml_string(&codex, "bearer_token_env_var"),
        "CORRAL_MCP_TOKEN"
    );
    let bearer = vec![("Authorization".to_string(), format!("Bearer {token}"))];
    assert_eq!(
        initialize_at(&toml_string(&codex, "url"), port, &bearer),
        200
    );

    let _ = server.kill();
    let _ = server.wait();
}
