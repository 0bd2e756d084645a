//! Layers × rules × targets → effect.

use corral_policy::{Act, Effect, Policy, Tier};

use Effect::{Allow, Ask, Deny};

type Layers = &'static [(&'static str, &'static [(Act, &'static str, Effect)])];

struct Case {
    tier: Tier,
    layers: Layers,
    act: Act,
    target: &'static str,
    expected: Effect,
    /// The layer of the deciding rule, or `None` for the default.
    layer: Option<&'static str>,
}

const CASES: &[Case] = &[
    // A deny in a lower layer beats an allow in a higher one.
    Case {
        tier: Tier::Permissive,
        layers: &[
            ("operator", &[(Act::Exec, "cargo publish*", Deny)]),
            ("project", &[(Act::Exec, "cargo*", Allow)]),
        ],
        act: Act::Exec,
        target: "cargo publish --token x",
        expected: Deny,
        layer: Some("operator"),
    },
    // ... and in a higher layer over a lower allow.
    Case {
        tier: Tier::Strict,
        layers: &[
            ("operator", &[(Act::Exec, "git*", Allow)]),
            ("project", &[(Act::Exec, "git push*", Deny)]),
        ],
        act: Act::Exec,
        target: "git push origin main",
        expected: Deny,
        layer: Some("project"),
    },
    Case {
        tier: Tier::Strict,
        layers: &[
            ("operator", &[(Act::Exec, "git*", Allow)]),
            ("project", &[(Act::Exec, "git push*", Deny)]),
        ],
        act: Act::Exec,
        target: "git status",
        expected: Allow,
        layer: Some("operator"),
    },
    // Ask beats allow, wherever they are.
    Case {
        tier: Tier::Permissive,
        layers: &[
            ("user", &[(Act::Exec, "curl", Ask)]),
            ("session", &[(Act::Exec, "curl*", Allow)]),
        ],
        act: Act::Exec,
        target: "curl https://example.com",
        expected: Ask,
        layer: Some("user"),
    },
    // Deny beats ask.
    Case {
        tier: Tier::Permissive,
        layers: &[
            ("user", &[(Act::Exec, "curl*", Ask)]),
            ("cli", &[(Act::Exec, "curl", Deny)]),
        ],
        act: Act::Exec,
        target: "curl x",
        expected: Deny,
        layer: Some("cli"),
    },
    // An allow beats the default.
    Case {
        tier: Tier::Strict,
        layers: &[("project", &[(Act::Exec, "cargo test*", Allow)])],
        act: Act::Exec,
        target: "cargo test -p foo",
        expected: Allow,
        layer: Some("project"),
    },
    // Program rules match by basename; argv rules by the joined argv.
    Case {
        tier: Tier::Permissive,
        layers: &[("operator", &[(Act::Exec, "rm", Deny)])],
        act: Act::Exec,
        target: "/bin/rm -rf /",
        expected: Deny,
        layer: Some("operator"),
    },
    Case {
        tier: Tier::Permissive,
        layers: &[("operator", &[(Act::Exec, "rm", Deny)])],
        act: Act::Exec,
        target: "rmdir x",
        expected: Allow,
        layer: None,
    },
    Case {
        tier: Tier::Default,
        layers: &[("operator", &[(Act::Exec, "git status", Allow)])],
        act: Act::Exec,
        target: "git status -s",
        expected: Ask,
        layer: None,
    },
    Case {
        tier: Tier::Permissive,
        layers: &[("operator", &[(Act::Exec, "rm*", Deny)])],
        act: Act::Exec,
        target: "rmdir x",
        expected: Deny,
        layer: Some("operator"),
    },
    // Tier defaults, per act.
    Case {
        tier: Tier::Permissive,
        layers: &[],
        act: Act::Exec,
        target: "anything",
        expected: Allow,
        layer: None,
    },
    Case {
        tier: Tier::Default,
        layers: &[],
        act: Act::Write,
        target: "/work/x",
        expected: Ask,
        layer: None,
    },
    Case {
        tier: Tier::Strict,
        layers: &[],
        act: Act::Read,
        target: "/work/x",
        expected: Deny,
        layer: None,
    },
    // Path rules: `*` stays in a component, `**` crosses.
    Case {
        tier: Tier::Permissive,
        layers: &[("operator", &[(Act::Write, "/work/**/secrets/*", Deny)])],
        act: Act::Write,
        target: "/work/a/b/secrets/key",
        expected: Deny,
        layer: Some("operator"),
    },
    Case {
        tier: Tier::Permissive,
        layers: &[("operator", &[(Act::Write, "/work/**/secrets/*", Deny)])],
        act: Act::Write,
        target: "/work/a/secrets/sub/key",
        expected: Allow,
        layer: None,
    },
    Case {
        tier: Tier::Permissive,
        layers: &[("operator", &[(Act::Read, "**/.env", Deny)])],
        act: Act::Read,
        target: "/work/app/.env",
        expected: Deny,
        layer: Some("operator"),
    },
    Case {
        tier: Tier::Permissive,
        layers: &[("operator", &[(Act::Read, ".env", Deny)])],
        act: Act::Read,
        target: "/work/app/.env",
        expected: Deny,
        layer: Some("operator"),
    },
    // A read rule says nothing about writes.
    Case {
        tier: Tier::Strict,
        layers: &[("operator", &[(Act::Read, "/work/**", Allow)])],
        act: Act::Write,
        target: "/work/x",
        expected: Deny,
        layer: None,
    },
];

#[test]
fn the_table_holds() {
    for (i, case) in CASES.iter().enumerate() {
        let mut policy = Policy::new(case.tier);
        for (name, rules) in case.layers {
            policy = policy.layer(name);
            for (act, pattern, effect) in *rules {
                policy = policy.rule(*act, pattern, *effect);
            }
        }
        let d = policy.check(case.act, case.target);
        assert_eq!(d.effect, case.expected, "case {i}: {d}");
        assert_eq!(
            d.rule.as_ref().map(|r| r.layer()),
            case.layer,
            "case {i}: {d}"
        );
        assert_eq!(d.act, case.act);
    }
}

#[test]
fn layer_order_does_not_change_the_effect() {
    let a = Policy::permissive()
        .layer("one")
        .allow_exec("npm*")
        .layer("two")
        .deny_exec("npm publish*");
    let b = Policy::permissive()
        .layer("two")
        .deny_exec("npm publish*")
        .layer("one")
        .allow_exec("npm*");
    for p in [a, b] {
        assert_eq!(p.check(Act::Exec, "npm publish").effect, Deny);
        assert_eq!(p.check(Act::Exec, "npm test").effect, Allow);
    }
}

#[test]
fn a_per_act_default_overrides_the_tier() {
    let p = Policy::default().default_effect(Act::Read, Allow);
    assert_eq!(p.check(Act::Read, "/etc/hosts").effect, Allow);
    assert_eq!(p.check(Act::Write, "/etc/hosts").effect, Ask);
    assert_eq!(p.check(Act::Exec, "ls").effect, Ask);
    assert_eq!(Policy::default().default_for(Act::Exec), Ask);
}

#[test]
fn decisions_display_like_check_ignore() {
    let file = corral_policy::config::parse(
        "[exec]\nallow = [\"ls\"]\n\ndeny = [\"rm\"]\n",
        "/etc/corral/policy.toml",
        "operator",
    )
    .unwrap();
    let p = Policy::permissive().with_file(file);
    assert_eq!(
        p.check(Act::Exec, "rm -rf x").to_string(),
        "deny  exec  rm -rf x  (rule \"rm\" in layer operator, /etc/corral/policy.toml:4)"
    );
    assert_eq!(
        Policy::default().check(Act::Exec, "cargo test").to_string(),
        "ask   exec  cargo test  (default for exec in tier default)"
    );
    let json = serde_json::to_value(p.check(Act::Exec, "rm x")).unwrap();
    assert_eq!(json["effect"], "deny");
    assert_eq!(json["rule"]["layer"], "operator");
    assert_eq!(json["rule"]["origin"]["line"], 4);
}
