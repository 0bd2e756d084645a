//! What a task's model is offered: every tool with its description and input schema (a
//! snapshot, since it is what the model reads), and calls dispatched through one table.

use crate::common;

use common::Fixture;
use corral::config::host_shell::HostLines;
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
    // The same table the MCP server offers, in the same order; `undo` is the person's
    // (`corral undo`), offered to a model only by `corral mcp --undo-tool`.
    let table: Vec<&str> = corral::tools::TOOLS.iter().map(|t| t.name()).collect();
    assert_eq!(table.last(), Some(&"undo"));
    let specs = tools::specs(HostLines::Refused);
    let names: Vec<&str> = specs.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, table[..table.len() - 1]);
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
fn what_a_model_reads_of_undo() {
    let undo = corral::tools::find("undo").unwrap();
    let shown = json!({
        "name": undo.name(),
        "description": undo.description(HostLines::Refused),
        "input_schema": undo.input_schema(),
    });
    insta::assert_snapshot!(serde_json::to_string_pretty(&shown).unwrap());
}

#[test]
fn a_task_cannot_call_undo() {
    let fx = Fixture::new();
    let run = fx.run();
    let r = tools::dispatch(&run, "undo", json!({})).unwrap();
    assert!(r.is_error);
    assert!(r.text.contains("there is no tool \"undo\""), "{}", r.text);
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
