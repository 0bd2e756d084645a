//! Policy files stack as layers; each rule remembers its file and line; a malformed file
//! is a clear error naming where.

use crate::common;

use common::Fixture;
use corral::{ErrorKind, ExecRequest, Policy, PolicyFiles, Run};

#[test]
fn a_project_file_denies_and_the_refusal_names_its_line() {
    let fx = Fixture::new();
    std::fs::write(
        fx.workspace().join("corral.toml"),
        "[exec]\nallow = [\"cargo test*\"]\ndeny = [\"touch\"]\n",
    )
    .unwrap();
    let files = PolicyFiles::discover(&fx.workspace(), &[]).unwrap();
    assert_eq!(files.files.len(), 1);
    let policy = files.load_onto(Policy::permissive()).unwrap();
    let run = Run::builder(fx.workspace())
        .store(fx.store())
        .policy(policy)
        .open()
        .unwrap();
    let err = run.exec(&ExecRequest::new(["touch", "x"])).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert!(err.to_string().contains("corral.toml:3"), "{err}");
}

#[test]
fn a_malformed_file_names_file_line_and_column() {
    let fx = Fixture::new();
    let file = fx.dir.path().join("policy.toml");
    std::fs::write(&file, "[exec]\ndeny = [\"rm\"\n").unwrap();
    // A file a person named (and a trusted one) that does not parse stops the run.
    let files = PolicyFiles::discover(&fx.workspace(), std::slice::from_ref(&file)).unwrap();
    let err = files.load_onto(Policy::permissive()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidRequest);
    let text = err.to_string();
    assert!(
        text.contains("policy.toml:2:"),
        "file, line and column: {text}"
    );
}

#[test]
fn a_malformed_workspace_file_nobody_trusted_is_left_out_with_a_notice() {
    let fx = Fixture::new();
    std::fs::write(
        fx.workspace().join("corral.toml"),
        "[exec]\ndeny = [\"rm\"\n",
    )
    .unwrap();
    let files = PolicyFiles::discover(&fx.workspace(), &[]).unwrap();
    let policy = files.load_onto(Policy::permissive()).unwrap();
    let notices = policy.notices().join("\n");
    assert!(notices.contains("was left out"), "{notices}");
    assert!(notices.contains("corral.toml:2:"), "{notices}");
}

#[test]
fn an_unknown_effect_is_named() {
    let fx = Fixture::new();
    let file = fx.dir.path().join("extra.toml");
    std::fs::write(
        &file,
        "[[rule]]\nact = \"exec\"\npattern = \"ls\"\neffect = \"maybe\"\n",
    )
    .unwrap();
    let files = PolicyFiles::discover(&fx.workspace(), &[file]).unwrap();
    let err = files.load_onto(Policy::permissive()).unwrap_err();
    assert!(err.to_string().contains("maybe"), "{err}");
}

#[test]
fn an_untrusted_project_file_loosens_nothing_and_every_result_says_so() {
    let fx = Fixture::new();
    let file = fx.workspace().join("corral.toml");
    std::fs::write(
        &file,
        "approval = \"unless-trusted\"\n[exec]\nallow = [\"*\"]\ndeny = [\"rm\"]\n",
    )
    .unwrap();
    let trust = corral::TrustStore::at(fx.dir.path().join("trusted"));
    let open = |policy: Policy| {
        Run::builder(fx.workspace())
            .store(fx.store())
            .policy(policy)
            .open()
            .unwrap()
    };
    let files = PolicyFiles::discover(&fx.workspace(), &[]).unwrap();
    let policy = files
        .load_trusting(Policy::default(), Some(&trust))
        .unwrap();
    assert_eq!(
        policy.approval_mode(),
        None,
        "an untrusted approval was taken"
    );
    let run = open(policy);
    // Its allow does not apply: the default asks, and nobody approves.
    let err = run.exec(&ExecRequest::new(["touch", "made"])).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert!(err.to_string().contains("[policy] "), "{err}");
    assert!(err.to_string().contains("is not trusted"), "{err}");
    assert!(!fx.workspace().join("made").exists());
    // Its deny does.
    let err = run
        .exec(&ExecRequest::new(["rm", "corral.toml"]))
        .unwrap_err();
    assert!(err.to_string().contains("corral.toml:4"), "{err}");
    drop(run);

    trust.trust(&file).unwrap();
    let policy = files
        .load_trusting(Policy::default(), Some(&trust))
        .unwrap();
    assert!(policy.notices().is_empty(), "{:?}", policy.notices());
    let run = open(policy);
    let outcome = run.exec(&ExecRequest::new(["touch", "made"])).unwrap();
    assert!(outcome.status.success(), "{}", outcome.observation);
    assert!(!outcome.observation.contains("[policy]"));
    drop(run);

    // Untrusted again after a change, and a result that ran says so.
    std::fs::write(&file, "[exec]\nallow = [\"*\"]\n").unwrap();
    let policy = files
        .load_trusting(Policy::permissive(), Some(&trust))
        .unwrap();
    let run = open(policy);
    let outcome = run.exec(&ExecRequest::new(["true"])).unwrap();
    assert!(
        outcome.observation.contains("[policy] ") && outcome.observation.contains("not trusted"),
        "{}",
        outcome.observation
    );
}

/// A `corral.toml` a command links to a policy a person trusted elsewhere is not that
/// policy's trust, and one linked out of the workspace is not read at all: its parse
/// errors would show the model pieces of a file it may not read.
#[test]
fn a_linked_workspace_file_borrows_no_trust_and_shows_nothing_of_its_target() {
    let fx = Fixture::new();
    let trust = corral::TrustStore::at(fx.dir.path().join("trusted"));
    let elsewhere = fx.dir.path().join("project-b");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let trusted = elsewhere.join("corral.toml");
    std::fs::write(&trusted, "[exec]\nallow = [\"*\"]\n").unwrap();
    trust.trust(&trusted).unwrap();
    let link = fx.workspace().join("corral.toml");
    std::os::unix::fs::symlink(&trusted, &link).unwrap();
    let load = || {
        PolicyFiles::discover(&fx.workspace(), &[])
            .unwrap()
            .load_trusting(Policy::default(), Some(&trust))
            .unwrap()
    };
    let notices = load().notices().join("\n");
    assert!(notices.contains("is not trusted"), "{notices}");
    assert!(notices.contains("symbolic link"), "{notices}");

    // A link to a secret: nothing of it in what is said.
    let secret = fx.dir.path().join("credentials");
    std::fs::write(&secret, "GITHUB_TOKEN = \"ghp_marker\"\n[exec\n").unwrap();
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let notices = load().notices().join("\n");
    assert!(notices.contains("left out"), "{notices}");
    assert!(!notices.contains("GITHUB_TOKEN"), "{notices}");
    assert!(!notices.contains("ghp_marker"), "{notices}");

    // A link inside the workspace is read as its target is, and a person may trust it.
    std::fs::remove_file(&link).unwrap();
    std::fs::create_dir_all(fx.workspace().join("config")).unwrap();
    std::fs::write(
        fx.workspace().join("config/corral.toml"),
        "[exec]\ndeny = [\"rm\"]\nallow = [\"*\"]\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("config/corral.toml", &link).unwrap();
    let policy = load();
    assert!(
        policy
            .notices()
            .iter()
            .any(|n| n.contains("is not trusted") && !n.contains("symbolic link")),
        "{:?}",
        policy.notices()
    );
    trust.trust(&link).unwrap();
    assert!(load().notices().is_empty(), "{:?}", load().notices());
}
