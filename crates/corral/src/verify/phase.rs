//! One phase of the verification gate, as a task contract names it.

use serde::{Deserialize, Serialize};

/// One phase of the verification gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verification {
    /// Run `argv` in the workspace; the phase passes when it exits `expect_exit`.
    Command {
        /// The program and its arguments (no shell).
        argv: Vec<String>,
        /// The exit status that means success (usually 0).
        expect_exit: i32,
    },
}

impl Verification {
    /// `argv`, expected to exit 0.
    pub fn command<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Verification::Command {
            argv: argv.into_iter().map(Into::into).collect(),
            expect_exit: 0,
        }
    }

    /// How the phase reads in a message: `cargo test` (and `, expecting exit 3`).
    pub fn describe(&self) -> String {
        match self {
            Verification::Command { argv, expect_exit } => {
                let shown = crate::line::display_argv(argv);
                if *expect_exit == 0 {
                    shown
                } else {
                    format!("{shown} (expecting exit {expect_exit})")
                }
            }
        }
    }
}
