//! The host shell: a line outside corral's grammar (a loop, `$( )`, `$VAR`, `[[ ]]`,
//! `source`) may run through `bash -c`, but only where that cannot carry anything past
//! the policy or out of the box:
//!
//! - **where**: [`HostShell::Sandboxed`] runs it only when the call runs in a sandbox every
//!   layer of which this host enforces ([`crate::sandbox::host_report`]);
//!   [`HostShell::Ask`] runs it there too, and elsewhere asks a person first;
//!   [`HostShell::Never`] refuses it, with the grammar's own refusal. It is never run
//!   silently unsandboxed.
//! - **what**: before it runs, a real bash parser (`tree-sitter-bash`, the parser Codex
//!   uses; chosen by measurement, see `BENCHMARKS.md`) finds every simple command in it:
//!   in pipelines, lists, loop and `if` bodies, functions, `$( )` and backticks, process
//!   substitutions, and the static line given to `eval`, `bash -c` or `sh -c`. Each is
//!   checked like a stage, and each static redirect target like a redirect. A deny rule
//!   matching any of them refuses the line. A command word computed when the line runs
//!   (`$cmd`, `$(echo rm)`) is taken to match every deny rule.
//! - **how**: the line is one stage, `bash -c LINE`, in the call's containment unit: a job
//!   it puts in the background with `&` ends with the call like everything else.
//!
//! The boundary, as for any stage: what a checked command then does at run time (a
//! variable expanded into an argument, a file sourced) is the sandbox's to bound.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::call::Prepared;
use crate::error::{Error, Result};
use crate::plan::{HostCheck, Plan};
use crate::run::Run;
use crate::shell::ShellRequest;

/// Whether a line outside corral's grammar may run through the host's `bash -c`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum HostShell {
    /// In a sandbox this host enforces fully; otherwise refused.
    Sandboxed,
    /// In a sandbox this host enforces fully; otherwise when a person approves it.
    Ask,
    /// Never: such a line is refused by the grammar.
    #[default]
    Never,
}

/// The library's and the `corral` command's default: lines outside the grammar are refused.
pub const LIBRARY_DEFAULT_HOST_SHELL: HostShell = HostShell::Never;

/// `corral mcp`'s default. It follows the server's default posture: once that is a
/// sandbox, this is [`HostShell::Sandboxed`].
pub const MCP_DEFAULT_HOST_SHELL: HostShell = HostShell::Sandboxed;

impl HostShell {
    /// `sandboxed`, `ask`, `never`.
    pub fn name(self) -> &'static str {
        match self {
            HostShell::Sandboxed => "sandboxed",
            HostShell::Ask => "ask",
            HostShell::Never => "never",
        }
    }

    /// The mode named `name`.
    pub fn from_name(name: &str) -> Option<HostShell> {
        match name {
            "sandboxed" => Some(HostShell::Sandboxed),
            "ask" => Some(HostShell::Ask),
            "never" => Some(HostShell::Never),
            _ => None,
        }
    }

    /// The stricter of two modes: a later file or flag only tightens.
    pub fn stricter(self, other: HostShell) -> HostShell {
        let rank = |m: HostShell| match m {
            HostShell::Never => 0,
            HostShell::Sandboxed => 1,
            HostShell::Ask => 2,
        };
        if rank(other) < rank(self) {
            other
        } else {
            self
        }
    }
}

impl std::fmt::Display for HostShell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a line outside corral's grammar runs in a run, for what a model is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostLines {
    /// Nowhere: the grammar refuses it, saying what to do instead.
    Refused,
    /// Under `bash -c`, in a sandbox every layer of which this host enforces.
    InSandbox,
    /// Under `bash -c`, once a person approves it (no fully enforced sandbox here).
    WhenApproved,
}

impl Run {
    /// Where a line outside the grammar runs in this run: the host-shell mode, the call's
    /// sandbox mode and what this host enforces, decided as a call would decide them.
    pub fn host_lines(&self) -> HostLines {
        let boxed = self.config.sandbox.mode.is_sandboxed() && host_enforces_every_layer();
        match (self.config.host_shell, boxed) {
            (HostShell::Never, _) | (HostShell::Sandboxed, false) => HostLines::Refused,
            (_, true) => HostLines::InSandbox,
            (HostShell::Ask, false) => HostLines::WhenApproved,
        }
    }
}

/// Whether every layer of a sandbox is enforced on this host (probed once).
pub(crate) fn host_enforces_every_layer() -> bool {
    static FULL: OnceLock<bool> = OnceLock::new();
    *FULL.get_or_init(|| {
        crate::sandbox::host_report()
            .layers
            .iter()
            .all(|l| l.level == crate::sandbox::Level::Full)
    })
}

impl Run {
    /// Prepare a line the grammar refused for the host shell, where the run's mode allows
    /// it; otherwise the grammar's refusal, saying why the host shell did not take it.
    pub(crate) fn prepare_host_line(
        &self,
        request: &ShellRequest,
        cwd: PathBuf,
        refusal: corral_line::Refusal,
    ) -> Result<Prepared> {
        let mode = self.config.host_shell;
        if mode == HostShell::Never || refusal.construct.is_syntax_error() {
            return Err(Error::refused(refusal));
        }
        let boxed = self.config.sandbox.mode.is_sandboxed() && host_enforces_every_layer();
        if !boxed && mode == HostShell::Sandboxed {
            return Err(Error::refused_noting(
                refusal,
                "the host shell runs such a line only in a sandbox every layer of which this host \
                 enforces, and this call has none (`--sandbox workspace-write` gives one)",
            ));
        }
        let extracted = match extract(&request.line) {
            Ok(extracted) => extracted,
            Err(why) => {
                return Err(Error::refused_noting(
                    refusal,
                    &format!("the host shell: {why}"),
                ));
            }
        };
        let env = self.env.build(&Default::default())?;
        let argv = vec!["bash".to_string(), "-c".to_string(), request.line.clone()];
        let check = HostCheck {
            extracted,
            ask: !boxed,
            refusal: refusal.to_string(),
        };
        let plan = Plan::host_line(argv, cwd, crate::env::path_of(&env), check);
        Ok(Prepared {
            plan,
            env,
            timeout: request.timeout.unwrap_or(self.config.timeout),
            report_unavailable: true,
            line: Some(request.line.clone()),
            terminal: false,
        })
    }
}

/// The note a host-shell result starts with: that it ran under the host shell, and in
/// which box. A sandboxed result names its sandbox on a line of its own already, so the
/// note names only what that line would not show.
pub(crate) fn note(outcome: &mut crate::Outcome) {
    let note = match &outcome.sandbox {
        Some(r) if r.mode != crate::SandboxMode::Full => {
            "[ran under the host shell (bash -c), in the sandbox below]".to_string()
        }
        Some(r) => format!("[ran under the host shell (bash -c), {}]", r.line()),
        None => "[ran under the host shell (bash -c), no sandbox]".to_string(),
    };
    outcome.observation = format!("{note}\n{}", outcome.observation);
}

/// What a host-shell line would run, as far as a bash parser can see.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Extracted {
    /// Every simple command, its words as written (quotes removed where nothing expands).
    pub commands: Vec<Vec<String>>,
    /// The assignments each command carries (`NAME=v cmd`), by the index of the command
    /// in `commands`, with every `export`/`declare` of the line added to each: a variable
    /// that changes what runs is decided as the `[env]` rules say.
    pub assignments: Vec<Vec<(String, String)>>,
    /// Command words computed when the line runs.
    pub computed: Vec<String>,
    /// Static targets of `>`, `>>` and `&>` redirects.
    pub writes: Vec<String>,
}

impl Extracted {
    /// A command found, with the assignments written in front of it.
    fn push(&mut self, argv: Vec<String>, assignments: Vec<(String, String)>) {
        self.commands.push(argv);
        self.assignments.push(assignments);
    }
}

/// How deep `eval`, `bash -c` and `sh -c` are followed.
const MAX_DEPTH: usize = 4;

/// Every command in `line`, or why bash would not run it at all.
pub(crate) fn extract(line: &str) -> Result<Extracted, String> {
    let mut out = Extracted::default();
    let mut exported = Vec::new();
    extract_into(line, &mut out, &mut exported, 0)?;
    for assignments in &mut out.assignments {
        assignments.extend(exported.iter().cloned());
    }
    Ok(out)
}

fn extract_into(
    line: &str,
    out: &mut Extracted,
    exported: &mut Vec<(String, String)>,
    depth: usize,
) -> Result<(), String> {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .map_err(|e| format!("the bash parser could not be loaded: {e}"))?;
    let tree = parser
        .parse(line, None)
        .ok_or_else(|| "the bash parser gave up on the line".to_string())?;
    let root = tree.root_node();
    if root.has_error() {
        return Err("bash would not parse it: it has a syntax error".into());
    }
    let src = line.as_bytes();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "command" => command(node, src, out, exported, depth)?,
            "declaration_command" => {
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    if let Some(assignment) = assignment(child, src) {
                        exported.push(assignment);
                    }
                }
            }
            // A here-document or here-string fed to a shell or an interpreter is the
            // program it runs.
            "redirected_statement" => fed_program(node, src, out, exported, depth)?,
            "file_redirect" => {
                let op = node
                    .child(0)
                    .filter(|c| !c.is_named())
                    .map(|c| c.kind())
                    .unwrap_or("");
                let writes = matches!(op, ">" | ">>" | "&>" | "&>>" | ">|");
                if let Some(target) = node.child_by_field_name("destination")
                    && writes
                    && let Some(path) = literal(target, src)
                {
                    out.writes.push(path);
                }
            }
            _ => {}
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            stack.push(child);
        }
    }
    Ok(())
}

/// `NAME=value`, its value literal where nothing expands in it.
fn assignment(node: tree_sitter::Node<'_>, src: &[u8]) -> Option<(String, String)> {
    if node.kind() != "variable_assignment" {
        return None;
    }
    let name = text(node.child_by_field_name("name")?, src);
    let value = node
        .child_by_field_name("value")
        .map(|v| literal(v, src).unwrap_or_else(|| text(v, src)))
        .unwrap_or_default();
    Some((name, value))
}

/// The program a here-document or here-string gives a shell or an interpreter that
/// reads it from stdin: checked as its inline form, and, for a shell, read for commands.
fn fed_program(
    node: tree_sitter::Node<'_>,
    src: &[u8],
    out: &mut Extracted,
    exported: &mut Vec<(String, String)>,
    depth: usize,
) -> Result<(), String> {
    let Some(body) = node
        .child_by_field_name("body")
        .filter(|b| b.kind() == "command")
    else {
        return Ok(());
    };
    let mut cursor = node.walk();
    let fed = node
        .children_by_field_name("redirect", &mut cursor)
        .find_map(|r| match r.kind() {
            "heredoc_redirect" => heredoc_body(r, src),
            "herestring_redirect" => r
                .named_child(0)
                .map(|w| literal(w, src).unwrap_or_else(|| text(w, src))),
            _ => None,
        });
    let Some(fed) = fed else {
        return Ok(());
    };
    let Some(name) = body
        .child_by_field_name("name")
        .and_then(|n| literal(n, src))
    else {
        return Ok(());
    };
    let mut argv = vec![name];
    let mut args = body.walk();
    for arg in body.children_by_field_name("argument", &mut args) {
        argv.push(literal(arg, src).unwrap_or_else(|| text(arg, src)));
    }
    run_fed(&argv, &fed, out, exported, depth)
}

/// The text of a here-document.
fn heredoc_body(redirect: tree_sitter::Node<'_>, src: &[u8]) -> Option<String> {
    let mut cursor = redirect.walk();
    let body = redirect
        .named_children(&mut cursor)
        .find(|c| c.kind() == "heredoc_body")?;
    Some(text(body, src))
}

/// Record what `argv` runs when `fed` is on its stdin, if it runs it as a program.
fn run_fed(
    argv: &[String],
    fed: &str,
    out: &mut Extracted,
    exported: &mut Vec<(String, String)>,
    depth: usize,
) -> Result<(), String> {
    if let Some(inline) = crate::stdin_script::as_inline(argv, Some(fed)) {
        if inline.get(1).is_some_and(|f| f == "-c") && depth < MAX_DEPTH {
            extract_into(fed, out, exported, depth + 1)?;
        }
        out.push(inline, Vec::new());
    }
    Ok(())
}

fn command(
    node: tree_sitter::Node<'_>,
    src: &[u8],
    out: &mut Extracted,
    exported: &mut Vec<(String, String)>,
    depth: usize,
) -> Result<(), String> {
    let Some(name) = node.child_by_field_name("name") else {
        return Ok(());
    };
    let mut assigned = Vec::new();
    let mut herestring = None;
    let mut walker = node.walk();
    for child in node.named_children(&mut walker) {
        if let Some(a) = assignment(child, src) {
            assigned.push(a);
        } else if child.kind() == "herestring_redirect" {
            herestring = child
                .named_child(0)
                .map(|w| literal(w, src).unwrap_or_else(|| text(w, src)));
        }
    }
    let Some(program) = literal(name, src) else {
        out.computed.push(text(name, src));
        return Ok(());
    };
    let mut argv = vec![program];
    let mut cursor = node.walk();
    for arg in node.children_by_field_name("argument", &mut cursor) {
        argv.push(literal(arg, src).unwrap_or_else(|| text(arg, src)));
    }
    // Builtins that run their arguments as a command, or as a line.
    let mut words: &[String] = &argv;
    while let [first, rest @ ..] = words
        && matches!(first.as_str(), "command" | "exec" | "builtin" | "nohup")
    {
        words = rest;
        while words.first().is_some_and(|w| w.starts_with('-')) {
            words = &words[1..];
        }
    }
    if words.len() < argv.len() && !words.is_empty() {
        out.push(words.to_vec(), assigned.clone());
    }
    if depth < MAX_DEPTH {
        let base = words
            .first()
            .map(|w| w.rsplit('/').next().unwrap_or(w))
            .unwrap_or("");
        let inner = match base {
            "eval" => Some(words[1..].join(" ")),
            "sh" | "bash" | "dash" | "zsh" | "ksh" => words
                .iter()
                .position(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('c'))
                .and_then(|i| words.get(i + 1).cloned()),
            _ => None,
        };
        if let Some(inner) = inner {
            extract_into(&inner, out, exported, depth + 1)?;
        }
    }
    if let Some(fed) = herestring {
        run_fed(&argv, &fed, out, exported, depth)?;
    }
    out.push(argv, assigned);
    Ok(())
}

/// The value of a word with nothing to expand in it; `None` when it depends on the run.
fn literal(node: tree_sitter::Node<'_>, src: &[u8]) -> Option<String> {
    match node.kind() {
        "word" | "command_name" | "number" => {
            if node.kind() == "command_name" {
                return node.named_child(0).and_then(|c| literal(c, src));
            }
            Some(unescape(&text(node, src)))
        }
        "raw_string" => {
            let t = text(node, src);
            Some(t[1..t.len().saturating_sub(1)].to_string())
        }
        "string" => {
            let mut cursor = node.walk();
            let parts: Vec<_> = node.named_children(&mut cursor).collect();
            if parts.iter().any(|p| p.kind() != "string_content") {
                return None;
            }
            let t = text(node, src);
            Some(unescape_double(&t[1..t.len().saturating_sub(1)]))
        }
        "concatenation" => {
            let mut cursor = node.walk();
            let mut value = String::new();
            for part in node.named_children(&mut cursor) {
                value.push_str(&literal(part, src)?);
            }
            Some(value)
        }
        _ => None,
    }
}

fn text(node: tree_sitter::Node<'_>, src: &[u8]) -> String {
    String::from_utf8_lossy(&src[node.byte_range()]).into_owned()
}

fn unescape(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next().filter(|n| *n != '\n') {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn unescape_double(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some('"' | '\\' | '$' | '`')) => out.extend(chars.next()),
            ('\\', Some('\n')) => {
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(line: &str) -> Vec<Vec<String>> {
        let mut c = extract(line).unwrap().commands;
        c.sort();
        c
    }

    fn has(line: &str, argv: &[&str]) -> bool {
        commands(line).iter().any(|c| c == argv)
    }

    #[test]
    fn finds_commands_in_loops_substitutions_and_functions() {
        assert!(has(
            "for f in *.py; do rm -f \"$f\"; done",
            &["rm", "-f", "\"$f\""]
        ));
        assert!(has(
            "echo \"$(git rev-parse HEAD)\"",
            &["git", "rev-parse", "HEAD"]
        ));
        assert!(has("f() { curl -s x; }; f", &["curl", "-s", "x"]));
        assert!(has(
            "while read l; do echo `whoami`; done < list",
            &["whoami"]
        ));
        assert!(has("diff <(sort a) <(sort b)", &["sort", "a"]));
        assert!(has("ls *.rs && cat 'a b' \"c\"", &["cat", "a b", "c"]));
    }

    #[test]
    fn follows_eval_and_shell_lines() {
        assert!(has("eval 'rm -rf build'", &["rm", "-rf", "build"]));
        assert!(has("bash -c 'for i in 1; do rm x; done'", &["rm", "x"]));
        assert!(has("command rm x", &["rm", "x"]));
        assert!(has("nohup ./server &", &["./server"]));
    }

    #[test]
    fn a_computed_command_word_is_reported() {
        let e = extract("cmd=rm; $cmd x; $(echo rm) y").unwrap();
        assert_eq!(e.computed, ["$(echo rm)", "$cmd"]);
    }

    #[test]
    fn write_targets_are_found() {
        let e = extract("for i in 1 2; do echo $i >> out.txt; done").unwrap();
        assert_eq!(e.writes, ["out.txt"]);
    }

    #[test]
    fn a_bash_syntax_error_is_not_extracted() {
        assert!(extract("for i in; do").is_err());
    }

    #[test]
    fn the_stricter_mode_wins() {
        assert_eq!(HostShell::Ask.stricter(HostShell::Never), HostShell::Never);
        assert_eq!(
            HostShell::Sandboxed.stricter(HostShell::Ask),
            HostShell::Sandboxed
        );
    }
}
