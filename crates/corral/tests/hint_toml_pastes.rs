//! Every hint's TOML works when followed literally: for each kind of hint that tells a
//! person what to add to a policy file, the call is refused (or its result warns) with a
//! complete snippet; pasted into an empty policy file, and into a file that has its table
//! already as the hint's words say (its lines go in that table, a list's items joined to
//! the list there, a setting in place of the one there), it loads through corral's own
//! loader; and the call rerun with that file succeeds.

use crate::common;

use std::path::{Path, PathBuf};

use common::Fixture;
use corral::policy::{Act, Effect};
use corral::{ApprovalMode, Config, Policy, PolicyFiles, Run, ShellRequest};

/// The TOML a hint ends with: from the first table header after a blank line to the next
/// blank line.
fn snippet_in(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = (1..lines.len())
        .find(|&i| {
            lines[i - 1].trim().is_empty()
                && lines[i].starts_with('[')
                && lines[i].ends_with(']')
                && lines.get(i + 1).is_some_and(|l| l.contains(" = "))
        })
        .unwrap_or_else(|| panic!("no TOML snippet in:\n{text}"));
    let end = (start..lines.len())
        .find(|&i| lines[i].trim().is_empty())
        .unwrap_or(lines.len());
    let mut snippet = lines[start..end].join("\n");
    snippet.push('\n');
    snippet
}

/// `snippet` put into `file`, which has its table already, as the hint says: each key line
/// goes in the file's table of that name; a list's items are joined to the file's list of
/// that name (which stays where it is), a setting takes the place of the file's.
fn pasted_into(file: &str, snippet: &str) -> String {
    let mut lines: Vec<String> = file.lines().map(str::to_string).collect();
    let mut table = String::new();
    for line in snippet.lines() {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            table = name.to_string();
            continue;
        }
        let Some((key, value)) = line.split_once(" = ") else {
            continue;
        };
        let header = lines
            .iter()
            .position(|l| l.trim() == format!("[{table}]"))
            .unwrap_or_else(|| panic!("the file has no [{table}]: {file}"));
        let end = (header + 1..lines.len())
            .find(|&i| lines[i].trim_start().starts_with('['))
            .unwrap_or(lines.len());
        let existing = (header + 1..end).find(|&i| {
            lines[i]
                .split_once('=')
                .is_some_and(|(k, _)| k.trim() == key)
        });
        match (
            existing,
            value.strip_prefix('[').and_then(|v| v.strip_suffix(']')),
        ) {
            (Some(i), Some(items)) => {
                let open = lines[i].find('[').expect("the file's list");
                lines[i].insert_str(open + 1, &format!("{items}, "));
            }
            (Some(i), None) => lines[i] = line.to_string(),
            (None, _) => lines.insert(header + 1, line.to_string()),
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// A run whose policy is `base` with the policy file `file` on top, as `--config` stacks
/// it, asking nobody.
fn open(fx: &Fixture, base: Policy, config: Config, file: &Path) -> Run {
    let files = PolicyFiles::discover(&fx.workspace(), &[file.to_path_buf()]).unwrap();
    let policy = files.load_onto(base).unwrap();
    Run::builder(fx.workspace())
        .store(fx.store())
        .config(config)
        .policy(policy)
        .approval(ApprovalMode::Never)
        .open()
        .unwrap()
}

/// One kind of hint: what the run starts from, a file that has the hint's table already,
/// the call that gets the hint, and whether the call rerun did what it was for.
struct Kind<'a> {
    base: &'a dyn Fn() -> Policy,
    config: &'a dyn Fn() -> Config,
    existing: &'a str,
    hinted: &'a dyn Fn(&Run) -> String,
    works: &'a dyn Fn(&Run) -> bool,
}

impl Kind<'_> {
    /// The snippet the hint gives, checked pasted into an empty file and into `existing`.
    fn pastes(&self, fx: &Fixture) -> String {
        let file: PathBuf = fx.dir.path().join("policy.toml");
        std::fs::write(&file, "").unwrap();
        let run = open(fx, (self.base)(), (self.config)(), &file);
        let hint = (self.hinted)(&run);
        drop(run);
        let snippet = snippet_in(&hint);
        assert!(
            hint.contains("already, these lines go in"),
            "the hint says what to do where the table is: {hint}"
        );

        // Into an empty file.
        corral::policy::config::parse(&snippet, "policy.toml", "user")
            .unwrap_or_else(|e| panic!("{e}\n{snippet}"));
        std::fs::write(&file, &snippet).unwrap();
        let run = open(fx, (self.base)(), (self.config)(), &file);
        assert!((self.works)(&run), "rerun with\n{snippet}");
        drop(run);

        // Into a file that has the table: pasted below it, TOML refuses a second header;
        // put in it as the hint says, it loads.
        let below = format!("{}\n{snippet}", self.existing);
        assert!(
            corral::policy::config::parse(&below, "policy.toml", "user").is_err(),
            "{below}"
        );
        let merged = pasted_into(self.existing, &snippet);
        corral::policy::config::parse(&merged, "policy.toml", "user")
            .unwrap_or_else(|e| panic!("{e}\n{merged}"));
        std::fs::write(&file, &merged).unwrap();
        let run = open(fx, (self.base)(), (self.config)(), &file);
        assert!((self.works)(&run), "rerun with\n{merged}");
        snippet
    }
}

/// The refusal of `line`, in words.
fn refusal(run: &Run, line: &str) -> String {
    match run.shell(&ShellRequest::new(line)) {
        Err(e) => e.to_string(),
        Ok(o) => panic!("{line:?} was not refused: {}", o.observation),
    }
}

/// Whether `line` ran to exit 0.
fn runs(run: &Run, line: &str) -> bool {
    match run.shell(&ShellRequest::new(line)) {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            eprintln!("{line:?}: {}", o.observation);
            false
        }
        Err(e) => {
            eprintln!("{line:?}: {e}");
            false
        }
    }
}

/// Four risky variables make one `[env]` table with one `allow` list: four `[env]`
/// headers, or four `allow` keys, would not parse.
#[test]
fn risky_variables_merge_into_one_env_list() {
    const LINE: &str = "GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.org \
                        GIT_COMMITTER_NAME=c GIT_COMMITTER_EMAIL=c@example.org printenv \
                        GIT_AUTHOR_NAME";
    let fx = Fixture::new();
    let snippet = Kind {
        base: &Policy::permissive,
        config: &Config::default,
        existing: "[env]\ndeny = [\"LD_*\"]\nallow = [\"PYTHONPATH\"]\n\n[exec]\nallow = [\"cargo*\"]\n",
        hinted: &|run| refusal(run, LINE),
        works: &|run| runs(run, LINE),
    }
    .pastes(&fx);
    assert_eq!(
        snippet,
        "[env]\nallow = [\"GIT_AUTHOR_NAME\", \"GIT_AUTHOR_EMAIL\", \"GIT_COMMITTER_NAME\", \
         \"GIT_COMMITTER_EMAIL\"]\n"
    );
}

#[test]
fn a_command_the_default_asks_about_takes_its_exec_rule() {
    let fx = Fixture::new();
    Kind {
        base: &|| Policy::permissive().default_effect(Act::Exec, Effect::Ask),
        config: &Config::default,
        existing: "[exec]\nallow = [\n  \"cargo test*\",\n]\ndeny = [\"rm\"]\n",
        hinted: &|run| refusal(run, "touch made"),
        works: &|run| runs(run, "touch made"),
    }
    .pastes(&fx);
}

#[test]
fn a_write_the_default_asks_about_takes_its_write_rule() {
    let fx = Fixture::new();
    Kind {
        base: &|| Policy::permissive().default_effect(Act::Write, Effect::Ask),
        config: &Config::default,
        existing: "[write]\ndeny = [\"**/.git/hooks/**\"]\n",
        hinted: &|run| refusal(run, "echo hi > made.txt"),
        works: &|run| runs(run, "echo hi > made.txt"),
    }
    .pastes(&fx);
}

#[test]
fn an_inline_program_takes_its_effects_setting() {
    let fx = Fixture::new();
    let line = "python3 -c 'print(42)'";
    let snippet = Kind {
        base: &Policy::permissive,
        config: &Config::default,
        // The file asks about it itself: the hint's setting takes that one's place.
        existing: "[effects]\ninterpreter_one_liner = \"ask\"\nunparsable_inner_line = \"ask\"\n",
        hinted: &|run| refusal(run, line),
        works: &|run| runs(run, line),
    }
    .pastes(&fx);
    assert_eq!(snippet, "[effects]\ninterpreter_one_liner = \"allow\"\n");
}

#[test]
fn a_line_corral_cannot_parse_takes_its_effects_setting() {
    let fx = Fixture::new();
    let line = "sh -c 'for f in a b; do echo $f; done'";
    let snippet = Kind {
        base: &|| Policy::permissive().interpreter_one_liner(Effect::Allow),
        config: &Config::default,
        existing: "[effects]\nscript_file = \"ask\"\n",
        hinted: &|run| refusal(run, line),
        works: &|run| runs(run, line),
    }
    .pastes(&fx);
    assert_eq!(snippet, "[effects]\nunparsable_inner_line = \"allow\"\n");
}

/// `git` on the host, with a fixed identity and no config of the person's.
fn git(ws: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(ws)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A repository in the workspace whose own config names who commits.
fn repository(fx: &Fixture) {
    let ws = fx.workspace();
    git(&ws, &["init", "-q", "."]);
    git(&ws, &["config", "user.email", "t@example.org"]);
    git(&ws, &["config", "user.name", "t"]);
    git(&ws, &["commit", "-q", "--allow-empty", "-m", "one"]);
}

fn workspace_write() -> Config {
    Config {
        sandbox: corral::sandbox::SandboxConfig::mode(corral::sandbox::SandboxMode::WorkspaceWrite),
        ..Config::default()
    }
}

/// The observation of `line`, which ran and failed.
fn failed(run: &Run, line: &str) -> String {
    let o = run.shell(&ShellRequest::new(line)).unwrap();
    assert!(!o.status.success(), "{line:?}: {}", o.observation);
    o.observation
}

const COMMIT: &str = "git commit -q --allow-empty -m two";

/// A workspace-write run with the whole `.git` read-only (`git_write = false`).
fn git_read_only() -> Config {
    let mut config = workspace_write();
    config.sandbox.git_write = false;
    config
}

/// With `git_write = false` the box keeps `.git` read-only; the hint's `git_write` lets
/// git commit.
#[test]
fn a_git_write_the_box_refused_takes_git_write() {
    if !common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        return;
    }
    let fx = Fixture::new();
    repository(&fx);
    let snippet = Kind {
        base: &Policy::permissive,
        config: &git_read_only,
        existing: "[sandbox]\ndeny_read = [\"~/.secrets\"]\n",
        hinted: &|run| failed(run, COMMIT),
        works: &|run| runs(run, COMMIT),
    }
    .pastes(&fx);
    assert_eq!(snippet, "[sandbox]\ngit_write = true\n");
}

/// A file tool's write under `.git` is refused with the same setting, which lets git
/// write there.
#[test]
fn a_file_tool_s_write_under_git_names_git_write() {
    if !common::layer_enforced(corral::sandbox::Layer::ProtectedPaths) {
        return;
    }
    let fx = Fixture::new();
    repository(&fx);
    let snippet = Kind {
        base: &Policy::permissive,
        config: &git_read_only,
        existing: "[sandbox]\nnetwork_allow = [\"crates.io\"]\n",
        hinted: &|run| {
            run.write_file(&corral::WriteFileRequest::new(".git/description", "x\n"))
                .unwrap_err()
                .to_string()
        },
        works: &|run| runs(run, COMMIT),
    }
    .pastes(&fx);
    assert_eq!(snippet, "[sandbox]\ngit_write = true\n");
}

/// An HTTP server on the host's loopback that answers every request `200 ok`.
fn serve() -> std::net::SocketAddr {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                line.clear();
            }
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n",
            );
        }
    });
    addr
}

/// A domain the box's proxy refused takes its `network_allow` entry.
#[test]
fn a_domain_the_proxy_refused_takes_its_network_allow_entry() {
    if !common::layer_enforced(corral::sandbox::Layer::Network) {
        return;
    }
    let fx = Fixture::new();
    let addr = serve();
    let config = move || {
        // Some domain allowed, so that the run's proxy serves and refuses the rest.
        let mut config = workspace_write();
        config.sandbox.network_allow = vec!["other.test".into()];
        config.sandbox.test_resolve.insert("hint.test".into(), addr);
        config
    };
    let curl = "curl -sSf --max-time 20 http://hint.test/x";
    let snippet = Kind {
        base: &|| Policy::permissive().unparsable_inner_line(Effect::Allow),
        config: &config,
        existing: "[sandbox]\nnetwork_allow = [\"crates.io\"]\n",
        hinted: &|run| failed(run, curl),
        works: &|run| runs(run, curl),
    }
    .pastes(&fx);
    assert_eq!(snippet, "[sandbox]\nnetwork_allow = [\"hint.test\"]\n");
}

/// A directory of the home the box does not show takes its `home_read` entry.
#[test]
fn a_path_of_the_home_the_box_hides_takes_its_home_read_entry() {
    if !common::layer_enforced(corral::sandbox::Layer::Home) {
        return;
    }
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
        return common::skip("no HOME");
    };
    if home.starts_with("/tmp") {
        // The box's own `/tmp` covers it, not the home's: a rerun is offered there.
        eprintln!("skipped: HOME lies in /tmp, which the box has of its own");
        return;
    }
    // Of the test's own, under the person's home (the box's home is derived from it),
    // removed when the test ends.
    let name = format!(".corral-hint-test-{}", std::process::id());
    let dir = home.join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    struct Remove(PathBuf);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _remove = Remove(dir.clone());
    std::fs::write(dir.join("notes"), "kept\n").unwrap();
    let cat = format!("cat {}", dir.join("notes").display());
    let fx = Fixture::new();
    let snippet = Kind {
        base: &Policy::permissive,
        config: &workspace_write,
        existing: "[sandbox]\nhome_read = [\"~/tools\"]\ngit_write = false\n",
        hinted: &|run| failed(run, &cat),
        works: &|run| runs(run, &cat),
    }
    .pastes(&fx);
    assert_eq!(snippet, format!("[sandbox]\nhome_read = [\"~/{name}\"]\n"));
}

/// A `[verify]` table corral cannot read is answered with one it can: written in an empty
/// `corral.toml`, or in place of the table written wrong, it is the gate, and the file
/// still loads as a policy file.
#[test]
fn a_gate_written_wrong_is_answered_with_one_that_reads() {
    use corral::task::project::pinned_gate;
    let fx = Fixture::new();
    let ws = fx.workspace();
    let rest = "[exec]\nallow = [\"cargo*\"]\n\n";
    std::fs::write(
        ws.join("corral.toml"),
        format!("{rest}[verify]\ncommands = \"cargo test\"\n"),
    )
    .unwrap();
    let err = pinned_gate(&ws, None).unwrap_err().to_string();
    let snippet = snippet_in(&err);
    assert_eq!(snippet, "[verify]\ncommands = [\"cargo test\"]\n");
    for text in [snippet.clone(), format!("{rest}{snippet}")] {
        std::fs::write(ws.join("corral.toml"), &text).unwrap();
        let (gate, _) = pinned_gate(&ws, None).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(gate.len(), 1, "{text}");
        corral::policy::config::parse(&text, "corral.toml", "project").unwrap();
    }
}

#[test]
fn a_script_file_takes_its_effects_setting() {
    let fx = Fixture::new();
    std::fs::write(fx.workspace().join("build.sh"), "echo built\n").unwrap();
    let line = "sh build.sh";
    let snippet = Kind {
        base: &|| Policy::permissive().script_file(Some(Effect::Ask)),
        config: &Config::default,
        existing: "[effects]\ninterpreter_one_liner = \"ask\"\n",
        hinted: &|run| refusal(run, line),
        works: &|run| runs(run, line),
    }
    .pastes(&fx);
    assert_eq!(snippet, "[effects]\nscript_file = \"allow\"\n");
}
