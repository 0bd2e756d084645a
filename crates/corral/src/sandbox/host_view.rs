//! What a run's boxes read of the host's files to be built, read once per run.
//!
//! Every sandboxed call needs the same few facts about the host: the home the box covers
//! and what is put back of it (`super::home`), and the read denies expanded to the paths
//! they name now (globs listed, links resolved, other users' homes found). Read afresh,
//! they cost a few hundred `statx` and `readlink` calls per call, most of a later call's
//! sandbox cost once its mounts are shared. A [`HostView`] is read once and kept with the
//! run, stamped with every directory it was read from (the directory of each path looked
//! at, as named and as resolved, and the home). A later call looks at those directories
//! only (a dozen `statx`, by path, links followed) and reads the view again where one
//! changed: an entry added, removed or renamed changes its directory's modification
//! time; a directory above it swapped, for another or for a link, makes the path name
//! another directory. corral's own files and the workspace are where the run found them.
//!
//! A directory changed within the clock's grain of the look that stamped it could change
//! again unseen (timestamps move in ticks of a few milliseconds). As git does with its
//! index, a view with a stamp that recent is not trusted: the next call reads it again.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use super::{home, reach};
use crate::config::sandbox::SandboxConfig;

/// How recent a stamp may be for its view to be trusted by the next call: longer than the
/// coarsest tick filesystems keep times in (a jiffy at 100 Hz).
const GRAIN: Duration = Duration::from_millis(20);

/// The host as a run's boxes are built from it (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostView {
    /// The person's home as the box covers it (`home::covered`).
    pub home: Option<PathBuf>,
    /// What is put back of [`Self::home`], read-only (`home::put_back`).
    pub put_back: Vec<PathBuf>,
    /// Root's home when it is not the person's, covered as the home is
    /// (`home::other_home`), and what is put back of it: its toolchains.
    pub other_home: Option<(PathBuf, Vec<PathBuf>)>,
    /// What the read denies name: `deny_read` expanded, the paths outside the home
    /// (`reach::outside_the_home`) and corral's own files, canonical, sorted, once each.
    pub denied: Vec<PathBuf>,
    /// The workspace, canonical.
    pub workspace: PathBuf,
    /// Root's files only root may read, when corral runs as root (`reach::root_files`).
    pub by_mode: reach::root_files::Found,
    /// What the `PATH` and the active environment put back, and what they do not, with
    /// the reasons (`home::from_path`).
    pub from_path: home::from_path::Derived,
}

impl HostView {
    /// Read it now, for one look (a report), under `config` in `workspace`, with `own`
    /// corral's own files.
    pub(crate) fn now(config: &SandboxConfig, workspace: &Path, own: &[PathBuf]) -> HostView {
        HostView::read(&Key::of(config, workspace, own)).0
    }

    /// The read denies alone, as `config` names them now: for a report made without a
    /// workspace (no home covered, nothing of corral's, no workspace to keep readable).
    pub(crate) fn denies_only(config: &SandboxConfig) -> HostView {
        HostView {
            home: None,
            put_back: Vec::new(),
            other_home: None,
            denied: reach::expand(&config.deny_read, home().as_deref()),
            workspace: PathBuf::new(),
            by_mode: reach::root_files::found(Path::new("")),
            from_path: home::from_path::Derived::default(),
        }
    }

    /// Read it, and the directories it was read from.
    fn read(key: &Key) -> (HostView, Vec<PathBuf>) {
        let raw_home = key.home.as_deref().map(Path::new);
        let covered = home::covered_from(key.home.as_deref(), &key.home_read);
        let put_back = covered
            .as_deref()
            .map(|h| home::put_back(h, &key.home_read))
            .unwrap_or_default();
        let other_home = home::other_home(key.home.as_deref())
            .map(|root| (root.clone(), home::put_back(&root, &[])));
        let mut denied = reach::expand(&key.deny_read, raw_home);
        denied.extend(reach::outside_the_home(raw_home));
        denied.extend(key.own.iter().filter_map(|p| p.canonicalize().ok()));
        denied.sort();
        denied.dedup();
        let from_path = from_path(
            key,
            covered.as_deref(),
            other_home.as_ref(),
            &denied,
            &put_back,
        );
        let workspace = key
            .workspace
            .canonicalize()
            .unwrap_or_else(|_| key.workspace.clone());

        // The directories of every path looked at, as named and as found, and the home
        // itself. A directory is looked at by its path, links followed: a component
        // above it swapped (for a link, another directory) shows as another directory.
        let mut looked: Vec<PathBuf> = Vec::new();
        if let Some(h) = &covered {
            looked.extend(home::candidates(h, &key.home_read));
        }
        if let Some((root, _)) = &other_home {
            looked.extend(home::candidates(root, &[]));
        }
        looked.extend(reach::named(&key.deny_read, raw_home));
        looked.push(PathBuf::from("/etc/shadow"));
        looked.extend(put_back.iter().cloned());
        looked.extend(from_path.paths().cloned());
        looked.extend(denied.iter().filter(|p| !key.own.contains(p)).cloned());
        let mut dirs: Vec<PathBuf> = looked
            .iter()
            .filter_map(|p| p.parent())
            .filter(|d| !d.as_os_str().is_empty())
            .map(Path::to_path_buf)
            // Directories read whole: other users' homes are found in `/home`.
            .chain(raw_home.map(Path::to_path_buf))
            .chain(covered.clone())
            .chain(other_home.as_ref().map(|(root, _)| root.clone()))
            .chain(std::iter::once(PathBuf::from("/home")))
            .collect();
        dirs.sort();
        dirs.dedup();
        let by_mode = reach::root_files::found(&workspace);
        let view = HostView {
            home: covered,
            put_back,
            other_home,
            denied,
            workspace,
            by_mode,
            from_path,
        };
        (view, dirs)
    }
}

/// What `key`'s `PATH` and environment put back, where the box hides the host: the
/// homes it covers and its own `/tmp`.
fn from_path(
    key: &Key,
    covered: Option<&Path>,
    other_home: Option<&(PathBuf, Vec<PathBuf>)>,
    denied: &[PathBuf],
    put_back: &[PathBuf],
) -> home::from_path::Derived {
    let homes: Vec<PathBuf> = covered
        .map(Path::to_path_buf)
        .into_iter()
        .chain(other_home.map(|(root, _)| root.clone()))
        .collect();
    let already: Vec<PathBuf> = put_back
        .iter()
        .chain(other_home.iter().flat_map(|(_, back)| back))
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let tmp = Path::new(corral_sys::box_dirs::BOX_TMP).canonicalize();
    let hidden: Vec<PathBuf> = homes.iter().cloned().chain(tmp).collect();
    let hiding = home::from_path::Hiding {
        covered: &hidden,
        homes: &homes,
        denied,
        already: &already,
    };
    home::from_path::derive(&key.env, hiding)
}

/// What a view is read for: a call's configuration, its workspace, `$HOME` and corral's
/// own files.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    workspace: PathBuf,
    deny_read: Vec<String>,
    home_read: Vec<String>,
    home: Option<std::ffi::OsString>,
    own: Vec<PathBuf>,
    /// `PATH` and the active environment's variables.
    env: home::from_path::Env,
}

impl Key {
    fn of(config: &SandboxConfig, workspace: &Path, own: &[PathBuf]) -> Key {
        Key {
            workspace: workspace.to_path_buf(),
            deny_read: config.deny_read.clone(),
            home_read: config.home_read.clone(),
            home: std::env::var_os("HOME").filter(|h| !h.is_empty()),
            own: own.to_vec(),
            env: home::from_path::Env::now(),
        }
    }
}

/// A directory as last looked at: its identity, modification and change times.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    id: (u64, u64),
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Stamp {
    fn of(dir: &Path) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(dir).ok()?;
        Some(Stamp {
            id: (m.dev(), m.ino()),
            modified: (m.mtime(), m.mtime_nsec()),
            changed: (m.ctime(), m.ctime_nsec()),
        })
    }

    /// Whether it is within [`GRAIN`] of `now` (or after it).
    fn recent(&self, now: SystemTime) -> bool {
        let at = |(s, ns): (i64, i64)| {
            let s = u64::try_from(s).unwrap_or(0);
            let ns = u32::try_from(ns).unwrap_or(0);
            SystemTime::UNIX_EPOCH + Duration::new(s, ns)
        };
        let latest = at(self.modified).max(at(self.changed));
        latest + GRAIN >= now
    }
}

#[derive(Debug)]
struct Kept {
    key: Key,
    view: Arc<HostView>,
    stamps: Vec<(PathBuf, Option<Stamp>)>,
    /// A stamp was taken within the grain of a change: read again next time.
    unsettled: bool,
}

/// A run's [`HostView`], kept between its calls (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct ViewCache {
    kept: Mutex<Option<Kept>>,
}

impl ViewCache {
    /// The view for a call under `config` in `workspace`, with `own` corral's own files:
    /// the one kept, while every directory it was read from is as it was.
    pub(crate) fn get(
        &self,
        config: &SandboxConfig,
        workspace: &Path,
        own: &[PathBuf],
    ) -> Arc<HostView> {
        let key = Key::of(config, workspace, own);
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = kept.as_ref()
            && !k.unsettled
            && k.key == key
            && k.stamps.iter().all(|(dir, s)| Stamp::of(dir) == *s)
        {
            return Arc::clone(&k.view);
        }
        let (view, dirs) = HostView::read(&key);
        let now = SystemTime::now();
        let stamps: Vec<(PathBuf, Option<Stamp>)> = dirs
            .into_iter()
            .map(|d| {
                let s = Stamp::of(&d);
                (d, s)
            })
            .collect();
        let unsettled = stamps.iter().flat_map(|(_, s)| s).any(|s| s.recent(now));
        let view = Arc::new(view);
        *kept = Some(Kept {
            key,
            view: Arc::clone(&view),
            stamps,
            unsettled,
        });
        view
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(deny: &[&str]) -> SandboxConfig {
        SandboxConfig {
            deny_read: deny.iter().map(|s| s.to_string()).collect(),
            ..SandboxConfig::default()
        }
    }

    /// Wait until a change made now is older than the grain, so a view read after it is
    /// trusted (a condition on the clock, not a guess at a duration).
    fn past_the_grain() {
        let at = SystemTime::now() + GRAIN + Duration::from_millis(5);
        while SystemTime::now() < at {
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_view_is_kept_until_a_directory_it_was_read_from_changes() {
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("ws");
        let secrets = root.path().join("secrets");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&secrets).unwrap();
        std::fs::write(secrets.join("a.key"), "a").unwrap();
        let pattern = format!("{}/*.key", secrets.display());
        let config = config(&[&pattern]);
        past_the_grain();
        let cache = ViewCache::default();
        let first = cache.get(&config, &ws, &[]);
        assert!(
            first
                .denied
                .contains(&secrets.join("a.key").canonicalize().unwrap())
        );
        let again = cache.get(&config, &ws, &[]);
        assert!(
            Arc::ptr_eq(&first, &again),
            "nothing changed: the view is kept"
        );

        // A new file the glob names is seen by the next call.
        std::fs::write(secrets.join("b.key"), "b").unwrap();
        let after = cache.get(&config, &ws, &[]);
        assert!(
            after
                .denied
                .contains(&secrets.join("b.key").canonicalize().unwrap())
        );
    }

    #[test]
    fn a_directory_swapped_for_a_link_is_seen() {
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("ws");
        let inner = root.path().join("outer/inner");
        let elsewhere = root.path().join("elsewhere");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(inner.join("token"), "t").unwrap();
        std::fs::write(elsewhere.join("token"), "t").unwrap();
        let config = config(&[&format!("{}/token", inner.display())]);
        past_the_grain();
        let cache = ViewCache::default();
        let first = cache.get(&config, &ws, &[]);
        assert_eq!(
            first.denied.iter().filter(|p| p.ends_with("token")).count(),
            1
        );
        past_the_grain();
        // Two levels up from the named file: only the ancestors' stamps can tell.
        let outer = root.path().join("outer");
        std::fs::rename(&outer, root.path().join("old")).unwrap();
        std::fs::create_dir_all(&outer).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &inner).unwrap();
        let after = cache.get(&config, &ws, &[]);
        assert!(
            after
                .denied
                .contains(&elsewhere.join("token").canonicalize().unwrap()),
            "{:?}",
            after.denied
        );
    }

    #[test]
    fn a_view_read_within_the_grain_of_a_change_is_read_again() {
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        // The denied file's directory changed just now.
        let secrets = root.path().join("secrets");
        std::fs::create_dir_all(&secrets).unwrap();
        std::fs::write(secrets.join("a.key"), "a").unwrap();
        // Stamped ahead of the clock, so a loaded machine's delay before the look still
        // finds it within the grain (a time ahead counts as now).
        std::fs::File::open(&secrets)
            .unwrap()
            .set_modified(SystemTime::now() + Duration::from_secs(3600))
            .unwrap();
        let config = config(&[&format!("{}/*.key", secrets.display())]);
        let cache = ViewCache::default();
        let first = cache.get(&config, &ws, &[]);
        let unsettled = cache.kept.lock().unwrap().as_ref().unwrap().unsettled;
        assert!(unsettled);
        let second = cache.get(&config, &ws, &[]);
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(first, second);
    }
}
