//! `shell_screen`: a terminal handle's screen.

use super::{Answers, Def, Group, ToolAnswer};
use crate::handle::ScreenRequest;

/// The `shell_screen` tool.
pub(crate) static SHELL_SCREEN: Def<ScreenRequest> = Def {
    name: "shell_screen",
    group: Group::Commands,
    answers: Answers::Screen,
    streams: false,
    description: |_| "A terminal handle's screen as text, with the cursor.",
    call: |run, request, _| Ok(ToolAnswer::Screen(run.shell_screen(&request)?)),
};
