//! Rule patterns: how each one is classified and compiled, and the index
//! every rule of a policy is compiled into so one check is a handful of hash
//! lookups and three glob-set matches, however many rules there are.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::model::{Act, Effect, Origin};

/// A pattern that could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid pattern \"{pattern}\": {message}")]
pub struct PatternError {
    /// The pattern as written.
    pub pattern: String,
    /// What is wrong with it.
    pub message: String,
}

/// How an exec pattern is matched (see the crate docs for the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExecKind {
    /// One word, no glob characters, no `/`: the program's basename.
    Name,
    /// One word, no glob characters, with `/`: the program's exact path.
    Path,
    /// One word with glob characters: the basename (or the full path when
    /// the pattern has a `/`) or the joined argv.
    WordGlob { slash: bool },
    /// Contains whitespace: a glob over the joined argv.
    Argv,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    Exec(ExecKind),
    /// The glob as compiled (relative patterns are anchored with `**/`).
    Path(String),
    /// A glob over a variable's name, or over `NAME=value` when the pattern
    /// has a `=`.
    Env {
        pair: bool,
    },
}

/// One rule: an act, a pattern, an effect, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    inner: Arc<RuleInner>,
}

#[derive(Debug, PartialEq, Eq)]
struct RuleInner {
    act: Act,
    pattern: String,
    effect: Effect,
    origin: Origin,
    kind: Kind,
}

pub(crate) fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

impl Rule {
    /// Check and classify `pattern` for `act`. Fails on an empty pattern or
    /// one that is not a valid glob.
    pub fn new(
        act: Act,
        pattern: impl Into<String>,
        effect: Effect,
        origin: Origin,
    ) -> Result<Rule, PatternError> {
        let pattern = pattern.into();
        if pattern.trim().is_empty() {
            return Err(PatternError {
                pattern,
                message: "the pattern is empty".into(),
            });
        }
        let kind = match act {
            Act::Exec => {
                let kind = if pattern.contains(char::is_whitespace) {
                    ExecKind::Argv
                } else if has_glob(&pattern) {
                    ExecKind::WordGlob {
                        slash: pattern.contains('/'),
                    }
                } else if pattern.contains('/') {
                    ExecKind::Path
                } else {
                    ExecKind::Name
                };
                if !matches!(kind, ExecKind::Name | ExecKind::Path) {
                    build_glob(&pattern, false)?;
                }
                Kind::Exec(kind)
            }
            Act::Env => {
                build_glob(&pattern, false)?;
                Kind::Env {
                    pair: pattern.contains('='),
                }
            }
            Act::Read | Act::Write => {
                let anchored = anchor_path_pattern(&pattern);
                build_glob(&anchored, true).map_err(|e| PatternError {
                    pattern: pattern.clone(),
                    message: e.message,
                })?;
                Kind::Path(anchored)
            }
        };
        Ok(Rule {
            inner: Arc::new(RuleInner {
                act,
                pattern,
                effect,
                origin,
                kind,
            }),
        })
    }

    /// The act this rule is about.
    pub fn act(&self) -> Act {
        self.inner.act
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.inner.pattern
    }

    /// Whether the pattern names one program (`rm`, `/usr/bin/curl`): one word, no glob
    /// characters, no arguments. Such a rule holds by the program's file; any other holds
    /// by the words a command is given (`git push*`).
    pub fn names_a_program(&self) -> bool {
        let p = self.pattern();
        !p.contains(char::is_whitespace) && !p.contains(['*', '?', '[', '{'])
    }

    /// What the rule says.
    pub fn effect(&self) -> Effect {
        self.inner.effect
    }

    /// Where the rule came from.
    pub fn origin(&self) -> &Origin {
        &self.inner.origin
    }

    pub(crate) fn kind(&self) -> &Kind {
        &self.inner.kind
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<5} {:<5} {:?}  ({})",
            self.effect(),
            self.act(),
            self.pattern(),
            self.origin()
        )
    }
}

/// A path pattern with no `/` matches a basename anywhere; a relative one
/// matches at any depth. Both become `**/pattern`.
fn anchor_path_pattern(pattern: &str) -> String {
    let p = pattern.strip_prefix("./").unwrap_or(pattern);
    if p.starts_with('/') || p.starts_with("**") {
        p.to_string()
    } else {
        format!("**/{p}")
    }
}

/// Whether some text that starts with `prefix` matches the exec glob `pattern` (as the
/// joined argv is matched: `*` crosses spaces): the glob's automaton, run over `prefix`,
/// is not yet in its dead state. A pattern that cannot be compiled says yes.
fn could_start_with(pattern: &str, prefix: &str) -> bool {
    use regex_automata::dfa::{Automaton, StartKind, dense};
    use regex_automata::{Anchored, Input};
    let Ok(glob) = build_glob(pattern, false) else {
        return true;
    };
    // The glob's regex matches bytes (`(?-u)`), not only UTF-8.
    let built = dense::Builder::new()
        .configure(dense::Config::new().start_kind(StartKind::Anchored))
        .syntax(regex_automata::util::syntax::Config::new().utf8(false))
        .thompson(regex_automata::nfa::thompson::Config::new().utf8(false))
        .build(glob.regex());
    let Ok(dfa) = built else {
        return true;
    };
    let start = Input::new(prefix).anchored(Anchored::Yes);
    let Ok(mut state) = dfa.start_state_forward(&start) else {
        return true;
    };
    for &byte in prefix.as_bytes() {
        state = dfa.next_state(state, byte);
        if dfa.is_dead_state(state) {
            return false;
        }
    }
    true
}

fn build_glob(pattern: &str, literal_separator: bool) -> Result<globset::Glob, PatternError> {
    GlobBuilder::new(pattern)
        .literal_separator(literal_separator)
        .backslash_escape(true)
        .empty_alternates(true)
        .build()
        .map_err(|e| PatternError {
            pattern: pattern.to_string(),
            message: e.kind().to_string(),
        })
}

/// One rule's place in the stack.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub layer: usize,
    pub rule: Rule,
}

#[derive(Debug, Default)]
struct Set {
    set: GlobSet,
    ids: Vec<u32>,
}

#[derive(Debug)]
struct SetBuilder {
    builder: GlobSetBuilder,
    ids: Vec<u32>,
}

impl Default for SetBuilder {
    fn default() -> Self {
        SetBuilder {
            builder: GlobSetBuilder::new(),
            ids: Vec::new(),
        }
    }
}

impl SetBuilder {
    fn add(&mut self, pattern: &str, literal_separator: bool, id: u32) {
        // Every pattern was checked when its rule was made.
        if let Ok(glob) = build_glob(pattern, literal_separator) {
            self.builder.add(glob);
            self.ids.push(id);
        }
    }

    fn build(self) -> Set {
        Set {
            set: self.builder.build().unwrap_or_else(|_| GlobSet::empty()),
            ids: self.ids,
        }
    }
}

impl Set {
    fn hits(&self, candidate: &Candidate<'_>, scratch: &mut Vec<usize>, best: &mut Best<'_>) {
        if self.ids.is_empty() {
            return;
        }
        self.set.matches_candidate_into(candidate, scratch);
        for &i in scratch.iter() {
            best.offer(self.ids[i]);
        }
    }
}

/// The strictest matching rule, and among equals the first in stack order.
pub(crate) struct Best<'a> {
    entries: &'a [Entry],
    found: Option<u32>,
}

impl<'a> Best<'a> {
    fn new(entries: &'a [Entry]) -> Self {
        Best {
            entries,
            found: None,
        }
    }

    fn offer(&mut self, id: u32) {
        let better = match self.found {
            None => true,
            Some(cur) => {
                let (a, b) = (
                    self.entries[id as usize].rule.effect(),
                    self.entries[cur as usize].rule.effect(),
                );
                a > b || (a == b && id < cur)
            }
        };
        if better {
            self.found = Some(id);
        }
    }

    fn get(self) -> Option<&'a Entry> {
        self.found.map(|i| &self.entries[i as usize])
    }
}

/// What an exec rule is matched against.
#[derive(Debug)]
pub(crate) struct ExecSubject<'a> {
    pub argv0: &'a str,
    pub path: Option<&'a str>,
    pub joined: &'a str,
    /// The joined argv with `argv[0]` shortened to its basename, when that
    /// differs from `joined`.
    pub joined_base: Option<&'a str>,
}

pub(crate) fn basename(s: &str) -> &str {
    let cut = if cfg!(windows) {
        s.rfind(['/', '\\'])
    } else {
        s.rfind('/')
    };
    match cut {
        Some(i) if i + 1 < s.len() => &s[i + 1..],
        Some(_) => s,
        None => s,
    }
}

/// Every rule of a policy, compiled.
#[derive(Debug, Default)]
pub(crate) struct Index {
    entries: Vec<Entry>,
    exec_names: HashMap<String, Vec<u32>>,
    exec_paths: HashMap<String, Vec<u32>>,
    /// Single-word globs without `/`, against basenames.
    exec_word: Set,
    /// Single-word globs with `/`, against full program paths.
    exec_word_path: Set,
    /// Every glob (single-word or not), against the joined argv.
    exec_argv: Set,
    paths: [Set; 2],
    /// Env globs over the name, and over `NAME=value`.
    env_name: Set,
    env_pair: Set,
}

impl Index {
    pub(crate) fn build(entries: Vec<Entry>) -> Index {
        let mut exec_names: HashMap<String, Vec<u32>> = HashMap::new();
        let mut exec_paths: HashMap<String, Vec<u32>> = HashMap::new();
        let (mut word, mut word_path, mut argv) = (
            SetBuilder::default(),
            SetBuilder::default(),
            SetBuilder::default(),
        );
        let mut paths = [SetBuilder::default(), SetBuilder::default()];
        let (mut env_name, mut env_pair) = (SetBuilder::default(), SetBuilder::default());
        for (i, entry) in entries.iter().enumerate() {
            let id = i as u32;
            let pattern = entry.rule.pattern();
            match entry.rule.kind() {
                Kind::Exec(ExecKind::Name) => {
                    exec_names.entry(pattern.to_string()).or_default().push(id)
                }
                Kind::Exec(ExecKind::Path) => {
                    exec_paths.entry(pattern.to_string()).or_default().push(id)
                }
                Kind::Exec(ExecKind::WordGlob { slash }) => {
                    if *slash {
                        word_path.add(pattern, false, id);
                    } else {
                        word.add(pattern, false, id);
                    }
                    argv.add(pattern, false, id);
                }
                Kind::Exec(ExecKind::Argv) => argv.add(pattern, false, id),
                Kind::Env { pair: false } => env_name.add(pattern, false, id),
                Kind::Env { pair: true } => env_pair.add(pattern, false, id),
                Kind::Path(glob) => {
                    let slot = if entry.rule.act() == Act::Read { 0 } else { 1 };
                    paths[slot].add(glob, true, id);
                }
            }
        }
        let [read, write] = paths;
        Index {
            entries,
            exec_names,
            exec_paths,
            exec_word: word.build(),
            exec_word_path: word_path.build(),
            exec_argv: argv.build(),
            paths: [read.build(), write.build()],
            env_name: env_name.build(),
            env_pair: env_pair.build(),
        }
    }

    /// The strictest deny or ask rule over a command's arguments, written by a person, an
    /// operator or the embedding program, that words added after `known` (a command's
    /// words so far, joined; its program by basename) could make match. The built-in
    /// questions on what destroys work are left out: the words a `find -exec rm {}`
    /// adds are files, which the undo record or the questions by effect answer for.
    pub(crate) fn exec_could_extend(&self, known: &str) -> Option<&Entry> {
        let known = format!("{known} ");
        self.entries
            .iter()
            .filter(|e| matches!(e.rule.kind(), Kind::Exec(ExecKind::Argv)))
            .filter(|e| matches!(e.rule.effect(), Effect::Deny | Effect::Ask))
            .filter(|e| *e.rule.origin() != Origin::Builtin)
            .filter(|e| could_start_with(e.rule.pattern(), &known))
            .max_by_key(|e| e.rule.effect())
    }

    /// The strictest exec rule matching `subject`, first in stack order
    /// among equals.
    pub(crate) fn exec(&self, s: &ExecSubject<'_>) -> Option<&Entry> {
        let mut best = Best::new(&self.entries);
        let base0 = basename(s.argv0);
        let path_base = s.path.map(basename);
        let mut lit = |map: &HashMap<String, Vec<u32>>, key: &str| {
            if let Some(ids) = map.get(key) {
                for &id in ids {
                    best.offer(id);
                }
            }
        };
        lit(&self.exec_names, base0);
        if let Some(b) = path_base.filter(|b| *b != base0) {
            lit(&self.exec_names, b);
        }
        if s.argv0.contains('/') {
            lit(&self.exec_paths, s.argv0);
        }
        if let Some(p) = s.path.filter(|p| *p != s.argv0) {
            lit(&self.exec_paths, p);
        }
        let mut scratch = Vec::new();
        let mut glob = |set: &Set, text: &str| {
            if !set.ids.is_empty() {
                set.hits(&Candidate::new(text), &mut scratch, &mut best);
            }
        };
        glob(&self.exec_word, base0);
        if let Some(b) = path_base.filter(|b| *b != base0) {
            glob(&self.exec_word, b);
        }
        if s.argv0.contains('/') {
            glob(&self.exec_word_path, s.argv0);
        }
        if let Some(p) = s.path.filter(|p| *p != s.argv0) {
            glob(&self.exec_word_path, p);
        }
        glob(&self.exec_argv, s.joined);
        if let Some(j) = s.joined_base {
            glob(&self.exec_argv, j);
        }
        best.get()
    }

    /// The strictest read or write rule matching `path`.
    pub(crate) fn path(&self, act: Act, path: &Path) -> Option<&Entry> {
        let set = match act {
            Act::Read => &self.paths[0],
            Act::Write => &self.paths[1],
            Act::Exec | Act::Env => return None,
        };
        let mut best = Best::new(&self.entries);
        let mut scratch = Vec::new();
        set.hits(&Candidate::new(path), &mut scratch, &mut best);
        best.get()
    }
}

impl Index {
    /// The strictest env rule matching the assignment `name=value`.
    pub(crate) fn env(&self, name: &str, value: &str) -> Option<&Entry> {
        let mut best = Best::new(&self.entries);
        let mut scratch = Vec::new();
        self.env_name
            .hits(&Candidate::new(name), &mut scratch, &mut best);
        if !self.env_pair.ids.is_empty() {
            let pair = format!("{name}={value}");
            self.env_pair
                .hits(&Candidate::new(&pair), &mut scratch, &mut best);
        }
        best.get()
    }

    /// Every program name (a one-word rule without glob characters or `/`)
    /// with an exec rule of at least `effect`, each once, in stack order.
    pub(crate) fn exec_names_at_least(&self, effect: Effect) -> Vec<&str> {
        let mut names: Vec<(u32, &str)> = self
            .exec_names
            .iter()
            .filter_map(|(name, ids)| {
                ids.iter()
                    .find(|&&id| self.entries[id as usize].rule.effect() >= effect)
                    .map(|&id| (id, name.as_str()))
            })
            .collect();
        names.sort();
        names.into_iter().map(|(_, n)| n).collect()
    }
}
#[cfg(test)]
mod could_start_tests {
    use super::could_start_with;

    #[test]
    fn a_glob_could_start_with_what_its_automaton_has_not_refused() {
        assert!(could_start_with("git push*", "git "));
        assert!(could_start_with("git push*", "git push "));
        assert!(!could_start_with("git push*", "git add "));
        assert!(!could_start_with("git push*", "npm "));
        // `*` crosses spaces: anything may come before ` reset`.
        let reset = "git{, -C *, -c *} reset*--hard*";
        assert!(could_start_with(reset, "git "));
        assert!(could_start_with(reset, "git -C dir "));
        assert!(!could_start_with(reset, "git add "));
        assert!(could_start_with("rm*", "rm -f "));
    }
}
