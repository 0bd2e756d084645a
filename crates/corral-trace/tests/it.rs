//! Every integration test of this crate in one binary, one module per file: one link
//! instead of one per file.
//!
//! Apart, each in a binary of its own: `observer.rs` (they watch the test process itself).

mod common;

mod abandoned_runs;
mod batch;
mod corrupt_db;
mod foreign_db;
mod garbage_file;
mod keep_log;
mod migrations;
mod model_turns;
mod open_existing_missing;
mod policy_events;
mod prune_by_bytes;
mod prune_by_count;
mod prune_step_files;
mod runs_listing;
mod seq_after_reopen;
mod step_roundtrip;
mod too_new;
