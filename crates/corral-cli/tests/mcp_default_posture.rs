//! `corral mcp` on its defaults, driven through a normal agent loop: write a file, build
//! and test, a dev server in a handle answering a later call, a REPL, a scratch file. Where
//! this host enforces every sandbox layer, none of it asks the person anything, and no
//! write outside the workspace is possible; a write the sandbox refused is offered as a
//! rerun with exactly that path added.

use crate::mcp_common;
use std::time::{Duration, Instant};

use mcp_common::*;
use rmcp::model::CallToolResult;
use serde_json::json;

/// Whether the server says the sandbox is the boundary here (every layer enforced).
fn sandbox_is_boundary(session: &Session) -> bool {
    let info = session
        .client
        .peer_info()
        .expect("the server said who it is");
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(
        instructions.contains("Commands run in a sandbox (workspace-write, network off)"),
        "{instructions}"
    );
    if instructions.contains("Every confinement layer is enforced on this host") {
        return true;
    }
    assert!(
        instructions.contains("Not every confinement layer is enforced on this host"),
        "{instructions}"
    );
    crate::common::not_expecting_a_whole_box(&instructions);
    false
}

fn ok(result: &CallToolResult) -> String {
    let t = text(result);
    assert_eq!(result.is_error, Some(false), "{t}");
    assert_eq!(field(result, "exit_code"), 0, "{t}");
    t
}

/// Poll `handle` until its output so far contains `needle`.
async fn until_output(session: &Session, handle: u64, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = String::new();
    while !seen.contains(needle) {
        assert!(Instant::now() < deadline, "no {needle:?} in {seen:?}");
        let polled = session
            .call("shell_poll", json!({"handle": handle, "wait_ms": 1000}))
            .await;
        assert_eq!(polled.is_error, Some(false), "{}", text(&polled));
        seen.push_str(&text(&polled));
    }
    seen
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_normal_agent_loop_asks_nothing() {
    let session = Session::start(None, Some(Answer::Accept)).await;
    if !sandbox_is_boundary(&session) {
        // The fallback: the result's sandbox line says why approvals are asked.
        let r = session.call("exec", json!({"argv": ["true"]})).await;
        assert!(
            text(&r).contains("ot every confinement layer is enforced"),
            "{}",
            text(&r)
        );
        session.client.cancel().await.unwrap();
        return;
    }
    let ws = session.workspace();

    // Write files, the way a model does without an editor tool.
    ok(&session
        .call(
            "shell",
            json!({"line": "echo 'def add(a, b):\n    return a + b' > app.py"}),
        )
        .await);
    ok(&session
        .call(
            "exec",
            json!({"argv": ["python3", "-c", "open('test_app.py', 'w').write('import unittest, app\\nclass T(unittest.TestCase):\\n    def test_add(self):\\n        self.assertEqual(app.add(2, 3), 5)\\n')"]}),
        )
        .await);

    // Build and test.
    ok(&session
        .call(
            "shell",
            json!({"line": "python3 -m py_compile app.py && python3 -m unittest -q 2>&1"}),
        )
        .await);

    // The build tools' caches point at a directory the box may write.
    let cache = ok(&session
        .call(
            "exec",
            json!({"argv": ["python3", "-c", "import os, pathlib; p = pathlib.Path(os.environ['PIP_CACHE_DIR']); p.mkdir(parents=True, exist_ok=True); (p / 'probe').write_text('1'); print(p)"]}),
        )
        .await);
    let cache_root = session.dir.path().join("cache").join("corral");
    assert!(cache.contains(&cache_root.display().to_string()), "{cache}");

    // A dev server in a handle, and a request to it from a later call.
    let port = free_port();
    let started = session
        .call(
            "shell_start",
            json!({"line": format!("python3 -u -m http.server {port} --bind 127.0.0.1")}),
        )
        .await;
    assert_eq!(started.is_error, Some(false), "{}", text(&started));
    let server = field(&started, "handle").as_u64().unwrap();
    until_output(&session, server, "Serving HTTP").await;
    let fetched = ok(&session
        .call(
            "exec",
            json!({"argv": ["python3", "-c", format!("import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:{port}/app.py').read().decode())")]}),
        )
        .await);
    assert!(fetched.contains("return a + b"), "{fetched}");

    // A REPL on a terminal.
    let repl = session
        .call(
            "shell_start",
            json!({"line": "python3 -q", "tty": true, "rows": 24, "cols": 80}),
        )
        .await;
    assert_eq!(repl.is_error, Some(false), "{}", text(&repl));
    let repl = field(&repl, "handle").as_u64().unwrap();
    // shell_write waits for the answer past the echo, so the write's own result has it.
    let answered = session
        .call(
            "shell_write",
            json!({"handle": repl, "text": "print(6 * 7)\n"}),
        )
        .await;
    assert_eq!(answered.is_error, Some(false), "{}", text(&answered));
    if !text(&answered).contains("\n42") {
        until_output(&session, repl, "42").await;
    }

    // A scratch file in the workspace, and removing it again.
    ok(&session
        .call(
            "shell",
            json!({"line": "echo scratch > scratch.txt && cat scratch.txt && rm scratch.txt"}),
        )
        .await);
    assert!(!ws.join("scratch.txt").exists());

    for handle in [server, repl] {
        session.call("shell_kill", json!({"handle": handle})).await;
    }
    let questions = session.seen.lock().unwrap().questions.clone();
    assert!(questions.is_empty(), "asked: {questions:?}");
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_outside_the_workspace_can_be_written() {
    // A client that cannot ask a person: a denial is reported, not offered.
    let session = Session::start(None, None).await;
    if !sandbox_is_boundary(&session) {
        session.client.cancel().await.unwrap();
        return;
    }
    let outside = session.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let target = outside.join("x");
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let in_home = format!("{home}/.corral-test-{}", std::process::id());

    let touched = session
        .call("exec", json!({"argv": ["touch", &target]}))
        .await;
    assert_ne!(field(&touched, "exit_code"), 0, "{}", text(&touched));
    assert!(!target.exists());
    // What was denied, and what a person would have to allow.
    let said = text(&touched);
    assert!(
        said.contains(&format!("denied a write to {}", target.display())),
        "{said}"
    );
    assert!(
        said.contains(&format!("--writable {}", outside.display())),
        "{said}"
    );

    let python = session
        .call(
            "exec",
            json!({"argv": ["python3", "-c", format!("open('{in_home}', 'w')")]}),
        )
        .await;
    // The box's home is a directory of the run's own: the write lands there, never in
    // the person's home.
    assert!(
        !std::path::Path::new(&in_home).exists(),
        "{}",
        text(&python)
    );

    // A redirect is opened by corral, and held to the same roots.
    let redirected = session
        .call(
            "shell",
            json!({"line": format!("echo x > {}", target.display())}),
        )
        .await;
    assert!(!target.exists(), "{}", text(&redirected));
    assert!(
        text(&redirected).contains("sandbox"),
        "{}",
        text(&redirected)
    );
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denied_write_is_offered_as_a_rerun_with_that_path_added() {
    let session = Session::start(None, Some(Answer::Accept)).await;
    if !sandbox_is_boundary(&session) {
        session.client.cancel().await.unwrap();
        return;
    }
    let outside = session.dir.path().join("outside");
    let elsewhere = session.dir.path().join("elsewhere");
    for dir in [&outside, &elsewhere] {
        std::fs::create_dir(dir).unwrap();
    }
    let target = outside.join("x");
    let result = session
        .call("exec", json!({"argv": ["touch", &target]}))
        .await;
    assert_eq!(field(&result, "exit_code"), 0, "{}", text(&result));
    assert!(target.exists());
    assert!(
        text(&result).contains(&format!(
            "rerun with {} writable, approved",
            outside.display()
        )),
        "{}",
        text(&result)
    );
    let questions = session.seen.lock().unwrap().questions.clone();
    assert_eq!(questions.len(), 1, "{questions:?}");
    assert!(
        questions[0].contains(&format!("write {}", outside.display())),
        "{questions:?}"
    );
    assert!(
        !questions[0].contains("without the sandbox"),
        "{questions:?}"
    );

    // Only that path was added: elsewhere is still out of reach, so it is asked about anew.
    let other = elsewhere.join("y");
    session
        .call("exec", json!({"argv": ["touch", &other]}))
        .await;
    let questions = session.seen.lock().unwrap().questions.clone();
    assert_eq!(questions.len(), 2, "{questions:?}");
    assert!(
        questions[1].contains(&format!("write {}", elsewhere.display())),
        "{questions:?}"
    );
    session.client.cancel().await.unwrap();
}
