//! A record of the workspace: every recorded file's path (relative to the root), content
//! hash and mode, with what `lstat` said of it, so a later walk reads only the files
//! whose size, times or inode changed. The newest one of each workspace is kept on disk
//! (`undo/trees/`), so a process that opens a run for one call starts from it.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::Path;

use super::store::Hash;

/// One recorded file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
    /// The permission bits.
    pub mode: u32,
    pub hash: Hash,
}

impl Entry {
    /// Whether `lstat` says the same of the file as when it was recorded.
    pub(crate) fn same_stat(&self, other: &Entry) -> bool {
        (self.size, self.mtime_ns, self.ctime_ns, self.ino, self.mode)
            == (
                other.size,
                other.mtime_ns,
                other.ctime_ns,
                other.ino,
                other.mode,
            )
    }
}

/// Every recorded file, by its path relative to the root, as bytes: compared as bytes,
/// which is what makes a walk of an unchanged workspace cheap (a `PathBuf` compares
/// component by component).
pub(crate) type Tree = BTreeMap<Vec<u8>, Entry>;

/// Version 2: modes carry the entry's type (symlinks and empty directories are recorded).
const MAGIC: &[u8] = b"corral-tree 2\n";

/// Write `tree` to `path` whole (a temporary file renamed over it).
pub(crate) fn save(path: &Path, tree: &Tree) -> io::Result<()> {
    let mut out = Vec::with_capacity(tree.len() * 128);
    out.extend_from_slice(MAGIC);
    for (p, e) in tree {
        let bytes = p.as_slice();
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
        out.extend_from_slice(&e.size.to_le_bytes());
        out.extend_from_slice(&e.mtime_ns.to_le_bytes());
        out.extend_from_slice(&e.ctime_ns.to_le_bytes());
        out.extend_from_slice(&e.ino.to_le_bytes());
        out.extend_from_slice(&e.mode.to_le_bytes());
        out.extend_from_slice(&(e.hash.len() as u32).to_le_bytes());
        out.extend_from_slice(e.hash.as_bytes());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".{}", std::process::id()));
    let mut f = std::fs::File::create(&temp)?;
    f.write_all(&out)?;
    drop(f);
    std::fs::rename(&temp, path)
}

/// The tree at `path`; empty when there is none or it cannot be read (it is a cache:
/// what it lacks is read from the files again).
pub(crate) fn load(path: &Path) -> Tree {
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut bytes));
    if read.is_err() || !bytes.starts_with(MAGIC) {
        return Tree::new();
    }
    parse(&bytes[MAGIC.len()..]).unwrap_or_default()
}

fn parse(mut b: &[u8]) -> Option<Tree> {
    fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (b.get(..n)?, b.get(n..)?);
        *b = rest;
        Some(head)
    }
    fn u32_(b: &mut &[u8]) -> Option<u32> {
        Some(u32::from_le_bytes(take(b, 4)?.try_into().ok()?))
    }
    fn u64_(b: &mut &[u8]) -> Option<u64> {
        Some(u64::from_le_bytes(take(b, 8)?.try_into().ok()?))
    }
    let mut tree = Tree::new();
    while !b.is_empty() {
        let n = u32_(&mut b)? as usize;
        let path = take(&mut b, n)?.to_vec();
        let size = u64_(&mut b)?;
        let mtime_ns = u64_(&mut b)? as i64;
        let ctime_ns = u64_(&mut b)? as i64;
        let ino = u64_(&mut b)?;
        let mode = u32_(&mut b)?;
        let n = u32_(&mut b)? as usize;
        let hash = String::from_utf8(take(&mut b, n)?.to_vec()).ok()?;
        tree.insert(
            path,
            Entry {
                size,
                mtime_ns,
                ctime_ns,
                ino,
                mode,
                hash,
            },
        );
    }
    Some(tree)
}

/// What one step did to the files: its records before and after, compared.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Changes {
    pub added: Vec<Vec<u8>>,
    pub modified: Vec<Vec<u8>>,
    pub deleted: Vec<Vec<u8>>,
}

/// Compare two records by content and mode: one pass over both, in path order.
pub(crate) fn diff(before: &Tree, after: &Tree) -> Changes {
    use std::cmp::Ordering;
    let mut c = Changes::default();
    let (mut b, mut a) = (before.iter().peekable(), after.iter().peekable());
    loop {
        match (b.peek(), a.peek()) {
            (None, None) => return c,
            (Some((p, _)), None) => {
                c.deleted.push((*p).clone());
                b.next();
            }
            (None, Some((p, _))) => {
                c.added.push((*p).clone());
                a.next();
            }
            (Some((pb, eb)), Some((pa, ea))) => match pb.cmp(pa) {
                Ordering::Less => {
                    c.deleted.push((*pb).clone());
                    b.next();
                }
                Ordering::Greater => {
                    c.added.push((*pa).clone());
                    a.next();
                }
                Ordering::Equal => {
                    if (&eb.hash, eb.mode) != (&ea.hash, ea.mode) {
                        c.modified.push((*pb).clone());
                    }
                    b.next();
                    a.next();
                }
            },
        }
    }
}
