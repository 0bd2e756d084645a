//! Which files a box covers with a stub, so that a program the policy denies cannot
//! start there by any route (see [`corral_sys::program_stubs`]).
//!
//! A `deny` exec rule of one word without glob characters names a program: `rm`, or
//! `/usr/bin/curl`. Where the policy's decision on running it is that rule's deny, the
//! files it names are found: the file each directory of the box's `PATH` and the system
//! directories hold under that name (or the path itself), then every other name those
//! directories give the same file (hard links, symlinks), each followed to where it
//! lies. A symlink elsewhere leads to one of those files, and so to its stub. A file
//! reached under more than [`MULTI_CALL_NAMES`] names is a multi-call binary (`busybox`,
//! a single-binary coreutils): covering it would take `/bin/sh` with it, so it is left to
//! corral's checks. An argument-pattern rule (`git push*`) is corral's checks' too.
//!
//! The run writes one stub per rule, once, in a directory of its own, removed with it;
//! the files are found again only when the box's `PATH` changes.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use corral_policy::{Act, Effect, Origin, Policy};
use corral_sys::program_stubs::StubSet;

/// Where programs are looked for beside the box's `PATH`.
pub(crate) const SYSTEM_DIRS: &[&str] =
    &["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/// A file reached under more names than this is a multi-call binary.
pub(crate) const MULTI_CALL_NAMES: usize = 8;

/// How the stub's line starts.
const LINE_START: &str = "corral: ";
const LINE_MIDDLE: &str = " is denied here by rule ";

/// A program a deny rule names, and the line its stub says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeniedProgram {
    /// The rule's pattern: a name or an absolute path.
    pub pattern: String,
    /// `corral: rm is denied here by rule "rm" (layer operator, FILE:LINE)`.
    pub line: String,
    /// The rule's layer: `operator`, `user`, `project`, …
    pub layer: String,
    /// Where the rule was written: `FILE:LINE`, a flag.
    pub origin: String,
}

/// The run's denied programs and the stubs made for them.
#[derive(Debug, Default)]
pub(crate) struct DeniedPrograms {
    pub programs: Vec<DeniedProgram>,
    /// (the `PATH` they were found for, what covers them), the last found.
    found: Mutex<Option<(OsString, Arc<StubSet>)>>,
    /// The directory the stubs were written to, once.
    dir: Mutex<Option<PathBuf>>,
}

impl Drop for DeniedPrograms {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.get_mut().ok().and_then(|d| d.take()) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl DeniedPrograms {
    /// The programs `policy` denies by a rule of their own (see the module docs).
    pub(crate) fn of(policy: &Policy) -> Self {
        let mut programs: Vec<DeniedProgram> = Vec::new();
        for layer in policy.layers() {
            for rule in layer.rules() {
                let p = rule.pattern();
                if rule.act() != Act::Exec
                    || rule.effect() != Effect::Deny
                    || !rule.names_a_program()
                    || programs.iter().any(|d| d.pattern == p)
                {
                    continue;
                }
                let decision = policy.check(Act::Exec, p);
                let Some(by) = decision
                    .rule
                    .as_ref()
                    .filter(|_| decision.effect == Effect::Deny)
                else {
                    continue;
                };
                let origin = match by.origin() {
                    Origin::File { path, line } => format!("{path}:{line}"),
                    other => other.to_string(),
                };
                let name = Path::new(p)
                    .file_name()
                    .map_or(p.into(), OsStr::to_string_lossy);
                programs.push(DeniedProgram {
                    pattern: p.to_string(),
                    line: format!(
                        "{LINE_START}{name}{LINE_MIDDLE}{:?} (layer {}, {origin})",
                        by.pattern(),
                        by.layer()
                    ),
                    layer: by.layer().to_string(),
                    origin,
                });
            }
        }
        DeniedPrograms {
            programs,
            found: Mutex::default(),
            dir: Mutex::default(),
        }
    }

    /// What covers the denied programs for a box whose `PATH` is `path`: found again only
    /// when it changed. `None` when nothing is denied, or no stub can be made here.
    pub(crate) fn stubs(&self, path: Option<&OsStr>) -> Option<Arc<StubSet>> {
        if self.programs.is_empty() {
            return None;
        }
        let path = path.unwrap_or_default();
        let mut found = self.found.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((was, set)) = found.as_ref()
            && was == path
        {
            return Some(set.clone());
        }
        let dir = self.written()?;
        let files = Files::scan(&dirs(path));
        let stubs = self
            .programs
            .iter()
            .enumerate()
            .map(|(i, d)| (OsString::from(i.to_string()), files.of(&d.pattern)))
            .filter(|(_, targets)| !targets.is_empty())
            .collect();
        let set = Arc::new(StubSet { dir, stubs });
        *found = Some((path.to_owned(), set.clone()));
        Some(set)
    }

    /// The stub directory, written at the first call: one stub per program, by its index.
    fn written(&self) -> Option<PathBuf> {
        use std::hash::{BuildHasher, RandomState};
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        let mut dir = self.dir.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = dir.as_ref() {
            return Some(d.clone());
        }
        let salt = RandomState::new().hash_one(std::process::id());
        let made = super::temp::temp_base().join(format!("stubs-{salt:016x}"));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(&made)
            .ok()?;
        for (i, d) in self.programs.iter().enumerate() {
            let file = made.join(i.to_string());
            let image = corral_sys::program_stubs::stub_image(&d.line)?;
            std::fs::write(&file, image).ok()?;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o555)).ok()?;
        }
        *dir = Some(made.clone());
        Some(made)
    }
}

/// The directories looked in: the absolute ones of `path`, then the system's, each once.
fn dirs(path: &OsStr) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let listed = std::env::split_paths(path).filter(|d| d.is_absolute());
    for d in listed.chain(SYSTEM_DIRS.iter().map(PathBuf::from)) {
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// Every executable file the directories hold, by (device, inode): the names each has
/// there, and where each name leads.
#[derive(Debug, Default)]
struct Files {
    dirs: Vec<PathBuf>,
    by_id: BTreeMap<(u64, u64), (BTreeSet<OsString>, BTreeSet<PathBuf>)>,
}

impl Files {
    fn scan(dirs: &[PathBuf]) -> Files {
        let mut files = Files {
            dirs: dirs.to_vec(),
            ..Files::default()
        };
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(meta) = std::fs::metadata(&path) else {
                    continue;
                };
                if !meta.is_file() {
                    continue;
                }
                let Ok(real) = path.canonicalize() else {
                    continue;
                };
                let (names, paths) = files.by_id.entry((meta.dev(), meta.ino())).or_default();
                names.insert(entry.file_name());
                paths.insert(real);
            }
        }
        files
    }

    /// The files `pattern` (a name or an absolute path) names, where they lie; none for a
    /// multi-call binary.
    fn of(&self, pattern: &str) -> Vec<PathBuf> {
        let named: Vec<PathBuf> = if pattern.starts_with('/') {
            vec![PathBuf::from(pattern)]
        } else {
            self.dirs.iter().map(|d| d.join(pattern)).collect()
        };
        let mut out = BTreeSet::new();
        for path in named {
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            match self.by_id.get(&(meta.dev(), meta.ino())) {
                Some((names, _)) if names.len() > MULTI_CALL_NAMES => {}
                Some((_, paths)) => out.extend(paths.iter().cloned()),
                None => out.extend(path.canonicalize().ok()),
            }
        }
        out.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_of_one_word_names_a_program_and_a_pattern_does_not() {
        let policy = Policy::permissive()
            .layer("operator")
            .deny_exec("rm")
            .deny_exec("git push*")
            .deny_exec("/usr/bin/curl");
        let denied = DeniedPrograms::of(&policy);
        let patterns: Vec<&str> = denied.programs.iter().map(|d| d.pattern.as_str()).collect();
        assert_eq!(patterns, ["rm", "/usr/bin/curl"]);
        assert_eq!(
            denied.programs[0].line,
            r#"corral: rm is denied here by rule "rm" (layer operator, library)"#
        );
    }

    #[test]
    fn a_later_allow_leaves_the_program_to_start() {
        let policy = Policy::permissive()
            .layer("operator")
            .deny_exec("rm")
            .layer("project")
            .allow_exec("rm");
        let denied = DeniedPrograms::of(&policy);
        let allowed = policy.check(Act::Exec, "rm").effect != Effect::Deny;
        assert_eq!(denied.programs.is_empty(), allowed);
    }
}
