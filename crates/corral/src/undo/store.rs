//! The blob store: every recorded file's content once, named by its SHA-256, under
//! `undo/blobs/` in corral's state directory (beside the trace, hidden from the box as
//! the trace is). A blob is written to a temporary name and renamed into place, so a
//! blob that exists is whole.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use sha2::{Digest, Sha256};

/// A content hash, as lowercase hex.
pub(crate) type Hash = String;

/// The blob store at one directory.
#[derive(Debug, Clone)]
pub(crate) struct Blobs {
    dir: PathBuf,
    /// What this run's records may add to it, when bounded.
    budget: Option<Arc<StoreBudget>>,
}

/// What one run's records may add to the store (`[undo] store_max_mb`), and what they
/// added. A blob that would pass it is first made room for by [`Room`] (the run's oldest
/// records given up); where none can be made, it is not written (its content is still
/// read, to learn whether it is stored already), and the record fails with
/// [`OverStoreBudget`].
#[derive(Debug)]
pub(crate) struct StoreBudget {
    limit: u64,
    used: AtomicU64,
    /// The blobs this run wrote, with their lengths: what giving up its records frees.
    written: Mutex<HashMap<Hash, u64>>,
    /// What the record being made has named so far: never removed to make room for it.
    naming: Mutex<HashSet<Hash>>,
    /// What gives up the run's oldest records, once the run has a trace to give them up in.
    room: OnceLock<Arc<dyn Room>>,
}

/// Makes room in a run's budget by giving up its oldest records (see `budget`).
pub(crate) trait Room: Send + Sync + std::fmt::Debug {
    /// Give up records of the run, oldest first, until `need` more bytes fit in `blobs`'
    /// budget; whether they do now.
    fn make(&self, blobs: &Blobs, need: u64) -> bool;
}

/// The default budget per run, besides a tenth of the free space: 1024 MB.
pub(crate) const DEFAULT_STORE_MAX: u64 = 1024 * 1_000_000;

/// Why a record was skipped: one of its files is larger than the run's whole budget, or
/// the budget is reached and no older record of the run could be given up for it.
#[derive(Debug, thiserror::Error)]
#[error(
    "{} this run's undo store budget (`[undo] store_max_mb` = {} MB; a policy file raises \
     it), so the record was skipped and nothing past the budget written",
    match .whole { true => "it alone is larger than", false => "no older record of this run could be given up to keep it within" },
    .limit / 1_000_000
)]
pub(crate) struct OverStoreBudget {
    pub limit: u64,
    /// The one blob is larger than the whole budget.
    pub whole: bool,
}

/// How one attempt at storing a blob ended.
enum Put {
    Stored(Hash, u64),
    /// Past the room left; its hash and length, nothing of it kept.
    Over(u64),
}

impl Blobs {
    pub(crate) fn new(dir: PathBuf) -> Blobs {
        Blobs { dir, budget: None }
    }

    /// The store with a budget of `limit` bytes for what this run adds.
    pub(crate) fn with_budget(mut self, limit: u64) -> Blobs {
        self.budget = Some(Arc::new(StoreBudget {
            limit,
            used: AtomicU64::new(0),
            written: Mutex::default(),
            naming: Mutex::default(),
            room: OnceLock::new(),
        }));
        self
    }

    /// Give up the run's oldest records through `room` when the budget is reached.
    pub(crate) fn making_room(&self, room: Arc<dyn Room>) {
        if let Some(budget) = &self.budget {
            let _ = budget.room.set(room);
        }
    }

    /// The run's budget, in bytes, and what its records hold now.
    pub(crate) fn budget(&self) -> Option<(u64, u64)> {
        let b = self.budget.as_ref()?;
        Some((b.limit, b.used.load(Ordering::Relaxed)))
    }

    /// A record starts: what it names from now on is kept while room is made for it.
    pub(crate) fn begin_record(&self) {
        if let Some(b) = &self.budget {
            lock(&b.naming).clear();
        }
    }

    /// Whether the record being made named `hash`.
    pub(crate) fn naming(&self, hash: &str) -> bool {
        self.budget
            .as_ref()
            .is_some_and(|b| lock(&b.naming).contains(hash))
    }

    /// Remove the blob `hash` when this run wrote it, giving its bytes back to the
    /// budget; the bytes removed. The caller knows nothing names it (see `budget`).
    pub(crate) fn remove_written(&self, hash: &str) -> io::Result<u64> {
        let Some(b) = &self.budget else { return Ok(0) };
        let Some(len) = lock(&b.written).get(hash).copied() else {
            return Ok(0);
        };
        remove_blob(&self.path(hash))?;
        lock(&b.written).remove(hash);
        b.used.fetch_sub(len, Ordering::Relaxed);
        Ok(len)
    }

    /// The budget a run gets when no policy file sets one: [`DEFAULT_STORE_MAX`], or a
    /// tenth of the free space of the filesystem of `dir` now, whichever is less.
    pub(crate) fn default_budget(dir: &Path) -> u64 {
        let free = free_bytes(dir).or_else(|| free_bytes(dir.parent()?));
        free.map_or(DEFAULT_STORE_MAX, |free| (free / 10).min(DEFAULT_STORE_MAX))
    }

    fn path(&self, hash: &str) -> PathBuf {
        let (fan, rest) = hash.split_at(2.min(hash.len()));
        self.dir.join(fan).join(rest)
    }

    /// Whether the blob `hash` is stored.
    #[cfg(test)]
    pub(crate) fn has(&self, hash: &str) -> bool {
        self.path(hash).exists()
    }

    /// Store what `file` holds from its start (a file, or a symlink's target text); its
    /// hash and length. On an error (a read, a full disk) the temporary file is removed:
    /// a record that fails leaves nothing behind. Where the run's budget has no room for
    /// a new blob, its oldest records are given up for it and `file` read again.
    pub(crate) fn put(&self, file: impl Read + Seek) -> io::Result<(Hash, u64)> {
        self.put_writing(file, |out| out)
    }

    /// [`Blobs::put`], writing the temporary file through what `wrap` makes of it (a test
    /// makes a writer that fails as a full disk does).
    fn put_writing<W: Write>(
        &self,
        mut file: impl Read + Seek,
        wrap: impl Fn(File) -> W,
    ) -> io::Result<(Hash, u64)> {
        let len = match self.put_once(&mut file, &wrap)? {
            Put::Stored(hash, len) => return Ok((hash, len)),
            Put::Over(len) => len,
        };
        let over = |whole| {
            let limit = self.budget.as_ref().map_or(0, |b| b.limit);
            io::Error::other(OverStoreBudget { limit, whole })
        };
        let Some(budget) = &self.budget else {
            return Err(over(false));
        };
        if len > budget.limit {
            return Err(over(true));
        }
        let made = budget.room.get().is_some_and(|room| room.make(self, len));
        if !made {
            return Err(over(false));
        }
        file.rewind()?;
        match self.put_once(&mut file, &wrap)? {
            Put::Stored(hash, len) => Ok((hash, len)),
            Put::Over(..) => Err(over(false)),
        }
    }

    /// One attempt at storing `file`.
    fn put_once<W: Write>(&self, file: impl Read, wrap: impl Fn(File) -> W) -> io::Result<Put> {
        std::fs::create_dir_all(&self.dir)?;
        let (temp, out) = tempfile_in(&self.dir)?;
        let put = self.put_through(file, wrap(out), &temp);
        if !matches!(put, Ok(Put::Stored(..))) {
            let _ = std::fs::remove_file(&temp);
        }
        put
    }

    /// [`Blobs::put`] through the temporary file `out` at `temp`.
    fn put_through(
        &self,
        mut file: impl Read,
        mut out: impl Write,
        temp: &Path,
    ) -> io::Result<Put> {
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 64 * 1024];
        let mut len = 0u64;
        // Past the budget nothing more is written; the rest is only hashed.
        let room = self
            .budget
            .as_ref()
            .map(|b| b.limit.saturating_sub(b.used.load(Ordering::Relaxed)));
        let mut over = false;
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            hasher.update(&buf[..n]);
            len += n as u64;
            over = over || room.is_some_and(|room| len > room);
            if !over {
                out.write_all(&buf[..n])?;
            }
        }
        drop(out);
        let hash = hex(&hasher.finalize());
        if let Some(b) = &self.budget {
            lock(&b.naming).insert(hash.clone());
        }
        let to = self.path(&hash);
        if to.exists() {
            // No prune removes it while this record goes on: the record holds the
            // store's lock (see `Held`), and a run's own prune keeps what it names.
            let _ = std::fs::remove_file(temp);
        } else if over {
            return Ok(Put::Over(len));
        } else {
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::rename(temp, &to)?;
            if let Some(budget) = &self.budget {
                budget.used.fetch_add(len, Ordering::Relaxed);
                lock(&budget.written).insert(hash.clone(), len);
            }
        }
        Ok(Put::Stored(hash, len))
    }

    /// The blob `hash`, whole.
    pub(crate) fn get(&self, hash: &str) -> io::Result<Vec<u8>> {
        std::fs::read(self.path(hash))
    }

    /// The last `n` bytes of the blob `hash` (all of it when shorter).
    pub(crate) fn tail(&self, hash: &str, n: usize) -> io::Result<Vec<u8>> {
        use std::io::SeekFrom;
        let mut file = File::open(self.path(hash))?;
        let len = file.metadata()?.len();
        file.seek(SeekFrom::Start(len.saturating_sub(n as u64)))?;
        let mut out = Vec::with_capacity(n);
        file.read_to_end(&mut out)?;
        Ok(out)
    }
}

/// The store's lock (`undo/lock`), held through an open file of its own: shared by a
/// record from the start of its walk until what it names is written (its tree, and the
/// step's rows), exclusive while a prune decides what is named and removes the rest. So
/// no blob a record is naming is removed under it, in this process or in another.
#[derive(Debug)]
pub(crate) struct Held(#[allow(dead_code)] File);

impl Held {
    /// Take the lock of the store in `dir`, shared or `exclusive`; with `wait` false, `None`
    /// at once when it is held the other way.
    pub(crate) fn take(dir: &Path, exclusive: bool, wait: bool) -> io::Result<Option<Held>> {
        use rustix::fs::FlockOperation as Op;
        std::fs::create_dir_all(dir)?;
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join("lock"))?;
        let op = match (exclusive, wait) {
            (true, true) => Op::LockExclusive,
            (true, false) => Op::NonBlockingLockExclusive,
            (false, true) => Op::LockShared,
            (false, false) => Op::NonBlockingLockShared,
        };
        loop {
            match rustix::fs::flock(&file, op) {
                Ok(()) => return Ok(Some(Held(file))),
                Err(rustix::io::Errno::INTR) => continue,
                Err(rustix::io::Errno::WOULDBLOCK) if !wait => return Ok(None),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Remove the blob file at `path` (a run's own prune, or the sweep of what no record
/// names); its length, or `None` when it was gone already.
pub(crate) fn remove_blob(path: &Path) -> io::Result<Option<u64>> {
    let gone = |e: &io::Error| e.kind() == io::ErrorKind::NotFound;
    let len = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta.len(),
        Err(e) if gone(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    match std::fs::remove_file(path) {
        Ok(()) => Ok(Some(len)),
        Err(e) if gone(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The bytes an unprivileged writer may still write on the filesystem of `dir`; `None`
/// when it cannot be told.
pub(crate) fn free_bytes(dir: &Path) -> Option<u64> {
    let stat = rustix::fs::statvfs(dir).ok()?;
    Some(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// A new file in `dir` with a name no one else picked.
fn tempfile_in(dir: &Path) -> io::Result<(PathBuf, File)> {
    use std::hash::{BuildHasher, RandomState};
    for n in 0u32..16 {
        let salt = RandomState::new().hash_one((std::process::id(), n));
        let path = dir.join(format!(".put-{salt:016x}"));
        match File::options().write(true).create_new(true).open(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free temporary name in the blob store"))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file that takes `room` bytes, then fails as a full disk does.
    struct Full {
        file: File,
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::from(io::ErrorKind::StorageFull));
            }
            let n = self.file.write(&buf[..buf.len().min(self.room)])?;
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            self.file.flush()
        }
    }

    fn left(dir: &Path) -> Vec<std::ffi::OsString> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect()
    }

    #[test]
    fn a_write_that_fails_leaves_no_temporary_file() {
        let state = tempfile::tempdir().unwrap();
        let blobs = Blobs::new(state.path().join("blobs"));
        let content = vec![7u8; 300 * 1024];
        let err = blobs
            .put_writing(io::Cursor::new(&content[..]), |file| Full {
                file,
                room: 100 * 1024,
            })
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
        assert_eq!(
            left(&state.path().join("blobs")),
            Vec::<std::ffi::OsString>::new()
        );
        // The same content, with room, is stored whole.
        let (hash, len) = blobs.put(io::Cursor::new(&content[..])).unwrap();
        assert_eq!(len, content.len() as u64);
        assert_eq!(blobs.get(&hash).unwrap(), content);
    }

    #[test]
    fn a_blob_past_the_run_s_budget_is_not_written_and_one_stored_already_passes() {
        let state = tempfile::tempdir().unwrap();
        let blobs = Blobs::new(state.path().join("blobs")).with_budget(1000);
        let (first, _) = blobs.put(io::Cursor::new(&[1u8; 600][..])).unwrap();
        // No trace to give records up in: the second is not written.
        let err = blobs.put(io::Cursor::new(&[2u8; 600][..])).unwrap_err();
        assert!(err.to_string().contains("store_max_mb` = 0 MB"), "{err}");
        assert!(
            err.get_ref()
                .is_some_and(|e| e.downcast_ref::<OverStoreBudget>().is_some())
        );
        // Only the first blob's fan and no temporary file.
        assert_eq!(left(&state.path().join("blobs")).len(), 1);
        // Content stored already costs nothing.
        assert_eq!(
            blobs.put(io::Cursor::new(&[1u8; 600][..])).unwrap().0,
            first
        );
        // A blob larger than the whole budget says so.
        let err = blobs.put(io::Cursor::new(&[3u8; 1001][..])).unwrap_err();
        assert!(err.to_string().contains("it alone is larger"), "{err}");
    }
}
