//! Denied programs held by Landlock where a box has no mount namespace to bind stubs in.
//!
//! A second Landlock layer, stacked on the box's own, handles `EXECUTE` and `READ_FILE`
//! and grants both everywhere but on the denied files: each directory on the way from `/`
//! to a denied file is opened up entry by entry (a directory that leads to no denied file
//! as a whole tree, a file of its own), and the denied files themselves are left out. A
//! denied program then cannot be executed, read or copied in the box, by any name: a
//! symlink resolves to the file the rule left out, and Landlock judges the file, not the
//! path. Symlinks among the entries get no rule (what they lead to has its own). An entry
//! made after the layer was built, in a directory on the way to a denied file (a new file
//! in `/usr/bin`), can be neither run nor read: the layer errs shut.
//!
//! The layer depends only on the denied files, so it is built once per set of them and
//! shared by every stage that asks for the same ([`ruleset`]).

use std::collections::BTreeSet;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use landlock::{AccessFs, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr};

use crate::program_stubs::StubSet;

/// The rights the layer handles.
fn rights() -> landlock::BitFlags<AccessFs> {
    AccessFs::Execute | AccessFs::ReadFile
}

/// A built layer: the ruleset and how many files it leaves out.
#[derive(Debug, Clone)]
pub(crate) struct ExecLayer {
    pub ruleset: Arc<OwnedFd>,
    pub denied: usize,
}

/// The layer that keeps `set`'s targets from running and from being read, built once for
/// each set of targets; `None` when there is nothing to deny, or when a directory on the
/// way to one cannot be listed (the layer would take more than it should).
pub(crate) fn ruleset(set: &StubSet) -> io::Result<Option<ExecLayer>> {
    static BUILT: Mutex<Option<(BTreeSet<PathBuf>, Option<ExecLayer>)>> = Mutex::new(None);
    let denied: BTreeSet<PathBuf> = set
        .stubs
        .iter()
        .flat_map(|(_, targets)| targets.iter().cloned())
        .collect();
    if denied.is_empty() {
        return Ok(None);
    }
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((was, layer)) = built.as_ref()
        && *was == denied
    {
        return Ok(layer.clone());
    }
    let layer = build(&denied)?.map(|fd| ExecLayer {
        ruleset: Arc::new(fd),
        denied: denied.len(),
    });
    *built = Some((denied, layer.clone()));
    Ok(layer)
}

/// The grants for `denied` (absolute paths of real files), in a new ruleset.
fn build(denied: &BTreeSet<PathBuf>) -> io::Result<Option<OwnedFd>> {
    let Some(grants) = grants(denied) else {
        return Ok(None);
    };
    let other = |e: landlock::RulesetError| io::Error::other(e.to_string());
    let mut ruleset = Ruleset::default()
        .handle_access(rights())
        .map_err(other)?
        .create()
        .map_err(other)?;
    for path in grants {
        // A path that went away since it was listed: nothing there to grant.
        let Ok(fd) = PathFd::new(&path) else {
            continue;
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, rights()))
            .map_err(other)?;
    }
    Ok(ruleset.into())
}

/// Every path that gets the rights: the entries of each directory on the way to a denied
/// file, but the denied files, the directories on the way (whose own entries are listed
/// in turn) and symlinks. `None` when a directory on the way cannot be listed.
fn grants(denied: &BTreeSet<PathBuf>) -> Option<Vec<PathBuf>> {
    let on_the_way: BTreeSet<&Path> = denied.iter().flat_map(|p| p.ancestors().skip(1)).collect();
    let mut out = Vec::new();
    for dir in &on_the_way {
        for entry in std::fs::read_dir(dir).ok()? {
            let entry = entry.ok()?;
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() || denied.contains(&path) || on_the_way.contains(path.as_path()) {
                continue;
            }
            out.push(path);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grants_skip_the_denied_file_its_ancestors_and_links() {
        let dir = std::env::temp_dir().join(format!("corral-exec-layer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let root = dir.canonicalize().unwrap();
        let bin = root.join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::fs::write(bin.join("rm"), "x").unwrap();
        std::fs::write(bin.join("ls"), "x").unwrap();
        std::os::unix::fs::symlink("rm", bin.join("del")).unwrap();
        std::fs::create_dir(root.join("lib")).unwrap();
        let denied = BTreeSet::from([bin.join("rm")]);
        let grants: BTreeSet<PathBuf> = grants(&denied).unwrap().into_iter().collect();
        assert!(grants.contains(&bin.join("ls")));
        assert!(grants.contains(&root.join("lib")));
        for never in [bin.join("rm"), bin.join("del"), bin.clone(), root.clone()] {
            assert!(!grants.contains(&never), "{never:?} granted");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
