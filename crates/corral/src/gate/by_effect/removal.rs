//! What removing a path loses: each target resolved as the command will see it (`rm src
//! -rf`, `./src/../src`, a pattern by what it matches now, `~`), then put in a class of
//! [`Loss`]:
//!
//! 1. the workspace, or what holds it (`.`, `..`, `/`), or the home: git's history and
//!    what lies outside the workspace go with it — the record leaves them out;
//! 2. outside the workspace, or not there: nothing of the workspace's;
//! 3. `.git`, or in it: the record leaves git's own files out;
//! 4. a path the record leaves out (its ignore rules): routine when it is build output
//!    (`destructive::GENERATED`), else the record cannot put it back;
//! 5. a directory holding such a path, or a nested `.git` (walked, up to [`WALK`]
//!    entries a call; past that it is taken as holding one);
//! 6. else the record holds it: undo puts it back.
//!
//! `find`'s starting points are walked, and what its tests (`-name`, `-iname`, `-type`,
//! `-empty`, depths) select is judged as above; any other expression (`-o`, `!`,
//! `-regex`, …) is taken to remove everything under its starting points.

use std::path::{Path, PathBuf};

use super::{At, Found};
use crate::destructive::{GENERATED, Loss};
use crate::gate::lexical;
use crate::undo::rules::Rules;

/// How many entries one call's checks walk before taking the rest as holding what the
/// record leaves out.
const WALK: usize = 50_000;

impl At<'_> {
    /// What removing `path` loses, in words, when it loses anything.
    pub(super) fn removal(&mut self, path: &Path) -> Option<(String, Loss)> {
        let ws = self.workspace;
        if ws.starts_with(path) {
            return Some((shown(path, ws), Loss::Unrecorded));
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        if let Some(home) = home.filter(|h| h.starts_with(path) && !h.starts_with(ws)) {
            return Some((
                format!("`{}`, which holds the home directory", home.display()),
                Loss::Unrecorded,
            ));
        }
        let rel = path.strip_prefix(ws).ok()?;
        let meta = path.symlink_metadata().ok()?;
        if let Some(left_out) = self.left_out(rel) {
            return left_out.map(|why| (format!("`{}`, {why}", rel.display()), Loss::Unrecorded));
        }
        if meta.is_dir()
            && let Some(inner) = self.holds_left_out(path)
        {
            return Some((
                format!("`{}`, which holds {inner}", rel.display()),
                Loss::Unrecorded,
            ));
        }
        Some((
            format!("`{}` in the workspace", rel.display()),
            Loss::Recorded,
        ))
    }

    /// Whether the record leaves `rel` out: `Some(None)` when it is build output, routine
    /// to remove; `Some(Some(why))` when it is anything else; `None` when it is recorded.
    fn left_out(&mut self, rel: &Path) -> Option<Option<String>> {
        let ws = self.workspace;
        let rules = self.rules.get_or_insert_with(|| Rules::new(ws));
        let mut at = ws.to_path_buf();
        for part in rel.components() {
            rules.enter(&at);
            at.push(part);
            let name = part.as_os_str().to_string_lossy();
            if name == ".git" {
                return Some(Some(
                    "git's own files, which the undo record leaves out".into(),
                ));
            }
            if rules.ignored(&at, at.is_dir()) {
                return Some(if generated(rel) {
                    None
                } else {
                    Some("which is ignored, so the undo record leaves it out".into())
                });
            }
        }
        None
    }

    /// A path under the directory `dir` the record leaves out and that is not build
    /// output, in words.
    fn holds_left_out(&mut self, dir: &Path) -> Option<String> {
        let ws = self.workspace.to_path_buf();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for entry in entries.flatten() {
                self.walked += 1;
                if self.walked > WALK {
                    return Some(format!(
                        "more than {WALK} files, too many to tell which the undo record leaves out"
                    ));
                }
                let path = entry.path();
                let Ok(rel) = path.strip_prefix(&ws) else {
                    continue;
                };
                match self.left_out(rel) {
                    Some(Some(_)) => {
                        return Some(format!(
                            "`{}`, which the undo record leaves out",
                            rel.display()
                        ));
                    }
                    Some(None) => continue,
                    None => {}
                }
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(path);
                }
            }
        }
        None
    }

    /// The first thing `find ARGS` (which removes what it selects) would destroy that is
    /// asked about.
    pub(super) fn find(&mut self, args: &[String], cwds: &[PathBuf]) -> Option<Found> {
        let (starts, expr) = find_parts(args);
        let tests = Tests::of(expr);
        for start in &starts {
            if start.contains(['$', '`']) || start.contains(corral_policy::UNKNOWN_WORD) {
                return self.found(
                    "`find` removes under a path computed when the line runs, which could be any"
                        .into(),
                    Loss::Unrecorded,
                );
            }
            for cwd in cwds {
                for path in resolve(start, cwd) {
                    let selected = match &tests {
                        Some(tests) if !tests.all() => self.select(&path, tests),
                        // Everything under it, or an expression not read: as `rm -r`.
                        _ => vec![path],
                    };
                    for path in selected {
                        if let Some((what, loss)) = self.removal(&path)
                            && let Some(found) =
                                self.found(format!("`find {start} … -delete` removes {what}"), loss)
                        {
                            return Some(found);
                        }
                    }
                }
            }
        }
        None
    }

    /// What `tests` select under `start` (itself included), walked up to [`WALK`]; past
    /// it, `start` itself.
    fn select(&mut self, start: &Path, tests: &Tests) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![(start.to_path_buf(), 0usize)];
        while let Some((path, depth)) = stack.pop() {
            self.walked += 1;
            if self.walked > WALK {
                return vec![start.to_path_buf()];
            }
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            let entries: Vec<PathBuf> = if meta.is_dir() && tests.descends(depth) {
                std::fs::read_dir(&path)
                    .map(|d| d.flatten().map(|e| e.path()).collect())
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            if tests.select(&path, &meta, depth, entries.is_empty()) {
                out.push(path.clone());
            }
            stack.extend(entries.into_iter().map(|e| (e, depth + 1)));
        }
        out
    }
}

/// The tests of a `find` expression this check reads: a conjunction of `-name`,
/// `-iname`, `-type`, `-empty`, `-mindepth` and `-maxdepth`, with actions that remove
/// or print what they select.
#[derive(Debug, Default)]
struct Tests {
    names: Vec<globset::GlobMatcher>,
    types: Vec<char>,
    empty: bool,
    min: usize,
    max: Option<usize>,
}

impl Tests {
    /// The tests of `expr`; `None` when it holds anything else.
    fn of(expr: &[String]) -> Option<Tests> {
        let mut t = Tests::default();
        let mut i = 0;
        while let Some(a) = expr.get(i) {
            let next = expr.get(i + 1).map(String::as_str);
            match (a.as_str(), next) {
                ("-name" | "-iname", Some(p)) => {
                    let glob = globset::GlobBuilder::new(p)
                        .literal_separator(true)
                        .case_insensitive(a == "-iname")
                        .build()
                        .ok()?;
                    t.names.push(glob.compile_matcher());
                    i += 2;
                }
                ("-type", Some(c)) if c.len() == 1 => {
                    t.types.push(c.chars().next()?);
                    i += 2;
                }
                ("-mindepth", Some(n)) => {
                    t.min = n.parse().ok()?;
                    i += 2;
                }
                ("-maxdepth", Some(n)) => {
                    t.max = Some(n.parse().ok()?);
                    i += 2;
                }
                ("-empty", _) => {
                    t.empty = true;
                    i += 1;
                }
                (
                    "-delete" | "-depth" | "-print" | "-print0" | "-xdev" | "-mount" | "-a"
                    | "-and",
                    _,
                ) => i += 1,
                ("-exec" | "-execdir" | "-ok" | "-okdir", _) => {
                    let end = expr[i..].iter().position(|w| w == ";" || w == "+")?;
                    i += end + 1;
                }
                _ => return None,
            }
        }
        Some(t)
    }

    /// Whether they select everything.
    fn all(&self) -> bool {
        self.names.is_empty()
            && self.types.is_empty()
            && !self.empty
            && self.min == 0
            && self.max.is_none()
    }

    fn descends(&self, depth: usize) -> bool {
        self.max.is_none_or(|max| depth < max)
    }

    fn select(
        &self,
        path: &Path,
        meta: &std::fs::Metadata,
        depth: usize,
        no_entries: bool,
    ) -> bool {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let kind = if meta.is_dir() {
            'd'
        } else if meta.is_symlink() {
            'l'
        } else if meta.is_file() {
            'f'
        } else {
            '?'
        };
        depth >= self.min
            && self.max.is_none_or(|max| depth <= max)
            && self.names.iter().all(|m| m.is_match(&name))
            && self.types.iter().all(|t| *t == kind)
            && (!self.empty || (kind == 'd' && no_entries) || (kind == 'f' && meta.len() == 0))
    }
}

/// Whether `find ARGS` removes what it selects: `-delete`, or `-exec rm` (`unlink`,
/// `shred`) and the like.
pub(super) fn find_removes(args: &[String]) -> bool {
    args.iter().enumerate().any(|(i, a)| {
        a == "-delete"
            || (matches!(a.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                && args.get(i + 1).is_some_and(|p| {
                    let name = p.rsplit('/').next().unwrap_or(p);
                    matches!(name, "rm" | "unlink" | "shred")
                }))
    })
}

/// A `find`'s starting points (`.` when it names none).
pub(super) fn find_starts(args: &[String]) -> Vec<&str> {
    find_parts(args).0
}

/// An `rm`'s operands: every word but its options, all after `--`.
pub(super) fn operands(args: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut options = true;
    for a in args {
        if options && a == "--" {
            options = false;
        } else if !(options && a.starts_with('-') && a.len() > 1) {
            out.push(a.as_str());
        }
    }
    out
}

/// A `find`'s starting points (`.` when it names none), and its expression.
fn find_parts(args: &[String]) -> (Vec<&str>, &[String]) {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            _ if a.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let rest = &args[i.min(args.len())..];
    let n = rest
        .iter()
        .take_while(|a| !a.starts_with('-') && !matches!(a.as_str(), "(" | "!" | ","))
        .count();
    let starts: Vec<&str> = rest[..n].iter().map(String::as_str).collect();
    let starts = if starts.is_empty() { vec!["."] } else { starts };
    (starts, &rest[n..])
}

/// The paths `target` names from `cwd`: a pattern by what it matches now, `~` as the
/// home; each without `.` and `..`.
pub(super) fn resolve(target: &str, cwd: &Path) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let target = match (target.strip_prefix('~'), &home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{}{rest}", home.display())
        }
        _ => target.to_string(),
    };
    let matches = if target.contains(['*', '?', '[']) {
        crate::glob::expand(&target, &target, cwd, crate::glob::Hidden::NONE)
            .unwrap_or_else(|_| vec![target.clone()])
    } else {
        vec![target]
    };
    matches.iter().map(|m| lexical(&cwd.join(m))).collect()
}

/// Whether `rel` is in build output a build makes again.
fn generated(rel: &Path) -> bool {
    rel.components()
        .any(|c| GENERATED.contains(&c.as_os_str().to_string_lossy().as_ref()))
}

/// `path` as the question shows it: relative to the workspace where it is in it.
fn shown(path: &Path, workspace: &Path) -> String {
    match path.strip_prefix(workspace) {
        Ok(rel) if rel.as_os_str().is_empty() => {
            "the whole workspace, with its git history".to_string()
        }
        Ok(rel) => format!("`{}` in the workspace", rel.display()),
        Err(_) => format!("`{}`, which holds the workspace", path.display()),
    }
}
