//! `corral mcp --file-tools` offers the workspace file tools; without it they are unknown.

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn file_tools_write_read_list_and_patch_when_offered() {
    let session = Session::start_with(Some(PERMISSIVE), None, &["--file-tools"]).await;
    let tools = session.client.list_all_tools().await.unwrap();
    for name in ["read_file", "write_file", "list_dir", "apply_patch"] {
        assert!(
            tools.iter().any(|t| t.name == name),
            "{name} is not offered"
        );
    }

    let wrote = session
        .call(
            "write_file",
            json!({"path": "src/app.py", "content": "x = 1\nprint(x)\n"}),
        )
        .await;
    assert_eq!(wrote.is_error, Some(false), "{}", text(&wrote));
    assert_eq!(field(&wrote, "observation"), &json!(text(&wrote)));

    let patch = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-x = 1\n+x = 2\n print(x)\n*** End Patch\n";
    let patched = session.call("apply_patch", json!({"patch": patch})).await;
    assert_eq!(patched.is_error, Some(false), "{}", text(&patched));
    assert_eq!(
        std::fs::read_to_string(session.workspace().join("src/app.py")).unwrap(),
        "x = 2\nprint(x)\n"
    );

    let read = session
        .call("read_file", json!({"path": "src/app.py"}))
        .await;
    assert!(text(&read).contains("x = 2"), "{}", text(&read));
    let listed = session.call("list_dir", json!({})).await;
    assert!(text(&listed).contains("src/"), "{}", text(&listed));

    // Outside the workspace: refused, as a result the model reads, and nothing written.
    let outside = session
        .call(
            "write_file",
            json!({"path": "../escaped.txt", "content": "no"}),
        )
        .await;
    assert_eq!(outside.is_error, Some(false), "{}", text(&outside));
    assert_eq!(field(&outside, "status"), "refused");
    assert!(!session.dir.path().join("escaped.txt").exists());
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_flag_the_file_tools_are_not_offered() {
    let session = Session::start(Some(PERMISSIVE), None).await;
    let tools = session.client.list_all_tools().await.unwrap();
    assert!(!tools.iter().any(|t| t.name == "read_file"));
    let answer = session
        .client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("read_file")
                .with_arguments(json!({"path": "x"}).as_object().unwrap().clone()),
        )
        .await;
    let message = format!("{answer:?}");
    assert!(answer.is_err(), "{message}");
    assert!(message.contains("unknown tool"), "{message}");
    session.client.cancel().await.unwrap();
}
