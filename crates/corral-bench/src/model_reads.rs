//! What a model reads through `corral mcp`, in bytes, for three ordinary results: a
//! 300-test pytest run with one failure, 50 MiB of output, and a range and a search
//! through that capture. Two kinds of client are counted, since they hand a model different channels:
//! one that reads `content` (Claude Code, Codex) and one that reads `structuredContent`
//! alone when a result has it (pydantic-ai). "Before" is what the second kind was handed
//! when `structuredContent` held only status fields: the same fields, without the
//! observation, measured from the same results.
//!
//! The pytest case needs a Python with pytest: `CORRAL_BENCH_PYTHON`, else the venv the
//! test suite makes (`target/tmp/python-clients`), else `python3`; it is skipped, and says
//! so, where none has pytest.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

use crate::mcp_roundtrip::corral_binary;

pub fn run() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("tests")).unwrap();
    std::fs::write(
        ws.join("corral.toml"),
        "tier = \"permissive\"\napproval = \"on-request\"\n",
    )
    .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let corral = corral_binary();
    let client = runtime.block_on(async {
        let command = tokio::process::Command::new(&corral).configure(|cmd| {
            cmd.arg("mcp")
                .arg("--workspace")
                .arg(&ws)
                .env("CORRAL_STORE", dir.path().join("trace.db"));
        });
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        ().serve(transport).await.unwrap()
    });
    let call = |tool: &str, args: Value| -> CallToolResult {
        runtime.block_on(async {
            client
                .call_tool(
                    CallToolRequestParams::new(tool.to_string())
                        .with_arguments(args.as_object().unwrap().clone()),
                )
                .await
                .unwrap()
        })
    };

    println!(
        "{:<34} {:>9} {:>11} {:>11}  calls to the point (now / before, structured)",
        "result", "content", "structured", "before"
    );
    match pytest(&ws) {
        Some(python) => {
            let result = call(
                "exec",
                json!({"argv": [python, "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests"]}),
            );
            let found = text(&result).contains("assert 41 == 42");
            report(
                "pytest, 300 tests, 1 failure",
                &result,
                if found {
                    "1 / never"
                } else {
                    "assertion not in the first result"
                },
            );
        }
        None => println!("pytest, 300 tests, 1 failure: skipped (no Python with pytest here)"),
    }

    // About 50 MiB: the numbers to 6.6 million, one a line.
    let big = call("exec", json!({"argv": ["seq", "1", "6600000"]}));
    report("50 MiB of output", &big, "1 / never");
    let step = big.structured_content.as_ref().unwrap()["step"].clone();
    // Before, the marker's CLI pointer could only print a whole capture, through `shell`,
    // capped again at the output budget: no range, no search.
    let middle = call("output", json!({"step": step, "lines": "3300000-3300020"}));
    report("output: 21 lines from its middle", &middle, "1 / never");
    let grep = call(
        "output",
        json!({"step": step, "grep": "^3141592$", "context": 2}),
    );
    report("output: grep for one line in it", &grep, "1 / never");
    runtime.block_on(async { client.cancel().await.unwrap() });
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn report(name: &str, result: &CallToolResult, calls: &str) {
    let structured = result.structured_content.clone().unwrap_or(Value::Null);
    let mut before = structured.clone();
    if let Value::Object(fields) = &mut before {
        fields.remove("observation");
    }
    println!(
        "{name:<34} {:>9} {:>11} {:>11}  {calls}",
        text(result).len(),
        structured.to_string().len(),
        before.to_string().len(),
    );
}

/// A Python that has pytest, with the failing suite written into `ws/tests`.
fn pytest(ws: &Path) -> Option<PathBuf> {
    let venv =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tmp/python-clients/bin/python");
    let candidates = [
        std::env::var_os("CORRAL_BENCH_PYTHON").map(PathBuf::from),
        Some(venv),
        Some(PathBuf::from("python3")),
    ];
    let python = candidates.into_iter().flatten().find(|python| {
        Command::new(python)
            .args(["-m", "pytest", "--version"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })?;
    for module in 0..10 {
        std::fs::write(
            ws.join(format!("tests/test_configuration_module_{module}.py")),
            "import pytest\n\n\
             @pytest.mark.parametrize('case', [f'case-{n:03}-with-a-long-descriptive-identifier' for n in range(30)])\n\
             def test_parses_every_supported_configuration_format(case):\n    assert case\n",
        )
        .unwrap();
    }
    std::fs::write(
        ws.join("tests/test_zz_answer.py"),
        "def compute():\n    return 41\n\n\ndef test_answer():\n    assert compute() == 42, 'the answer drifted'\n",
    )
    .unwrap();
    Some(python)
}
