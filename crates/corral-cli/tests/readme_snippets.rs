//! The README's client snippets, run as written where they can run here: the command each
//! client config starts answers `tools/list` through the official Rust client (Claude
//! Code's and Codex's own programs are not here), the OpenAI Agents SDK snippet through
//! the SDK up to its model call, and the TypeScript SDK snippet through the SDK from the
//! npm registry (skipped with a note where npm cannot reach it). The pydantic-ai snippet
//! is run by `python_clients.rs`.
//!
//! And the README and the `docs/` pages as a reader meets them: the README introduces (under
//! 2,000 words) and links every page, each page opens with the question it answers, every
//! local link resolves, every `corral` command names a subcommand and flags that exist,
//! every policy snippet is a policy corral reads, every Rust snippet is a doctest, and every
//! wheel line makes a venv and installs maturin before building.

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

/// The repository's root.
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md, then every page of `docs/`: each path and its text.
fn pages() -> Vec<(PathBuf, String)> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repository().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    std::iter::once(readme())
        .chain(docs)
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// A page's path as the repository names it (`docs/mcp.md`).
fn named(page: &Path) -> String {
    let root = repository().canonicalize().unwrap();
    let page = page.canonicalize().unwrap();
    page.strip_prefix(&root).unwrap().display().to_string()
}

/// A page's fenced blocks, each as its info string (`sh`, `rust,no_run`) and its body
/// (dedented as far as its fence), and its prose: every line outside them.
fn split_page(text: &str) -> (Vec<(String, String)>, String) {
    let (mut blocks, mut prose) = (Vec::new(), String::new());
    let mut open: Option<(String, String, usize)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let fence = trimmed.starts_with("```");
        match open.take() {
            None if fence => {
                let info = trimmed.trim_start_matches('`').trim().to_string();
                open = Some((info, String::new(), line.len() - trimmed.len()));
            }
            None => {
                prose.push_str(line);
                prose.push('\n');
            }
            Some((info, body, _)) if fence => blocks.push((info, body)),
            Some((info, mut body, indent)) => {
                body.push_str(line.get(indent..).unwrap_or(trimmed));
                body.push('\n');
                open = Some((info, body, indent));
            }
        }
    }
    (blocks, prose)
}

#[test]
fn the_readme_introduces_in_under_2000_words() {
    let words = readme_text().split_whitespace().count();
    assert!(
        words < 2000,
        "README.md has {words} words: move what is not an introduction to a docs/ page"
    );
}

/// A heading's anchor as GitHub makes it: lower case, spaces as `-`, punctuation dropped.
fn anchor_of(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every `[text](target)` of a page's prose whose target is not a URL.
fn local_links(prose: &str) -> Vec<String> {
    prose
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target.to_string()))
        .filter(|target| !target.contains("://") && !target.starts_with("mailto:"))
        .collect()
}

#[test]
fn every_local_link_in_the_readme_and_the_docs_resolves() {
    let mut broken = Vec::new();
    for (page, text) in pages() {
        let (_, prose) = split_page(&text);
        for link in local_links(&prose) {
            let (path, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(path)
            };
            if !target.exists() {
                broken.push(format!("{}: {link}: no such file", named(&page)));
                continue;
            }
            if anchor.is_empty() {
                continue;
            }
            let (_, target_prose) = split_page(&std::fs::read_to_string(&target).unwrap());
            let anchors: Vec<String> = target_prose
                .lines()
                .filter(|l| l.starts_with('#'))
                .map(anchor_of)
                .collect();
            if !anchors.iter().any(|a| a == anchor) {
                broken.push(format!("{}: {link}: no such heading", named(&page)));
            }
        }
    }
    assert!(broken.is_empty(), "{broken:#?}");
}

/// A reader finds every page from the README, and each page opens (after its title) with
/// the question it answers.
#[test]
fn every_docs_page_is_linked_from_the_readme_and_says_what_it_answers() {
    let readme = readme_text();
    for (page, text) in pages().into_iter().skip(1) {
        let name = named(&page);
        assert!(
            readme.contains(&format!("]({name})")),
            "README.md links no {name}"
        );
        let mut paragraphs = text.split("\n\n");
        assert!(
            paragraphs.next().unwrap().starts_with("# "),
            "{name} opens with no title"
        );
        let opening = paragraphs.next().unwrap_or_default();
        assert!(
            !opening.starts_with(['#', '`', '-', '|']) && opening.contains('?'),
            "{name} does not open with the question it answers: {opening}"
        );
    }
}

/// The words of the command at the start of a shell line, quotes removed, as far as the
/// command goes: up to a comment, a pipe, a list operator or a redirect.
fn command_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut started) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                started = true;
            }
            None if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            None if !started && "#|&;<>".contains(c) => break,
            None => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// `corral PATH… --help`, once per path.
fn help_of(path: &[String]) -> String {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static HELP: OnceLock<Mutex<HashMap<Vec<String>, String>>> = OnceLock::new();
    let cache = HELP.get_or_init(Default::default);
    if let Some(help) = cache.lock().unwrap().get(path) {
        return help.clone();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_corral"))
        .args(path)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "corral {path:?} --help failed");
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    cache.lock().unwrap().insert(path.to_vec(), help.clone());
    help
}

/// The subcommands a help text lists under `Commands:`.
fn subcommands(help: &str) -> Vec<String> {
    let Some((_, listed)) = help.split_once("Commands:\n") else {
        return Vec::new();
    };
    listed
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// What is wrong with `corral WORDS…` (`words` without `corral`): a subcommand or a flag
/// that does not exist. `None` where it is sound; for a command written in prose, also where
/// its first word is no subcommand (`corral mcp` is, `corral cannot …` is prose).
fn unsound(words: &[String], in_prose: bool) -> Option<String> {
    let top = subcommands(&help_of(&[]));
    match words.first() {
        Some(first) if top.contains(first) => {}
        _ if in_prose => return None,
        first => return Some(format!("no subcommand {first:?}")),
    }
    let mut path = vec![words[0].clone()];
    let mut rest = &words[1..];
    while let Some(next) = rest.first()
        && subcommands(&help_of(&path)).contains(next)
    {
        path.push(next.clone());
        rest = &rest[1..];
    }
    let help = help_of(&path);
    if let Some(next) = rest.first()
        && !next.starts_with('-')
        && !subcommands(&help).is_empty()
    {
        return Some(format!(
            "`corral {}` has no subcommand {next}",
            path.join(" ")
        ));
    }
    let named = |flag: &str| {
        help.match_indices(flag).any(|(at, _)| {
            let before = help[..at].chars().next_back();
            let after = help[at + flag.len()..].chars().next();
            before.is_none_or(|c| !c.is_alphanumeric() && c != '-')
                && after.is_none_or(|c| !c.is_alphanumeric() && c != '-')
        })
    };
    for word in rest.iter().take_while(|w| *w != "--") {
        let flag = word.split('=').next().unwrap();
        let is_flag = flag.starts_with("--") || (flag.len() == 2 && flag.starts_with('-'));
        if is_flag && flag != "-" && !named(flag) {
            return Some(format!("`corral {}` has no {flag}", path.join(" ")));
        }
    }
    None
}

/// Every `corral` command in the README and the docs, in a shell block or in prose, names a
/// subcommand that exists and flags it takes.
#[test]
fn every_corral_command_in_the_readme_and_the_docs_exists() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (page, text) in pages() {
        let (blocks, prose) = split_page(&text);
        let lines = blocks
            .iter()
            .filter(|(info, _)| info == "sh")
            .flat_map(|(_, body)| body.lines().map(|l| (l.to_string(), false)));
        let prose = prose.split_whitespace().collect::<Vec<_>>().join(" ");
        let spans = prose
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|span| span.starts_with("corral "))
            .map(|span| (span.to_string(), true));
        for (line, in_prose) in lines.chain(spans) {
            let mut words = command_words(&line).into_iter().skip_while(|w| {
                w.split_once('=').is_some_and(|(name, _)| {
                    !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                })
            });
            if words.next().as_deref() != Some("corral") {
                continue;
            }
            let words: Vec<String> = words.collect();
            checked += 1;
            if let Some(why) = unsound(&words, in_prose) {
                wrong.push(format!("{}: {line}: {why}", named(&page)));
            }
        }
    }
    assert!(checked > 50, "only {checked} commands found");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Every policy snippet (a TOML block that is no client's configuration) is a policy file
/// corral reads as written, and each rule in it is one of the rules it shows.
#[test]
fn every_policy_snippet_in_the_docs_is_a_policy_corral_reads() {
    let mut read = 0;
    for (page, text) in pages() {
        for (info, body) in split_page(&text).0 {
            if info != "toml" || body.contains("[mcp_servers") {
                continue;
            }
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("snippet.toml");
            std::fs::write(&file, &body).unwrap();
            let out = Command::new(env!("CARGO_BIN_EXE_corral"))
                .args(["policy", "show", "--workspace"])
                .arg(dir.path())
                .arg("--config")
                .arg(&file)
                .env("HOME", dir.path())
                .env_remove("CORRAL_POLICY")
                .env_remove("XDG_CONFIG_HOME")
                .output()
                .unwrap();
            let shown = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{}: {body}\n{}",
                named(&page),
                String::from_utf8_lossy(&out.stderr)
            );
            for rule in body.split('"').skip(1).step_by(2) {
                assert!(
                    shown.contains(&format!("\"{rule}\"")),
                    "{}: the rule {rule:?} is not shown:\n{shown}",
                    named(&page)
                );
            }
            read += 1;
        }
    }
    assert!(read >= 2, "only {read} policy snippets found");
}

/// Every Rust snippet lies in a page the `corral` crate compiles as doctests.
#[test]
fn every_rust_snippet_is_a_doctest() {
    let lib = std::fs::read_to_string(repository().join("crates/corral/src/lib.rs")).unwrap();
    let mut pages_with_rust = 0;
    for (page, text) in pages() {
        if split_page(&text)
            .0
            .iter()
            .any(|(info, _)| info.starts_with("rust"))
        {
            let included = format!("include_str!(\"../../../{}\")", named(&page));
            assert!(
                lib.contains(&included),
                "{}'s Rust is not compiled: crates/corral/src/lib.rs has no {included}",
                named(&page)
            );
            pages_with_rust += 1;
        }
    }
    assert!(pages_with_rust > 0);
}

/// Wherever a page says how to build the Python wheel, it makes a venv and installs
/// maturin into it first, as `tests/install.rs` does.
#[test]
fn every_wheel_line_makes_a_venv_and_installs_maturin_first() {
    let mut texts = pages();
    for packaging in [
        "packaging/python/README.md",
        "packaging/python/pyproject.toml",
    ] {
        let path = repository().join(packaging);
        let text = std::fs::read_to_string(&path).unwrap();
        texts.push((path, text));
    }
    let mut lines = 0;
    for (page, text) in texts {
        for line in text.lines().filter(|l| l.contains("maturin build")) {
            let at = |what: &str| line.find(what);
            let (venv, maturin, build) = (
                at("python3 -m venv"),
                at("pip install maturin"),
                at("maturin build"),
            );
            assert!(
                venv.is_some() && venv < maturin && maturin < build,
                "{}: {line}",
                named(&page)
            );
            lines += 1;
        }
    }
    assert!(lines >= 2, "only {lines} wheel lines found");
}
