//! A program a deny rule names cannot start in the box, however a line reaches it:
//! bash's own ways of running a string, interpreters, links and copies made in the same
//! call, `env`, `find -exec`, `xargs`. The victim file survives each, and each result
//! names the rule, whether corral's checks refused the line or the stub over the
//! program's files did.

use crate::mcp_common;
use mcp_common::*;
use serde_json::json;

/// Each line tries to remove `victim` with `rm`, reached some way the line's words do
/// not show.
const LINES: &[&str] = &[
    "trap 'r''m victim' EXIT",
    "PS4='$(r''m victim)'; set -x; true",
    "x='a[$(r''m victim)]'; echo $((x))",
    "x='a[$(r''m victim)]'; declare -i n=x",
    "x='a[$(r''m victim)]'; let n=x",
    "x='$(r''m victim)'; echo ${x@P}",
    "mapfile -t -C r''m -c 1 a <<< victim",
    "compgen -C 'r''m victim' x",
    // An alias takes effect from the next line bash reads.
    "shopt -s expand_aliases\nalias ls=r''m\nls victim",
    "hash -p /bin/r''m ls; ls victim",
    "coproc r''m victim; wait",
    ". /dev/stdin <<< 'r''m victim'",
    "ln -sf /bin/r''m ./tool; ./tool victim",
    "mkdir -p b; ln -sf /bin/r''m b/ls; PATH=$PWD/b:$PATH; ls victim",
    "cp /bin/r''m ./copy; ./copy victim",
    "p=/usr/bin/r''m; $p victim",
    "env r''m victim",
    "find . -name victim -exec r''m {} ';'",
    "echo victim | xargs r''m",
    "python3 -c 'import os; os.system(\"r\"+\"m victim\")'",
    "python3 -c 'import subprocess; subprocess.run([\"r\"+\"m\", \"victim\"])'",
    "python3 -c 'import os; os.execv(\"/bin/r\"+\"m\", [\"x\", \"victim\"])'",
    "perl -e 'system(\"r\".\"m\",\"victim\")'",
    "awk 'BEGIN{system(\"r\" \"m victim\")}'",
];

#[tokio::test(flavor = "multi_thread")]
async fn a_denied_program_starts_by_no_route_and_the_result_names_the_rule() {
    let Some(session) = session_denying_rm().await else {
        return;
    };
    let victim = session.workspace().join("victim");
    for line in LINES {
        std::fs::write(&victim, "keep").unwrap();
        let result = session.call("shell", json!({"line": line})).await;
        assert_eq!(result.is_error, Some(false), "{line}: {}", text(&result));
        assert!(
            victim.exists(),
            "{line} removed the victim: {}",
            text(&result)
        );
        assert!(
            ["rule \"rm\"", "rule `rm`"]
                .iter()
                .any(|named| text(&result).contains(named)),
            "{line}: the result does not name the rule: {}",
            text(&result)
        );
    }
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stubs_refusal_is_a_refusal_of_the_calls_step_in_the_trace() {
    let Some(session) = session_denying_rm().await else {
        return;
    };
    let victim = session.workspace().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    // Past 1,000 lines of output, so the stub's line is in what the window leaves out.
    let line = "seq 1 40000 >&2; python3 -c 'import os, sys; sys.exit(os.system(\"r\"+\"m victim\") >> 8)'; \
                seq 1 40000 >&2";
    let result = session.call("shell", json!({"line": line})).await;
    assert!(victim.exists(), "{}", text(&result));
    assert!(text(&result).contains("omitted"), "{}", text(&result));
    let refused = session.trace(&["refused"]);
    let rows = refused.as_array().expect("a list of refusals");
    let by_kernel: Vec<_> = rows
        .iter()
        .filter(|r| r["answered_by"] == "kernel")
        .collect();
    assert_eq!(by_kernel.len(), 1, "{refused:#}");
    let row = by_kernel[0];
    assert_eq!(row["rule"], "rm", "{row:#}");
    assert_eq!(row["effect"], "deny", "{row:#}");
    assert_eq!(row["decision"], "refused", "{row:#}");
    assert!(row["step_id"].is_i64(), "{row:#}");
    session.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_build_and_a_test_suite_run_in_the_box_as_before() {
    let policy = format!("{PERMISSIVE}[exec]\ndeny = [\"rm\"]\n");
    let session = Session::start(Some(&policy), None).await;
    let ws = session.workspace();
    std::fs::write(
        ws.join("hello.c"),
        "#include <stdio.h>\nint main(void) { puts(\"hello from cc\"); return 0; }\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("Makefile"),
        "hello: hello.c\n\tcc -o hello hello.c\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("test_sum.py"),
        "def test_sum():\n    assert sum([1, 2]) == 3\n",
    )
    .unwrap();
    let built = session
        .call("shell", json!({"line": "make && ./hello"}))
        .await;
    assert_eq!(field(&built, "status"), "exited", "{}", text(&built));
    assert!(text(&built).contains("hello from cc"), "{}", text(&built));
    let python = crate::python_clients::python().display().to_string();
    let tested = session
        .call(
            "exec",
            json!({"argv": [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_sum.py"]}),
        )
        .await;
    assert!(text(&tested).contains("1 passed"), "{}", text(&tested));
    session.client.cancel().await.unwrap();
}

/// A session whose policy denies `rm`, where the box holds denied programs in its mount
/// namespace; `None` (the test skipped, said why) where it cannot.
async fn session_denying_rm() -> Option<Session> {
    let policy = format!("{PERMISSIVE}[exec]\ndeny = [\"rm\"]\n");
    let session = Session::start(Some(&policy), None).await;
    let report = session.call("exec", json!({"argv": ["true"]})).await;
    if !text(&report).contains("denied programs: full") {
        eprintln!("skipped: no mount namespace here: {}", text(&report));
        return None;
    }
    Some(session)
}
