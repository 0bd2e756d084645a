//! What an effect becomes under each approval mode.

use corral_policy::{ApprovalMode, CommandCheck, Effect, Policy, Resolution, resolve};

use ApprovalMode::{Never, OnFailure, OnRequest, UnlessTrusted};
use Effect::{Allow, Ask, Deny};
use Resolution::{AskApprover, Refuse, Run};

#[test]
fn the_table() {
    // (mode, effect, known_safe, explicit) -> resolution
    let table = [
        (Never, Deny, true, true, Refuse),
        (Never, Ask, true, false, Refuse),
        (Never, Ask, false, true, Refuse),
        (Never, Allow, false, false, Run),
        (OnRequest, Deny, true, false, Refuse),
        (OnRequest, Ask, true, false, AskApprover),
        (OnRequest, Allow, false, false, Run),
        (UnlessTrusted, Deny, true, false, Refuse),
        (UnlessTrusted, Ask, true, false, Run),
        (UnlessTrusted, Ask, true, true, AskApprover),
        (UnlessTrusted, Ask, false, false, AskApprover),
        (UnlessTrusted, Allow, false, true, Run),
        (UnlessTrusted, Allow, true, false, Run),
        (UnlessTrusted, Allow, false, false, AskApprover),
        (OnFailure, Deny, true, true, Refuse),
        (OnFailure, Ask, true, false, AskApprover),
        (OnFailure, Allow, false, false, Run),
    ];
    for (mode, effect, safe, explicit, expected) in table {
        assert_eq!(
            resolve(mode, effect, safe, explicit),
            expected,
            "{mode} {effect} safe={safe} explicit={explicit}"
        );
    }
}

#[test]
fn serde_names() {
    for (mode, name) in [
        (Never, "\"never\""),
        (OnRequest, "\"on-request\""),
        (UnlessTrusted, "\"unless-trusted\""),
        (OnFailure, "\"on-failure\""),
    ] {
        assert_eq!(serde_json::to_string(&mode).unwrap(), name);
        assert_eq!(serde_json::from_str::<ApprovalMode>(name).unwrap(), mode);
    }
}

fn verdict(p: &Policy, argv: &[&str]) -> corral_policy::Verdict {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    p.check_command(&CommandCheck {
        argv: &argv,
        program_path: None,
    })
}

#[test]
fn verdicts_resolve_end_to_end() {
    let p = Policy::default()
        .layer("user")
        .ask_exec("git log*")
        .allow_exec("cargo test*")
        .deny_exec("rm");
    // Known safe, asked only by the tier default: runs.
    assert_eq!(verdict(&p, &["ls", "-la"]).resolve(UnlessTrusted), Run);
    assert_eq!(verdict(&p, &["ls", "-la"]).resolve(OnRequest), AskApprover);
    assert_eq!(verdict(&p, &["ls", "-la"]).resolve(Never), Refuse);
    // Known safe, but an explicit ask rule: still asks.
    assert_eq!(
        verdict(&p, &["git", "log"]).resolve(UnlessTrusted),
        AskApprover
    );
    // Explicitly allowed: runs.
    assert_eq!(verdict(&p, &["cargo", "test"]).resolve(UnlessTrusted), Run);
    // Neither: asks.
    assert_eq!(verdict(&p, &["make"]).resolve(UnlessTrusted), AskApprover);
    // Deny never reaches an approver.
    assert_eq!(verdict(&p, &["sudo", "rm", "x"]).resolve(OnRequest), Refuse);
    // A tier-default allow of an unknown command is asked about only under
    // unless-trusted.
    let p = Policy::permissive().allow_exec("cargo*");
    assert_eq!(verdict(&p, &["make"]).resolve(UnlessTrusted), AskApprover);
    assert_eq!(verdict(&p, &["make"]).resolve(OnRequest), Run);
    assert_eq!(
        verdict(&p, &["env", "cargo", "build"]).resolve(UnlessTrusted),
        Run
    );
}
