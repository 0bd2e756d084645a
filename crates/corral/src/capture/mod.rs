//! Output: every byte a command prints goes to a capture file, never wholly into memory.
//!
//! A `Sink` receives one stream's chunks as they are read from the pipe, appends them to
//! a file beside the trace (created on the first byte, so a silent command leaves no
//! file), counts bytes and lines, and may also copy each chunk to a live writer (the CLI's
//! own stdout). Memory is one read buffer per command (and a few batches for the scan of
//! a long stream), whatever the command prints.
//!
//! What the model is shown is cut afterwards from the file by `window`: the head and the
//! tail within a byte budget, with exactly how much was left out in the middle, and the
//! lines of that middle that say why the command failed (`failures`), found by a scan that
//! runs as the bytes arrive (past a stream's first megabyte, on a thread of its own behind
//! the capture).

pub mod failures;
pub mod reader;
mod reorder;
mod sink;
mod window;

pub(crate) use sink::Sink;
pub use sink::{Captured, Layout};
pub use window::Window;
pub(crate) use window::{shown_need, split_budget, window};
