//! The operating-system edge of corral.
//!
//! Everything here is a thin, documented wrapper over one kernel facility that the
//! library needs to start, watch and end processes. This is the only corral crate allowed
//! `unsafe` code; each block carries a `// SAFETY:` note, and nothing that runs between
//! `fork` and `exec` allocates, logs or takes a lock.
//!
//! - [`group`]: signal a process group, ask whether anything is left in it, list who is.
//! - [`pidfd`]: a file descriptor that becomes readable when a process exits, so one
//!   `poll` can wait for output and for the exit at the same time.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod group;
pub mod pidfd;

pub use rustix::process::Signal;
