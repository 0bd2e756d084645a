//! `corral mcp --file-tools` offers the workspace file tools; without it they are unknown.

use crate::mcp_common;
use mcp_common::*;
use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
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

/// `corral mcp --workspace ~` (a person serving their home): the key in `~/.ssh` is out of
/// the file tools' reach, as it is of a command's in the box. The default read denies,
/// `~/` the scratch home: nothing of the key in any result, nothing written there.
#[tokio::test(flavor = "multi_thread")]
async fn a_home_served_whole_keeps_its_keys_from_the_file_tools() {
    const CANARY: &str = "CANARY-5e1d-private-key";
    let dir = scratch(Some(PERMISSIVE));
    let home = dir.path().join("ws");
    std::fs::create_dir(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), format!("{CANARY}\n")).unwrap();
    let command = tokio::process::Command::new(corral_bin()).configure(|cmd| {
        cmd.args([
            "mcp",
            "--file-tools",
            "--sandbox",
            "workspace-write",
            "--workspace",
        ])
        .arg(&home)
        .env("HOME", &home)
        .env("CORRAL_STORE", store(dir.path()))
        .env("CORRAL_TRUST_STORE", trust_store(dir.path()))
        .env_remove("CORRAL_POLICY")
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("XDG_CACHE_HOME", dir.path().join("cache"));
    });
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.unwrap();
    let call = |tool: &'static str, arguments: serde_json::Value| {
        let client = &client;
        async move {
            client
                .call_tool(
                    rmcp::model::CallToolRequestParams::new(tool)
                        .with_arguments(arguments.as_object().unwrap().clone()),
                )
                .await
                .unwrap()
        }
    };
    let patch = |body: &str| json!({"patch": format!("*** Begin Patch\n{body}\n*** End Patch\n")});
    let calls = [
        ("read_file", json!({"path": ".ssh/id_ed25519"})),
        ("list_dir", json!({"path": ".ssh"})),
        (
            "write_file",
            json!({"path": ".ssh/authorized_keys", "content": "ssh-ed25519 AAAA attacker\n"}),
        ),
        (
            "apply_patch",
            patch("*** Update File: .ssh/id_ed25519\n@@\n-CANARY-5e1d-private-kez\n+x"),
        ),
        (
            "apply_patch",
            patch("*** Update File: .ssh/id_ed25519\n*** Move to: stolen.txt"),
        ),
        ("apply_patch", patch("*** Delete File: .ssh/id_ed25519")),
    ];
    for (tool, arguments) in calls {
        let result = call(tool, arguments.clone()).await;
        let shown = text(&result);
        assert_eq!(
            field(&result, "status"),
            "refused",
            "{tool} {arguments}: {shown}"
        );
        assert_eq!(field(&result, "layer"), "sandbox", "{tool}: {shown}");
        assert!(shown.contains(".ssh"), "{tool}: {shown}");
        assert!(!shown.contains(CANARY), "{tool}: {shown}");
    }
    let listed = call("list_dir", json!({})).await;
    assert!(!text(&listed).contains("id_ed25519"), "{}", text(&listed));
    assert_eq!(
        std::fs::read_to_string(home.join(".ssh/id_ed25519")).unwrap(),
        format!("{CANARY}\n")
    );
    assert!(!home.join(".ssh/authorized_keys").exists());
    assert!(!home.join("stolen.txt").exists());
    client.cancel().await.unwrap();
}
