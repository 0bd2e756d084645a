//! What a task's model is offered: every tool with its description and input schema (a
//! snapshot, since it is what the model reads), and calls dispatched through one table.

use crate::common;

use common::Fixture;
use corral::host_shell::HostLines;
use corral::task::tools;
use serde_json::json;

#[test]
fn the_tools_a_model_reads() {
    let mut specs: Vec<_> = tools::specs(HostLines::Refused)
        .into_iter()
        .filter(|t| {
            ["read_file", "write_file", "list_dir", "apply_patch"].contains(&t.name.as_str())
        })
        .collect();
    specs.push(tools::done_spec());
    insta::assert_snapshot!(serde_json::to_string_pretty(&specs).unwrap());
    // The same table the MCP server offers, in the same order.
    let names: Vec<&str> = corral::tools::TOOLS.iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "exec",
            "shell",
            "shell_start",
            "shell_poll",
            "shell_kill",
            "shell_signal",
            "shell_write",
            "shell_keys",
            "shell_screen",
            "output",
            "read_file",
            "write_file",
            "list_dir",
            "apply_patch",
        ]
    );
}

#[test]
fn bad_arguments_and_unknown_tools_are_observations() {
    let fx = Fixture::new();
    let run = fx.run();
    let r = tools::dispatch(&run, "read_file", json!({"file": "x"})).unwrap();
    assert!(r.is_error);
    assert!(
        r.text
            .starts_with("error: invalid arguments for read_file: unknown field `file`"),
        "{}",
        r.text
    );
    let r = tools::dispatch(&run, "rm_rf", json!({})).unwrap();
    assert!(r.is_error);
    assert!(
        r.text
            .contains("there is no tool \"rm_rf\": use one of exec, shell"),
        "{}",
        r.text
    );
    let r = tools::dispatch(&run, "exec", json!({"argv": ["true"]})).unwrap();
    assert!(!r.is_error);
    assert_eq!(r.status, "exit 0");
    assert!(r.step.is_some());
}
