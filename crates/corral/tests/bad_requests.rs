//! Bad requests get clear errors that say what to do, their steps are recorded, and the
//! run goes on.

use crate::common;

use common::Fixture;
use corral::{ErrorKind, ExecRequest};

fn refused(request: ExecRequest) -> String {
    let fx = Fixture::new();
    std::fs::write(fx.workspace().join("a-file"), "").unwrap();
    let run = fx.run();
    let err = run.exec(&request).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidRequest, "{err}");
    assert!(
        run.exec(&ExecRequest::new(["true"]))
            .unwrap()
            .status
            .success(),
        "the run must go on"
    );
    err.to_string()
}

/// Refused with a hint even where a line outside the grammar would go to the host shell
/// (there, `bash -c ''` exits 0 having run nothing).
#[test]
fn an_empty_line() {
    let fx = Fixture::new();
    let run = corral::Run::builder(fx.workspace())
        .store(fx.store())
        .config(corral::Config {
            host_shell: corral::config::host_shell::HostShell::Ask,
            ..corral::Config::default()
        })
        .policy(corral::Policy::permissive())
        .approver(corral::approve::ApproveAll)
        .open()
        .unwrap();
    for line in ["", "   ", "\n\t"] {
        let err = run.shell(&corral::ShellRequest::new(line)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Refused, "{line:?}: {err}");
        assert!(err.to_string().contains("e.g. \"ls -l\""), "{err}");
    }
    assert!(
        run.exec(&ExecRequest::new(["true"]))
            .unwrap()
            .status
            .success()
    );
}

#[test]
fn an_empty_argv() {
    assert!(refused(ExecRequest::new(Vec::<String>::new())).contains("argv is empty"));
}

#[test]
fn a_nul_byte_in_an_argument() {
    assert!(refused(ExecRequest::new(["echo", "a\0b"])).contains("argv[1] contains a NUL byte"));
}

#[test]
fn a_cwd_that_does_not_exist() {
    assert!(refused(ExecRequest::new(["true"]).cwd("nope")).contains("does not exist"));
}

#[test]
fn a_cwd_that_is_a_file() {
    assert!(refused(ExecRequest::new(["true"]).cwd("a-file")).contains("not a directory"));
}

#[test]
fn a_cwd_outside_the_workspace() {
    assert!(refused(ExecRequest::new(["true"]).cwd("..")).contains("outside the workspace"));
}

#[test]
fn a_workspace_that_does_not_exist() {
    let fx = Fixture::new();
    let err = corral::Run::builder(fx.workspace().join("missing"))
        .store(fx.store())
        .open()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidRequest);
    assert!(err.to_string().contains("workspace"), "{err}");
}

/// A NUL byte in a shell line is the request's fault, said as such: not a start failure
/// blamed on the host.
#[test]
fn a_nul_in_a_shell_line_is_an_invalid_request() {
    let fx = Fixture::new();
    let run = fx.run();
    for line in ["echo a\0b", "for i in 1; do echo a\0b; done"] {
        let err = run
            .shell(&corral::ShellRequest::new(line))
            .expect_err("a NUL cannot reach a command line");
        assert_eq!(err.kind(), ErrorKind::InvalidRequest, "{err}");
        assert!(err.to_string().contains("NUL byte at byte"), "{err}");
    }
    let ok = run.shell(&corral::ShellRequest::new("echo fine")).unwrap();
    assert!(ok.status.success());
}

/// A call whose arguments cannot be read (a wrong type, an unknown field, a timeout that
/// is no duration) is a step of the trace too, ended `invalid` with what the model was
/// told.
#[test]
fn a_call_with_unreadable_arguments_is_recorded_invalid() {
    let fx = Fixture::new();
    let run = fx.run();
    for arguments in [
        serde_json::json!({"argv": "ls"}),
        serde_json::json!({"argv": ["ls"], "colour": true}),
        serde_json::json!({"argv": ["ls"], "timeout": "abc"}),
    ] {
        let timeout = arguments.get("timeout").is_some();
        let err = run
            .call_tool("exec", arguments, corral::CallOptions::default())
            .expect_err("unreadable");
        assert_eq!(err.kind(), ErrorKind::InvalidRequest, "{err}");
        // A timeout that is no duration says the form to write.
        if timeout {
            assert!(err.to_string().contains("e.g. 500ms"), "{err}");
        }
    }
    let store = corral::trace::Store::open_existing(&fx.store()).unwrap();
    let steps = store.steps(Some(run.id()), 100).unwrap();
    assert_eq!(steps.len(), 3, "{steps:?}");
    for step in &steps {
        assert_eq!(step.tool, "exec");
        assert_eq!(step.outcome.as_deref(), Some("invalid"), "{step:?}");
        assert!(step.call_json.contains("argv"), "{step:?}");
    }
}
