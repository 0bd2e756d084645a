//! A host-shell line that runs programs the bash parser cannot name (a trap, a prompt or
//! arithmetic expansion, an alias, a callback, a sourced stream, a changed PATH, a program
//! the line makes) is asked about where a written rule must hold that the kernel cannot
//! (an argument pattern, an ask), and runs where none does. A program denied by name is
//! the kernel's to hold in the box (`mcp_denied_programs`).

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

/// Each way `rm` could be reached past a parser, from the list of what bash runs.
const LINES: &[&str] = &[
    "trap 'rm victim' EXIT",
    "PS4='$(rm victim)'; set -x; true",
    "x='a[$(rm victim)]'; echo $((x))",
    "declare -i n=x; x='a[$(rm victim)]'; n=x",
    "let n=x",
    "x='$(rm victim)'; echo ${x@P}",
    "mapfile -t -C rm -c 1 a <<< victim",
    "compgen -C 'rm victim' x",
    "shopt -s expand_aliases; alias ls=rm; ls victim",
    "hash -p /bin/rm ls; ls victim",
    "coproc rm victim",
    ". /dev/stdin <<< 'rm victim'",
    "ln -sf /bin/rm ./tool; ./tool victim",
    "mkdir -p b; ln -sf /bin/rm b/ls; PATH=$PWD/b:$PATH; ls victim",
];

#[tokio::test(flavor = "multi_thread")]
async fn with_a_written_rule_each_is_asked_about_and_nothing_runs() {
    // An argument pattern: no file can be taken away for it.
    let policy = format!("{PERMISSIVE}[exec]\ndeny = [\"rm *victim*\"]\n");
    let session = Session::start(Some(&policy), None).await;
    let ws = session.workspace();
    for line in LINES {
        std::fs::write(ws.join("victim"), "keep\n").unwrap();
        let result = session.call("shell", json!({ "line": line })).await;
        let said = text(&result);
        assert!(
            ws.join("victim").exists(),
            "{line}: the victim is gone: {said}"
        );
        let status = field(&result, "status")
            .as_str()
            .unwrap_or_default()
            .to_string();
        // Refused (a deny the parser saw) or asked and declined (no one to ask here).
        assert!(
            status == "refused" || status == "declined",
            "{line}: {status}: {said}"
        );
        if status == "declined" {
            assert!(
                said.contains("cannot name") || said.contains("does not exist"),
                "{line}: {said}"
            );
            assert!(said.contains("\"rm *victim*\""), "{line}: {said}");
        }
    }
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_written_rule_such_a_line_runs_in_the_box() {
    let session = Session::start(Some(PERMISSIVE), None).await;
    let result = session
        .call(
            "shell",
            json!({"line": "trap 'echo bye' EXIT; x=2; echo $((x * 21))"}),
        )
        .await;
    let said = text(&result);
    assert_eq!(field(&result, "status"), "exited", "{said}");
    assert!(said.contains("42") && said.contains("bye"), "{said}");
    session.client.cancel().await.unwrap();
}

/// An inline program may run any command with any arguments: where a rule holds by its
/// arguments (`git push*`), which the kernel cannot, it is asked about; a rule that names a
/// program only (the kernel's to hold) leaves it running.
#[tokio::test(flavor = "multi_thread")]
async fn an_inline_program_is_asked_about_where_a_rule_holds_by_arguments() {
    let policy = format!("{PERMISSIVE}[exec]\ndeny = [\"git push*\"]\n");
    let session = Session::start(Some(&policy), None).await;
    for argv in [
        json!([
            "python3",
            "-c",
            "import os; os.system('git push origin main')"
        ]),
        json!(["perl", "-e", "system('git', 'push')"]),
    ] {
        let result = session.call("exec", json!({ "argv": argv })).await;
        let said = text(&result);
        assert_eq!(field(&result, "status"), "declined", "{argv}: {said}");
        assert!(said.contains("\"git push*\""), "{argv}: {said}");
    }
    session.client.cancel().await.unwrap();

    let policy = format!("{PERMISSIVE}[exec]\ndeny = [\"rm\"]\n");
    let session = Session::start(Some(&policy), None).await;
    let result = session
        .call("exec", json!({"argv": ["python3", "-c", "print(6 * 7)"]}))
        .await;
    assert_eq!(field(&result, "status"), "exited", "{}", text(&result));
    assert!(text(&result).contains("42"), "{}", text(&result));
    session.client.cancel().await.unwrap();
}

/// What a model types into a shell or a REPL cannot be checked as a line is: where a rule
/// holds by its arguments, starting one on a terminal or a stdin pipe is asked about;
/// without such a rule, or for a program that does not read commands, it starts.
#[tokio::test(flavor = "multi_thread")]
async fn a_shell_for_typed_input_is_asked_about_where_a_rule_holds_by_arguments() {
    let policy = format!("{PERMISSIVE}[exec]\ndeny = [\"git push*\"]\n");
    let session = Session::start(Some(&policy), None).await;
    for start in [
        json!({"line": "bash --norc", "tty": true}),
        json!({"line": "bash --norc", "stdin": true}),
    ] {
        let result = session.call("shell_start", start.clone()).await;
        let said = text(&result);
        assert_eq!(field(&result, "status"), "declined", "{start}: {said}");
        assert!(said.contains("\"git push*\""), "{start}: {said}");
    }
    let tail = session
        .call(
            "shell_start",
            json!({"line": "tail -f /dev/null", "stdin": true}),
        )
        .await;
    let handle = field(&tail, "handle").as_u64().expect("tail starts");
    session
        .call("shell_kill", json!({ "handle": handle }))
        .await;
    session.client.cancel().await.unwrap();

    let session = Session::start(Some(PERMISSIVE), None).await;
    let bash = session
        .call("shell_start", json!({"line": "bash --norc", "tty": true}))
        .await;
    let handle = field(&bash, "handle").as_u64().expect("bash starts");
    session
        .call("shell_kill", json!({ "handle": handle }))
        .await;
    session.client.cancel().await.unwrap();
}

/// A shell started on a stdin pipe gets what the model writes a whole command at a time,
/// each checked as a `shell` call: a refused command never reaches it.
#[tokio::test(flavor = "multi_thread")]
async fn a_shell_on_a_stdin_pipe_gets_only_commands_the_policy_allows() {
    let policy = format!("{PERMISSIVE}[exec]\ndeny = [\"touch\"]\n");
    let session = Session::start(Some(&policy), None).await;
    let bash = session
        .call("shell_start", json!({"line": "bash --norc", "stdin": true}))
        .await;
    let handle = field(&bash, "handle").as_u64().expect("bash starts");
    let refused = session
        .call(
            "shell_write",
            json!({"handle": handle, "text": "touch made\n", "yield_ms": 300}),
        )
        .await;
    let said = text(&refused);
    assert_eq!(refused.is_error, Some(false), "{said}");
    assert_eq!(field(&refused, "status"), "refused", "{said}");
    assert!(said.contains("\"touch\""), "{said}");
    let ran = session
        .call(
            "shell_write",
            json!({"handle": handle, "text": "echo sum-$((40+2))\n", "yield_ms": 3000}),
        )
        .await;
    assert!(text(&ran).contains("sum-42"), "{}", text(&ran));
    assert!(!session.workspace().join("made").exists());
    session
        .call("shell_kill", json!({ "handle": handle }))
        .await;
    session.client.cancel().await.unwrap();
}
