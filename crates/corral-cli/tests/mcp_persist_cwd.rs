//! `corral mcp --persist-cwd`: a `cd` at the end of one call is where the next starts,
//! and each result says where it ran.

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn a_cd_carries_over_to_the_next_call() {
    let session = Session::start_with(Some(PERMISSIVE), None, &["--persist-cwd"]).await;
    let cd = session
        .call("shell", json!({"line": "mkdir -p src/app && cd src/app"}))
        .await;
    assert!(
        text(&cd).contains("later calls start in src/app"),
        "{}",
        text(&cd)
    );
    let pwd = session.call("exec", json!({"argv": ["pwd"]})).await;
    assert!(text(&pwd).contains("\nin src/app\n"), "{}", text(&pwd));
    assert!(text(&pwd).contains("/ws/src/app"), "{}", text(&pwd));
    session.client.cancel().await.unwrap();
}
