//! Arguments, a working directory and environment values that are not UTF-8 reach the
//! program as the same bytes, the trace shows them escaped, and the policy checks them in
//! both their escaped and their lossy form.

use crate::common;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use common::{Fixture, testbin};
use corral::policy::{Act, Effect};
use corral::trace::Store;
use corral::{ErrorKind, ExecRequest, OsText, Policy, Run, Status};

fn bytes(b: &[u8]) -> OsText {
    OsText::from(b)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn run_with(fx: &Fixture, policy: Policy) -> Run {
    Run::builder(fx.workspace())
        .store(fx.store())
        .policy(policy)
        .open()
        .unwrap()
}

#[test]
fn arguments_that_are_not_utf8_arrive_as_their_bytes_and_the_trace_escapes_them() {
    let fx = Fixture::new();
    let run = fx.run();
    let args: [&[u8]; 4] = [b"\xff", b"a\\\xfeb", "é".as_bytes(), b"\\xff"];
    let mut argv = vec![OsText::from(testbin()), "hex-argv".into()];
    argv.extend(args.iter().map(|a| bytes(a)));
    let outcome = run.exec(&ExecRequest::new(argv)).unwrap();
    assert_eq!(outcome.status, Status::Exited { code: 0 });
    let expected: String = args.iter().map(|a| hex(a) + "\n").collect();
    assert_eq!(outcome.stdout.window.head, expected);

    let store = Store::open_existing(&fx.store()).unwrap();
    let step = store.steps(Some(run.id()), 1).unwrap().remove(0);
    let argv_json: Vec<String> = serde_json::from_str(step.argv_json.as_deref().unwrap()).unwrap();
    assert_eq!(
        &argv_json[2..],
        ["\\xff", "a\\\\\\xfeb", "é", "\\xff"],
        "invalid bytes as \\xHH, a backslash doubled where the argument is not UTF-8"
    );
    assert!(
        step.call_json.contains(r#""a\\\\\\xfeb""#),
        "{}",
        step.call_json
    );
}

#[test]
fn a_working_directory_and_environment_values_that_are_not_utf8_arrive_as_their_bytes() {
    let fx = Fixture::new();
    let dir = OsString::from_vec(b"d\xff".to_vec());
    std::fs::create_dir(fx.workspace().join(&dir)).unwrap();
    let run = fx.run();

    let pwd = run
        .exec(&ExecRequest::new([testbin().as_str(), "hex-pwd"]).cwd(dir.clone()))
        .unwrap();
    let mut want = fx.workspace().canonicalize().unwrap().into_os_string();
    want.push("/");
    want.push(&dir);
    assert_eq!(pwd.stdout.window.head, hex(want.as_encoded_bytes()) + "\n");

    let env = run
        .exec(&ExecRequest::new([testbin().as_str(), "hex-env", "V"]).env("V", bytes(b"v\xfe\\")))
        .unwrap();
    assert_eq!(env.stdout.window.head.lines().next(), Some("76fe5c"));

    let store = Store::open_existing(&fx.store()).unwrap();
    let steps = store.steps(Some(run.id()), 2).unwrap();
    let cwd_step = steps
        .iter()
        .find(|s| s.call_json.contains("hex-pwd"))
        .unwrap();
    assert!(cwd_step.cwd.ends_with("/d\\xff"), "{}", cwd_step.cwd);
}

#[test]
fn a_deny_rule_on_rm_refuses_rm_of_a_file_named_with_a_byte() {
    let fx = Fixture::new();
    let name = OsString::from_vec(b"\xff".to_vec());
    let file = fx.workspace().join(&name);
    std::fs::write(&file, "keep").unwrap();
    let run = run_with(
        &fx,
        Policy::permissive()
            .layer("operator")
            .rule(Act::Exec, "rm", Effect::Deny),
    );
    let err = run
        .exec(&ExecRequest::new([OsText::from("rm"), name.into()]))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(err.to_string().contains(r#"rule "rm""#), "{err}");
    assert!(file.exists(), "the refused rm ran");
}

#[test]
fn a_deny_rule_matching_only_the_lossy_form_still_refuses() {
    let fx = Fixture::new();
    // The rule names U+FFFD, the character a byte that is not UTF-8 shows as: the escaped
    // form `\xff` does not match it, the lossy form does.
    let run = run_with(
        &fx,
        Policy::permissive()
            .layer("operator")
            .rule(Act::Exec, "printf x\u{fffd}*", Effect::Deny),
    );
    let err = run
        .exec(&ExecRequest::new([
            OsText::from("printf"),
            bytes(b"x\xff%s"),
        ]))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    // And the same rule leaves an argument that matches neither form alone.
    let ok = run
        .exec(&ExecRequest::new([OsText::from("printf"), bytes(b"y\xff")]))
        .unwrap();
    assert_eq!(ok.status, Status::Exited { code: 0 });
    assert_eq!(ok.stdout.bytes, 2);
}

#[test]
fn a_program_named_with_a_byte_is_found_by_its_bytes_and_still_checked() {
    let fx = Fixture::new();
    let name = OsString::from_vec(b"prog\xff".to_vec());
    let prog = fx.workspace().join(&name);
    std::fs::copy(testbin(), &prog).unwrap();
    let mut argv0 = OsString::from("./");
    argv0.push(&name);

    // Allowed, it runs: the program was found by its bytes.
    let run = fx.run();
    let ok = run
        .exec(&ExecRequest::new([
            argv0.clone().into(),
            OsText::from("hex-argv"),
            "a".into(),
        ]))
        .unwrap();
    assert_eq!(ok.status, Status::Exited { code: 0 });
    assert_eq!(ok.stdout.window.head, "61\n");
    drop(run);

    // A rule on its name (as the lossy form reads it) refuses it.
    let run = run_with(
        &fx,
        Policy::permissive()
            .layer("operator")
            .rule(Act::Exec, "./prog*", Effect::Deny),
    );
    let err = run
        .exec(&ExecRequest::new([
            argv0.clone().into(),
            OsText::from("hex-argv"),
        ]))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    drop(run);

    // Under the default policy a program nobody allowed is not run unasked.
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .open()
        .unwrap();
    let err = run
        .exec(&ExecRequest::new([argv0.into(), OsText::from("hex-argv")]))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
}

#[test]
fn a_link_named_with_a_byte_to_a_denied_program_is_refused_by_identity() {
    let fx = Fixture::new();
    let rm = ["/usr/bin/rm", "/bin/rm"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("rm is installed");
    let name = OsString::from_vec(b"del\xff".to_vec());
    std::os::unix::fs::symlink(rm, fx.workspace().join(&name)).unwrap();
    std::fs::write(fx.workspace().join("victim"), "keep").unwrap();
    let run = run_with(
        &fx,
        Policy::permissive()
            .layer("operator")
            .rule(Act::Exec, "rm", Effect::Deny),
    );
    let mut argv0 = OsString::from("./");
    argv0.push(&name);
    let err = run
        .exec(&ExecRequest::new([argv0.into(), OsText::from("victim")]))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{err}");
    assert!(fx.workspace().join("victim").exists(), "the link to rm ran");
}

#[test]
fn a_call_that_may_become_a_handle_passes_bytes_too() {
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .exec(
            &ExecRequest::new([OsText::from(testbin()), "hex-argv".into(), bytes(b"\xfe")])
                .yield_after(60_000),
        )
        .unwrap();
    assert_eq!(outcome.status, Status::Exited { code: 0 });
    assert_eq!(outcome.stdout.window.head, "fe\n");
}
