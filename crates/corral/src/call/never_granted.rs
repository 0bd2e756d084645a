//! The paths a rerun never makes writable, whoever would approve it: corral's own files
//! (what records a call and what decides for it), and the places the person's machine runs
//! programs from on its own, where a command given the write could leave one that runs
//! outside the box: the directories on corral's `PATH` (derived from the environment: a
//! program put there runs in place of the one the person meant) and the files a shell or a
//! session runs at its start ([`RUN_AT_START`], the one list of them).

use std::path::{Path, PathBuf};

use crate::sandbox::denied::RUN_AT_START;

/// Why making `grant` writable is never offered, if it is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Never {
    /// It holds corral's policy, trust or trace.
    CorralOwn,
    /// The person's machine runs what is put there on its own: the place, and how.
    RunsOnItsOwn { place: PathBuf, how: String },
}

impl Never {
    /// Why, and what the person can do instead.
    pub(crate) fn explain(&self, grant: &Path) -> String {
        match self {
            Never::CorralOwn => format!(
                "{} holds corral's own policy, trust or trace, which no command may write, so \
                 no rerun is offered: change it yourself, outside corral",
                grant.display()
            ),
            Never::RunsOnItsOwn { place, how } => format!(
                "making {} writable would let the command leave a program that runs on your \
                 machine outside the sandbox ({}: {how}), so no rerun is offered: change it \
                 yourself, outside corral",
                grant.display(),
                place.display()
            ),
        }
    }
}

/// Why `grant` is never made writable for a rerun, given corral's own files `own`, the
/// home and the `PATH` corral runs with; `None` where a person may approve it.
pub(crate) fn never(
    grant: &Path,
    own: &[PathBuf],
    home: Option<&Path>,
    path_var: Option<&std::ffi::OsStr>,
) -> Option<Never> {
    let grant = grant.canonicalize().unwrap_or_else(|_| grant.to_path_buf());
    // Writing a directory replaces what is in it: a grant that holds one of corral's
    // files (or is one) would open it. A grant beside them opens nothing of theirs.
    if own.iter().any(|o| o.starts_with(&grant)) {
        return Some(Never::CorralOwn);
    }
    let meets = |place: &Path| place.starts_with(&grant) || grant.starts_with(place);
    let on_path = path_var
        .into_iter()
        .flat_map(std::env::split_paths)
        .filter(|p| p.is_absolute())
        .map(|p| p.canonicalize().unwrap_or(p));
    for place in on_path {
        if meets(&place) {
            return Some(Never::RunsOnItsOwn {
                how: "a directory on your PATH: a program put there runs in place of the one \
                      you meant"
                    .into(),
                place,
            });
        }
    }
    let home = home?;
    RUN_AT_START.iter().find_map(|(below, how)| {
        let place = home.join(below);
        let place = place.canonicalize().unwrap_or(place);
        meets(&place).then(|| Never::RunsOnItsOwn {
            place,
            how: (*how).to_string(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().canonicalize().unwrap().join("home");
        std::fs::create_dir_all(&home).unwrap();
        (dir, home)
    }

    #[test]
    fn every_start_up_row_is_never_granted_nor_what_holds_or_lies_in_it() {
        let (_d, home) = dirs();
        for (below, how) in RUN_AT_START {
            let place = home.join(below);
            for grant in [place.clone(), place.join("x/y")] {
                let never = never(&grant, &[], Some(&home), None);
                assert!(
                    matches!(&never, Some(Never::RunsOnItsOwn { how: h, .. }) if h == how),
                    "{below}: {never:?}"
                );
            }
        }
        // The home itself holds them all.
        assert!(never(&home, &[], Some(&home), None).is_some());
        // A project beside them is offered.
        assert_eq!(
            never(&home.join("src/project"), &[], Some(&home), None),
            None
        );
    }

    #[test]
    fn a_directory_on_the_path_is_never_granted() {
        let (d, home) = dirs();
        let bin = home.join(".local/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let path = std::env::join_paths([bin.clone(), PathBuf::from("relative/bin")]).unwrap();
        for grant in [bin.clone(), home.join(".local"), bin.join("new")] {
            let never = never(&grant, &[], None, Some(&path));
            assert!(
                matches!(&never, Some(Never::RunsOnItsOwn { place, .. }) if *place == bin),
                "{grant:?}: {never:?}"
            );
        }
        // A relative entry names no place; a sibling of the PATH's directory is offered.
        let other = d.path().canonicalize().unwrap().join("other");
        assert_eq!(never(&other, &[], None, Some(&path)), None);
    }

    #[test]
    fn a_directory_beside_corral_s_files_is_offered_and_theirs_is_not() {
        let (d, _) = dirs();
        let base = d.path().canonicalize().unwrap();
        let own = [base.join("trace.db"), base.join("trace.db-wal")];
        assert_eq!(never(&base.join("outside"), &own, None, None), None);
        assert_eq!(never(&base, &own, None, None), Some(Never::CorralOwn));
        assert_eq!(
            never(&base.join("trace.db"), &own, None, None),
            Some(Never::CorralOwn)
        );
    }
}
