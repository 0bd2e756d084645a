//! What a recorded entry is: a regular file (its content), a symlink (its target's text,
//! never followed) or an empty directory. The kind is in the entry's mode, as `lstat`
//! gives it; a mode with no type bits is a regular file's.

/// The type bits of a mode.
const TYPE: u32 = 0o170000;
const LINK: u32 = 0o120000;
const DIR: u32 = 0o040000;

/// The hash an empty directory is recorded with: it has no content.
pub(crate) const DIR_HASH: &str = "dir";

/// The hash of an entry that changed while it was recorded (its directory swapped, a
/// FIFO or another file put in its place between the listing and the read): its content
/// is not known, so no undo writes it back (see `walk`).
pub(crate) const CHANGING_HASH: &str = "changing";

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Link,
    Dir,
}

impl Kind {
    /// The kind `mode` says.
    pub(crate) fn of(mode: u32) -> Kind {
        match mode & TYPE {
            LINK => Kind::Link,
            DIR => Kind::Dir,
            _ => Kind::File,
        }
    }
}

/// The mode an entry of `kind` is recorded with: its type and permission bits.
pub(crate) fn mode(kind: Kind, permissions: u32) -> u32 {
    let bits = match kind {
        Kind::File => 0o100000,
        Kind::Link => LINK,
        Kind::Dir => DIR,
    };
    bits | (permissions & 0o7777)
}
