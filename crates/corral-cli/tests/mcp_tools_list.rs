//! `tools/list`: the five tools, object input schemas from the library's request types,
//! output schemas, and the whole list under 4 KiB.

mod mcp_common;
use mcp_common::*;

#[tokio::test(flavor = "multi_thread")]
async fn lists_five_tools_with_schemas_under_four_kilobytes() {
    let session = Session::start(None, None).await;
    let tools = session.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        ["exec", "shell", "shell_start", "shell_poll", "shell_kill"]
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
            input.get("required").is_some(),
            "{} names its required fields",
            tool.name
        );
        assert!(
            tool.output_schema.is_some(),
            "{} has an output schema",
            tool.name
        );
        assert!(tool.description.as_ref().is_some_and(|d| d.len() > 40));
    }
    let exec = &tools[0].input_schema["properties"];
    for field in ["argv", "cwd", "env", "timeout", "yield_ms"] {
        assert!(exec.get(field).is_some(), "exec takes {field}");
    }
    let size = serde_json::to_string(&serde_json::json!({ "tools": tools }))
        .unwrap()
        .len();
    println!("tools/list result: {size} bytes");
    assert!(size < 4096, "{size} bytes");
    session.client.cancel().await.unwrap();
}
