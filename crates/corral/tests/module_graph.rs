//! No module of any crate in the workspace imports, directly or through others, a module
//! that imports it back.
//!
//! A loop between modules hides which concept rests on which; once there is one, the
//! next one costs nothing. This test reads every crate's module tree from its root file,
//! takes each module's references to other modules of the same crate (`use crate::…`,
//! `crate::a::b` in code, `super::…`, a child module used by name, a name the crate root
//! re-exports), and fails on the first strongly connected group it finds, naming the
//! modules and what ties them. Comments and `#[cfg(test)]` modules are left out: a test
//! module may reach back into the module it tests.
//!
//! The loops looked for are between top-level modules: a reference from anywhere under
//! `a` to anywhere under `b` is an edge `a -> b`, so a type placed in a submodule of a
//! higher module does not hide a loop (each failure names the module-level references
//! behind each edge).
//!
//! It also keeps the library's public modules few: a newcomer reads the crate through
//! them, so each is an area of its own, and what another crate needs from a private module
//! is re-exported at the root instead of making the module public.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One crate's modules: path (`handle::pty`, the root is `""`) → source with comments
/// and test modules removed.
type Modules = BTreeMap<String, String>;

#[test]
fn no_crate_in_the_workspace_has_a_module_loop() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut loops = Vec::new();
    let mut roots = 0;
    for entry in std::fs::read_dir(&crates).unwrap() {
        let src = entry.unwrap().path().join("src");
        for root in ["lib.rs", "main.rs"] {
            let file = src.join(root);
            if !file.exists() {
                continue;
            }
            roots += 1;
            let modules = read_tree(&file);
            let fine = graph(&modules);
            let graph = top_level(&fine);
            for group in loops_in(&graph) {
                let ties: Vec<String> = group
                    .iter()
                    .map(|m| {
                        let to: Vec<String> = graph[m]
                            .iter()
                            .filter(|t| group.contains(t))
                            .map(|t| format!("{t} ({})", why(&fine, m, t).join(", ")))
                            .collect();
                        format!("  {m} -> {}", to.join("; "))
                    })
                    .collect();
                loops.push(format!("{}:\n{}", file.display(), ties.join("\n")));
            }
        }
    }
    assert!(
        roots >= 8,
        "found only {roots} crate roots under {crates:?}"
    );
    assert!(
        loops.is_empty(),
        "modules that import each other (move what both need into a module of its own):\n{}",
        loops.join("\n")
    );
}

/// The most public modules the library's root may declare.
const MAX_PUBLIC_MODULES: usize = 9;

#[test]
fn the_library_has_few_public_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let public = public_modules(&strip(&std::fs::read_to_string(&root).unwrap()));
    assert!(
        public.len() <= MAX_PUBLIC_MODULES,
        "{} declares {} public modules, more than {MAX_PUBLIC_MODULES}: {public:?}; keep a \
         module private (`mod x;`) and re-export at the root (`pub use`) what other crates use",
        root.display(),
        public.len()
    );
}

#[test]
fn public_modules_are_counted_in_files_and_inline() {
    let source = strip(
        "pub mod a;\nmod b;\npub(crate) mod c;\n// pub mod old;\n/// Docs.\npub mod d {\n    pub use x::Y;\n}\npub use e as f;\n",
    );
    assert_eq!(public_modules(&source), ["a", "d"]);
}

#[test]
fn the_check_finds_a_loop_through_a_re_export_and_a_child() {
    let modules: Modules = [
        ("", "mod a;\nmod b;\npub use b::Thing;"),
        ("a", "mod inner;\nfn f() { inner::g(); }"),
        ("a::inner", "use crate::Thing;"),
        ("b", "pub struct Thing;\nfn h() { crate::a::f(); }"),
    ]
    .into_iter()
    .map(|(m, s)| (m.to_string(), strip(s)))
    .collect();
    let loops = loops_in(&graph(&modules));
    assert_eq!(loops, [vec!["a", "a::inner", "b"]]);

    let acyclic: Modules = [("", "mod a;\nmod b;"), ("a", "use crate::b::X;"), ("b", "")]
        .into_iter()
        .map(|(m, s)| (m.to_string(), strip(s)))
        .collect();
    assert!(loops_in(&graph(&acyclic)).is_empty());
}

#[test]
fn a_loop_through_a_submodule_of_a_higher_module_is_a_loop() {
    // `b::types` imports nothing, so at module level there is no loop; but a reader of
    // `a` opens `b` to find its types, and `b` uses `a`.
    let modules: Modules = [
        ("", "mod a;\nmod b;"),
        ("a", "use crate::b::types::T;"),
        ("b", "mod types;\nfn f() { crate::a::g(); }"),
        ("b::types", "pub struct T;"),
    ]
    .into_iter()
    .map(|(m, s)| (m.to_string(), strip(s)))
    .collect();
    let fine = graph(&modules);
    assert!(loops_in(&fine).is_empty());
    assert_eq!(loops_in(&top_level(&fine)), [vec!["a", "b"]]);
}

#[test]
fn comments_and_test_modules_are_not_references() {
    let source = "/// See [`crate::b`].\nfn f() {} // crate::c::g()\n#[cfg(test)]\nmod tests {\n    use crate::d;\n}\n";
    let kept = strip(source);
    assert!(!kept.contains("crate::"), "{kept}");
}

/// The module tree under `root`, following `mod NAME;` declarations to their files.
fn read_tree(root: &Path) -> Modules {
    let mut modules = Modules::new();
    let mut pending = vec![(String::new(), root.to_path_buf())];
    while let Some((name, file)) = pending.pop() {
        let source = strip(&std::fs::read_to_string(&file).unwrap());
        let is_dir_owner = name.is_empty() || file.file_name().is_some_and(|f| f == "mod.rs");
        let dir: PathBuf = if is_dir_owner {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for child in declared_children(&source) {
            let path = [
                dir.join(format!("{child}.rs")),
                dir.join(&child).join("mod.rs"),
            ]
            .into_iter()
            .find(|p| p.exists());
            if let Some(path) = path {
                pending.push((join(&name, &child), path));
            }
        }
        modules.insert(name, source);
    }
    modules
}

/// The source without comments and without `#[cfg(test)]` items.
fn strip(source: &str) -> String {
    let mut out = String::new();
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        if trimmed.starts_with("#[cfg(test)]") {
            // Skip the item: up to the line that closes what it opened.
            let mut depth = 0i32;
            let mut opened = false;
            for next in lines.by_ref() {
                depth += next.matches('{').count() as i32 - next.matches('}').count() as i32;
                opened |= next.contains('{');
                if (opened && depth <= 0) || (!opened && next.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        let code = match line.find(" // ") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The modules `source` declares public: `pub mod NAME;` or an inline `pub mod NAME { … }`.
fn public_modules(source: &str) -> Vec<String> {
    source
        .lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("pub mod ")?;
            let name = rest.trim_end_matches([';', '{', ' ']);
            is_ident(name).then(|| name.to_string())
        })
        .collect()
}

/// The names of `mod NAME;` declarations (not inline modules).
fn declared_children(source: &str) -> Vec<String> {
    source
        .lines()
        .filter_map(|line| {
            let rest = line.trim_start();
            let rest = match rest.strip_prefix("pub") {
                Some(r) if r.starts_with('(') => r.split_once(')')?.1.trim_start(),
                Some(r) => r.trim_start(),
                None => rest,
            };
            let name = rest.strip_prefix("mod ")?.strip_suffix(';')?.trim();
            is_ident(name).then(|| name.to_string())
        })
        .collect()
}

/// The graph of top-level modules: a reference from anywhere under `a` to anywhere under
/// `b` is an edge `a -> b`. A type moved into a submodule of a higher module does not
/// take the higher module out of a loop: it is the module a reader opens.
fn top_level(fine: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let top = |m: &str| m.split("::").next().unwrap_or(m).to_string();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in fine {
        if from.is_empty() {
            continue;
        }
        let entry = graph.entry(top(from)).or_default();
        for t in to {
            if top(t) != top(from) {
                entry.insert(top(t));
            }
        }
    }
    graph
}

/// The module-level references that make the top-level edge `from -> to`.
fn why(fine: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> Vec<String> {
    let under = |m: &str, top: &str| m == top || m.starts_with(&format!("{top}::"));
    fine.iter()
        .filter(|(m, _)| under(m, from))
        .flat_map(|(m, targets)| {
            targets
                .iter()
                .filter(|t| under(t, to))
                .map(move |t| format!("{m}>{t}"))
        })
        .collect()
}

/// Every module → the modules of the same crate it refers to.
fn graph(modules: &Modules) -> BTreeMap<String, BTreeSet<String>> {
    let exported = root_exports(modules.get("").map_or("", String::as_str));
    modules
        .iter()
        .map(|(name, source)| {
            let mut to = BTreeSet::new();
            for path in referenced_paths(name, source) {
                if let Some(target) = resolve(&path, modules, &exported)
                    && target != *name
                    && !target.is_empty()
                {
                    to.insert(target);
                }
            }
            (name.clone(), to)
        })
        .collect()
}

/// The names the crate root re-exports (`pub use a::b::{C, D};`), → the path they name.
fn root_exports(root: &str) -> BTreeMap<String, Vec<String>> {
    let mut names = BTreeMap::new();
    for item in root.split(';') {
        let Some(tree) = item.trim().strip_prefix("pub use ") else {
            continue;
        };
        for path in expand(tree.trim()) {
            if let Some(last) = path.last() {
                let last = last
                    .rsplit(" as ")
                    .next()
                    .unwrap_or(last)
                    .trim()
                    .to_string();
                names.insert(last, path);
            }
        }
    }
    names
}

/// The module paths `source` (module `name`) refers to, absolute from the crate root.
fn referenced_paths(name: &str, source: &str) -> Vec<Vec<String>> {
    let own: Vec<String> = if name.is_empty() {
        Vec::new()
    } else {
        name.split("::").map(str::to_string).collect()
    };
    let children: BTreeSet<String> = declared_children(source).into_iter().collect();
    let bytes = source.as_bytes();
    let mut paths = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b':');
        let step = source[i..].chars().next().map_or(1, char::len_utf8);
        if !starts_word {
            i += step;
            continue;
        }
        let rest = &source[i..];
        let word_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..word_len];
        let after = &rest[word_len..];
        if word.is_empty() || !after.starts_with("::") {
            i += if word.is_empty() { step } else { word_len };
            continue;
        }
        let tree_text = take_tree(&after[2..]);
        let base: Option<Vec<String>> = match word {
            "crate" => Some(Vec::new()),
            "super" => {
                let mut parent = own.clone();
                // A `mod.rs` or leaf module: `super` is the module's parent.
                parent.pop();
                Some(parent)
            }
            "self" => Some(own.clone()),
            child if children.contains(child) => {
                let mut p = own.clone();
                p.push(child.to_string());
                Some(p)
            }
            _ => None,
        };
        if let Some(base) = base {
            for tail in expand(tree_text) {
                let mut full = base.clone();
                full.extend(tail);
                paths.push(full);
            }
        }
        i += word_len + 2 + tree_text.len();
    }
    paths
}

/// The path tree at the start of `text`: `a::b`, `a::{b, c::d}`, up to where it ends.
fn take_tree(text: &str) -> &str {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return &text[..at],
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[..=at];
                }
            }
            c if depth == 0 && !(c.is_ascii_alphanumeric() || c == '_' || c == ':') => {
                return &text[..at];
            }
            _ => {}
        }
    }
    text
}

/// `a::{b, c::{d, e}}` → `[a, b]`, `[a, c, d]`, `[a, c, e]`.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim().trim_end_matches("::");
    let Some(open) = tree.find('{') else {
        let path: Vec<String> = tree
            .split("::")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        return if path.is_empty() {
            Vec::new()
        } else {
            vec![path]
        };
    };
    let prefix: Vec<String> = tree[..open]
        .split("::")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (at, c) in inner.char_indices().chain([(inner.len(), ',')]) {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                for tail in expand(&inner[start..at]) {
                    let mut full = prefix.clone();
                    full.extend(tail.into_iter().filter(|s| s != "self"));
                    out.push(full);
                }
                start = at + 1;
            }
            _ => {}
        }
    }
    out
}

/// The module a path lands in: the longest prefix that is a module, after a name the
/// root re-exports is replaced by what it names.
fn resolve(
    path: &[String],
    modules: &Modules,
    exported: &BTreeMap<String, Vec<String>>,
) -> Option<String> {
    let first = path.first()?;
    if !modules.contains_key(first.as_str())
        && let Some(target) = exported.get(first)
        && target.first() != Some(first)
    {
        let mut full = target.clone();
        full.extend(path[1..].iter().cloned());
        return resolve(&full, modules, exported);
    }
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| modules.contains_key(m))
}

/// The groups of two or more modules that reach each other (Tarjan's algorithm).
fn loops_in(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        groups: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut group = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    group.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if group.len() > 1 {
                    group.sort();
                    self.groups.push(group);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        groups: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.groups
}

fn join(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_string()
    } else {
        format!("{parent}::{child}")
    }
}

fn is_ident(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
