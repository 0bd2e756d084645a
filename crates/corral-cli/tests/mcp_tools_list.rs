//! `tools/list`: the ten tools, object input schemas from the library's request types,
//! and what a model is shown of them (names, descriptions, input schemas) under 4 KiB.

use crate::mcp_common;
use mcp_common::*;

#[tokio::test(flavor = "multi_thread")]
async fn lists_ten_tools_with_small_schemas() {
    let session = Session::start(None, None).await;
    let tools = session.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
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
            "output"
        ]
    );
    for tool in &tools {
        let input = &tool.input_schema;
        assert_eq!(
            input.get("type"),
            Some(&serde_json::json!("object")),
            "{}",
            tool.name
        );
        assert!(
            // output's fields all have defaults: the last result's stdout.
            tool.name == "output" || input.get("required").is_some(),
            "{} names its required fields",
            tool.name
        );
        assert!(
            tool.description.as_ref().is_some_and(|d| d.len() > 40),
            "{}",
            tool.name
        );
    }
    let exec = &tools[0].input_schema["properties"];
    for field in ["argv", "cwd", "env", "timeout", "yield_ms"] {
        assert!(exec.get(field).is_some(), "exec takes {field}");
    }
    let start = &tools[2].input_schema["properties"];
    for field in ["line", "tty", "rows", "cols", "stdin"] {
        assert!(start.get(field).is_some(), "shell_start takes {field}");
    }
    assert!(
        tools[3].input_schema["properties"]
            .get("strip_ansi")
            .is_some()
    );
    // Output schemas are for the client's validation; models are shown the rest.
    let shown: Vec<_> = tools
        .iter()
        .map(|t| {
            serde_json::json!({
                "name": t.name, "description": t.description, "inputSchema": t.input_schema,
            })
        })
        .collect();
    let size = serde_json::to_string(&serde_json::json!({ "tools": shown }))
        .unwrap()
        .len();
    println!("tools/list result: {size} bytes");
    assert!(size < 4096, "{size} bytes");
    session.client.cancel().await.unwrap();
}
