//! What in a host-shell line runs programs the bash parser cannot name: the constructs
//! that turn a string into code when the line runs (a trap, a prompt or arithmetic
//! expansion of a variable, an alias, a completion callback, a sourced stream), change
//! which file a name runs (`PATH`, `hash -p`, a start-up file variable), or run a path
//! that does not exist when the line is checked (made by the line itself). The extractor
//! checks what it can name; a line with any of these "runs unknown programs", and where
//! a rule of the person's or the operator's must hold, it is asked about (see `gate`).

use std::path::Path;

use super::extract::Extracted;

/// Variables that decide which program a name runs, or that a shell runs as code.
const CODE_VARIABLES: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PS0",
    "PS1",
    "PS2",
    "PS4",
    "BASH_LOADABLES_PATH",
    "EXECIGNORE",
];

/// Each construct of `line` that runs code corral cannot name, in words (`trap`, `an
/// assignment to PATH`), in the order found, each once. `extracted` is what the bash
/// parser found in it; `cwd` where it runs.
pub(crate) fn unmodelled(line: &str, extracted: &Extracted, cwd: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut note = |what: String| {
        if !found.contains(&what) {
            found.push(what);
        }
    };
    for (argv, assigned) in extracted.commands.iter().zip(&extracted.assignments) {
        if let Some(what) = builtin(argv) {
            note(what);
        }
        for (name, _) in assigned {
            if CODE_VARIABLES.contains(&name.as_str()) {
                note(format!("an assignment to {name}"));
            }
        }
        if let Some(program) = argv.first()
            && program.contains('/')
            && !cwd.join(program).exists()
        {
            note(format!(
                "`{program}`, a program that does not exist when the line is checked"
            ));
        }
    }
    for what in syntax(line) {
        note(what);
    }
    found
}

/// A builtin that runs a string as code, or changes what a name runs.
fn builtin(argv: &[String]) -> Option<String> {
    let (name, args) = argv.split_first()?;
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(&a.as_str()));
    let flag_letter = |letter: char| {
        args.iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(letter))
    };
    let what = match name.as_str() {
        "trap" if !args.is_empty() && !has(&["-l", "-p"]) => "`trap`",
        "let" => "`let` (arithmetic on variables)",
        "declare" | "typeset" | "local" | "export" | "readonly" if flag_letter('i') => {
            "`declare -i` (arithmetic on variables)"
        }
        "mapfile" | "readarray" if flag_letter('C') => "a `mapfile` callback",
        "compgen" | "complete" if flag_letter('C') || flag_letter('F') => "a completion callback",
        "alias" if !args.is_empty() => "`alias`",
        "shopt" if has(&["expand_aliases"]) => "`shopt -s expand_aliases`",
        "hash" if flag_letter('p') => "`hash -p`",
        "enable" if flag_letter('f') => "`enable -f` (a loadable builtin)",
        "bind" if flag_letter('x') => "`bind -x`",
        "coproc" => "`coproc`",
        "source" | "." => match args.first().map(String::as_str) {
            Some(file) if is_stream(file) => "`source` of a stream",
            Some(_) => return None,
            None => "`source` of stdin",
        },
        "set" if args.iter().any(|a| a == "-x" || a == "-o" || a == "xtrace") => {
            "`set -x` (its prompt, PS4, is expanded)"
        }
        _ => return None,
    };
    Some(what.to_string())
}

/// Whether `file` is a stream rather than a file a check could read.
fn is_stream(file: &str) -> bool {
    file == "-"
        || file.starts_with("/dev/fd/")
        || file.starts_with("/proc/self/fd/")
        || matches!(file, "/dev/stdin" | "/dev/tty")
        || file.starts_with("<(")
        || file.contains('$')
}

/// Constructs the bash parser shows in the line's syntax: arithmetic that expands a
/// variable (`$((x))`, `((x))`, an array index), `${x@P}` (prompt expansion), `coproc`.
fn syntax(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut parser = tree_sitter::Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        return found;
    }
    let Some(tree) = parser.parse(line, None) else {
        return found;
    };
    let src = line.as_bytes();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "arithmetic_expansion" | "compound_statement" | "subscript"
                if names_a_variable(node, src) =>
            {
                found.push("arithmetic on a variable (`$((x))`, `((x))`, `a[x]`)".to_string());
            }
            "expansion" if node.utf8_text(src).is_ok_and(|t| t.contains("@P")) => {
                found.push("`${x@P}` (prompt expansion)".to_string());
            }
            "coproc_statement" => found.push("`coproc`".to_string()),
            "variable_assignment" => {
                let name = node
                    .child_by_field_name("name")
                    .and_then(|n| n.utf8_text(src).ok())
                    .unwrap_or("");
                if CODE_VARIABLES.contains(&name) {
                    found.push(format!("an assignment to {name}"));
                }
            }
            "declaration_command" if integer_flag(node, src) => {
                found.push("`declare -i` (arithmetic on variables)".to_string());
            }
            _ => {}
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            stack.push(child);
        }
    }
    found
}

/// Whether a declaration (`declare`, `typeset`, `local`, …) gives `-i`: its values are
/// then evaluated as arithmetic.
fn integer_flag(node: tree_sitter::Node<'_>, src: &[u8]) -> bool {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).any(|c| {
        c.kind() == "word"
            && c.utf8_text(src)
                .is_ok_and(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('i'))
    })
}

/// Whether arithmetic `node` reads a variable: bash evaluates a variable's value in
/// arithmetic as an expression, and an array index in it runs `$( )`.
fn names_a_variable(node: tree_sitter::Node<'_>, src: &[u8]) -> bool {
    if node.kind() == "compound_statement"
        && !node.utf8_text(src).is_ok_and(|t| t.starts_with("(("))
    {
        return false;
    }
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if matches!(n.kind(), "variable_name" | "simple_expansion" | "expansion")
            || (n.kind() == "word"
                && n.utf8_text(src)
                    .is_ok_and(|t| t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')))
        {
            return true;
        }
        let mut cursor = n.walk();
        for child in n.named_children(&mut cursor) {
            stack.push(child);
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(line: &str) -> Vec<String> {
        let extracted = super::super::extract::extract(line).unwrap();
        unmodelled(line, &extracted, Path::new("/"))
    }

    #[test]
    fn every_construct_that_runs_a_string_is_named() {
        let lines = [
            "trap 'rm v' EXIT",
            "PS4='$(rm v)'; set -x; true",
            "x='a[$(rm v)]'; echo $((x))",
            "declare -i n=x",
            "let n=x",
            "x='\\$(rm v)'; echo ${x@P}",
            "mapfile -t -C rm -c 1 a <<< v",
            "compgen -C 'rm v' x",
            "shopt -s expand_aliases; alias ls=rm; ls v",
            "hash -p /bin/rm ls; ls v",
            "coproc rm v",
            ". /dev/stdin <<< 'rm v'",
            "ln -sf /bin/rm ./tool; ./tool v",
            "PATH=$PWD/b:$PATH; ls v",
            "BASH_ENV=x bash -c true",
        ];
        for line in lines {
            assert!(!of(line).is_empty(), "{line}: nothing unmodelled found");
        }
    }

    #[test]
    fn plain_bash_is_modelled() {
        for line in [
            "for f in *.txt; do wc -l \"$f\"; done",
            "if [ -f x ]; then cat x; fi",
            "echo $HOME $((1 + 2))",
            "ls | grep x && echo ok",
            "trap -p",
            "source ./env.sh",
        ] {
            assert_eq!(of(line), Vec::<String>::new(), "{line}");
        }
    }
}
