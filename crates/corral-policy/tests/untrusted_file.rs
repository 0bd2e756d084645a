//! A file nobody trusted only tightens the policy.

use corral_policy::{Act, ApprovalMode, Effect, Policy, Tier, config};

#[test]
fn an_untrusted_file_keeps_denies_and_asks_and_drops_what_loosens() {
    let text = "tier = \"permissive\"\napproval = \"never\"\n[defaults]\nexec = \"deny\"\n\
                [exec]\nallow = [\"*\"]\nask = [\"curl*\"]\ndeny = [\"rm\"]\n\
                [env]\nallow = [\"LD_PRELOAD\"]\n[interactive]\nallow = [\"vim\"]\n";
    let mut file = config::parse(text, "ws/corral.toml", "project").unwrap();
    file.untrusted = true;
    let policy = Policy::new(Tier::Default).with_file(file);
    assert_eq!(
        policy.current_tier(),
        Tier::Default,
        "a looser tier was taken"
    );
    assert_eq!(
        policy.default_for(Act::Exec),
        Effect::Deny,
        "a stricter default was lost"
    );
    assert_eq!(policy.approval_mode(), None::<ApprovalMode>);
    assert_eq!(policy.check(Act::Exec, "rm x").effect, Effect::Deny);
    assert_eq!(policy.check(Act::Exec, "curl x").effect, Effect::Ask);
    assert_eq!(policy.check(Act::Exec, "ls").effect, Effect::Deny);
    assert_eq!(policy.check(Act::Env, "LD_PRELOAD=x").effect, Effect::Ask);
    assert!(policy.needs_terminal(&["vim".to_string()]).is_some());
    let notices = policy.notices();
    assert_eq!(notices.len(), 1);
    assert!(
        notices[0].contains("ws/corral.toml is not trusted")
            && notices[0].contains("2 allow rules, `approval`, `[interactive] allow`"),
        "{notices:?}"
    );
    assert!(
        policy
            .describe()
            .starts_with("note: ws/corral.toml is not trusted")
    );
}

#[test]
fn an_untrusted_file_hides_more_but_opens_no_domain() {
    let text = "[sandbox]\ndeny_read = [\"~/.secrets\"]\nnetwork_allow = [\"npm\"]\n";
    let trusted = config::parse(text, "a.toml", "user").unwrap();
    let policy = Policy::new(Tier::Default).with_file(trusted);
    assert_eq!(policy.sandbox_deny_read(), ["~/.secrets"]);
    assert_eq!(policy.sandbox_network_allow(), ["npm"]);
    let mut untrusted = config::parse(text, "ws/corral.toml", "project").unwrap();
    untrusted.untrusted = true;
    let policy = Policy::new(Tier::Default).with_file(untrusted);
    assert_eq!(policy.sandbox_deny_read(), ["~/.secrets"]);
    assert!(policy.sandbox_network_allow().is_empty());
    assert!(
        policy.notices()[0].contains("`[sandbox] network_allow`"),
        "{:?}",
        policy.notices()
    );
    assert!(config::parse("[sandbox]\nallow_all = true\n", "b.toml", "user").is_err());
}

#[test]
fn an_untrusted_file_cannot_let_git_write_but_can_stop_it() {
    let allow = "[sandbox]\ngit_write = true\n";
    let trusted = config::parse(allow, "a.toml", "user").unwrap();
    let policy = Policy::new(Tier::Default).with_file(trusted);
    assert_eq!(policy.sandbox_git_write(), Some(true));
    let mut untrusted = config::parse(allow, "ws/corral.toml", "project").unwrap();
    untrusted.untrusted = true;
    let policy = Policy::new(Tier::Default).with_file(untrusted);
    assert_eq!(policy.sandbox_git_write(), None);
    assert!(
        policy.notices()[0].contains("`[sandbox] git_write`"),
        "{:?}",
        policy.notices()
    );
    // Turning it off only tightens: that is taken from anyone.
    let mut off = config::parse(
        "[sandbox]\ngit_write = false\n",
        "ws/corral.toml",
        "project",
    )
    .unwrap();
    off.untrusted = true;
    let policy = Policy::new(Tier::Default)
        .with_file(config::parse(allow, "a.toml", "user").unwrap())
        .with_file(off);
    assert_eq!(policy.sandbox_git_write(), Some(false));
}
