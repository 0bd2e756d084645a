//! `check_command` never panics, whatever the argv.

use corral_policy::{CommandCheck, Policy};
use proptest::prelude::*;

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("env".to_string()),
        Just("sudo".to_string()),
        Just("bash".to_string()),
        Just("-c".to_string()),
        Just("-lc".to_string()),
        Just("find".to_string()),
        Just("-exec".to_string()),
        Just("-delete".to_string()),
        Just(";".to_string()),
        Just("xargs".to_string()),
        Just("timeout".to_string()),
        Just("python3".to_string()),
        Just("git".to_string()),
        Just("sed".to_string()),
        Just("rm".to_string()),
        Just("FOO=1".to_string()),
        Just("--".to_string()),
        any::<String>(),
        "[-a-z/=;|&' \"$*]{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn never_panics(argv in prop::collection::vec(word(), 0..10)) {
        let policy = Policy::default()
            .layer("ops")
            .deny_exec("rm")
            .allow_exec("cargo test*")
            .ask_exec("curl*")
            .deny_write("**/.env");
        let v = policy.check_command(&CommandCheck { argv: &argv, program_path: None });
        let _ = v.decisive();
        let _ = v.to_string();
        let _ = corral_policy::safe::is_known_safe(&argv);
        let _ = corral_policy::interactive::needs_terminal(&argv);
        let _ = policy.needs_terminal(&argv);
    }
}
