//! Every simple command a bash parser finds in a host-shell line.

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

/// Whether bash would take `text` as whole commands: no syntax error, nothing left open
/// (a `for` without its `done`, a quote without its end).
pub(crate) fn parses(text: &str) -> bool {
    let mut parser = tree_sitter::Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        return false;
    }
    parser
        .parse(text, None)
        .is_some_and(|tree| !tree.root_node().has_error())
}

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
    if let Some(inline) = corral_policy::stdin_script::as_inline(argv, Some(fed)) {
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
}
