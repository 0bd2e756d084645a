//! `shell`: a command line, run by corral's grammar (and the host shell where the run allows).

use super::{Answers, Def, Group, ToolAnswer};
use crate::ShellRequest;
use crate::host_shell::HostLines;

/// The `shell` tool.
pub static SHELL: Def<ShellRequest> = Def {
    name: "shell",
    group: Group::Commands,
    answers: Answers::Result,
    streams: true,
    description: shell_description,
    call: |run, request, options| {
        Ok(ToolAnswer::Outcome(Box::new(
            run.shell_with(&request, options)?,
        )))
    },
};

/// `shell`'s description, by where a line outside the grammar runs.
fn shell_description(host: HostLines) -> &'static str {
    match host {
        HostLines::Refused => {
            "Run a command line, no shell: quotes, | && || ;, redirects, <<'EOF', NAME=v cmd, ~, cd, \
globs. $VAR, $( ), loops and & are refused with what to do instead. Result as for exec."
        }
        HostLines::InSandbox => {
            "Run a command line: quotes, | && || ;, redirects, <<'EOF', NAME=v cmd, ~, cd, globs run \
without a shell; other bash ($VAR, $( ), loops, &) under bash -c in the sandbox. Result as for exec."
        }
        HostLines::WhenApproved => {
            "Run a command line: quotes, | && || ;, redirects, <<'EOF', NAME=v cmd, ~, cd, globs run \
without a shell; other bash ($VAR, $( ), loops, &) under bash -c once a person approves. Result as for exec."
        }
    }
}
