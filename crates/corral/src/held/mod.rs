//! Held changes: what a call wrote to a file the host runs on its own, kept for the person
//! instead of left in the workspace.
//!
//! Host programs run some workspace files without anyone typing a command: git hooks and
//! config, an agent client's settings and hooks, an editor's tasks, a toolchain file. A
//! call may write them as it writes anything else, but the workspace keeps the person's
//! version, and what the call wrote waits here until the person applies it (`corral review
//! apply ID`) or drops it. The model never reads or applies a held change itself.
//!
//! # Theory of operation
//!
//! **Storage.** `held/RUN/STEP/N/` in corral's state directory (beside the trace, hidden
//! from every box as `quarantine/` is): `meta.json` says which file of which workspace and
//! what runs it; `base` is the person's version when the call started (absent when there
//! was no file) and `held` is the box's (absent when the call removed the file). `meta.json`
//! is written last, so an entry without it is one being made and is not listed. The ID is
//! `RUN-STEP-N`; a run id holds `-` itself, so an ID is read from the right.
//!
//! **The same change again.** A handle is swept more than once; a file it changed again is
//! held by the same run, step and path, and [`HeldStore::hold`] updates that entry instead
//! of adding one.
//!
//! **Applying.** [`HeldStore::apply`] writes the held version only while the file is still
//! the person's version the call started from (compared by SHA-256; absent matches
//! absent). Otherwise it refuses with a [`Conflict`] carrying the three versions, and
//! changes nothing. The write goes through a descriptor of the workspace (`beneath.rs`, as
//! undo's restorer writes): the path is the model's choice, and a symlink planted in its
//! parents is never followed. Set-ID and sticky bits are never kept: a held file's mode is
//! its permission bits (`0o777`) alone.
//!
//! **Showing.** [`HeldStore::diff`] is a unified diff from the base to the held version,
//! every line through the one renderer ([`crate::person`]); binary content is summarised
//! and a huge one is not read into the diff at all.

mod disk;
mod error;
mod show;
mod store;
mod workspace;

pub use error::HeldError;
pub use show::Change;
pub use store::{Held, HeldStore, NewHeld};
pub use workspace::{Applied, AppliedAs, Conflict, Version};

/// The entry's files, in its directory.
const META: &str = "meta.json";
const BASE: &str = "base";
const HELD: &str = "held";
