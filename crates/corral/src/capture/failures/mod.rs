//! Failure lines: when a window leaves the middle of a stream out, the lines in that
//! middle that say why the command failed (an assertion's message, a compiler's error, a
//! panic) are shown where the marker is, numbered as `output` reads the capture, so the
//! first result of a failing run carries its reason.
//!
//! Five parts: `recognisers`, the data (which lines, which context); `scan`, which
//! runs on every chunk the capture takes and keeps what matched with its place; `tap`,
//! what TAP needs beyond a table of lines (a failing test's diagnostics, its plan's
//! count); `behind`, which moves the scan of a long stream to a thread of its own,
//! behind the capture; and `block`, which at the end picks what falls in the omitted
//! middle, within a budget.

mod behind;
mod block;
pub(crate) mod recognisers;
pub(crate) mod scan;
mod tap;

pub(crate) use behind::Scanner;
pub use block::{FailureBlock, MAX_BYTES, MAX_LINES, ShownLine};
pub(crate) use block::{Middle, Numbering, block};
pub use scan::{Found, Scan};
