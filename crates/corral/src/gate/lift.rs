//! What lets exactly one refused or declined call through: the narrowest change a person
//! can make, in words they can follow literally, or plainly that no rule can.
//!
//! A verdict is the strictest of every decision it holds, so a lift must answer each
//! decision that did not allow: a default that asked takes an allow rule naming exactly
//! this command or path (glob characters escaped); a risky variable takes its `[env]`
//! rule; an inline program takes the `interpreter_one_liner` setting (which covers every
//! inline program: the text says so). An ask rule is not lifted by an allow (ask beats
//! allow), a built-in ask included, and a deny by nothing but its removal: then only a
//! person can decide, and the text says who.
//!
//! The rules are one [`Snippet`]: the decisions that land in one table (four risky
//! variables, say) make one header and one list, which pastes as TOML where four
//! `[env]` lines would be a duplicate key; the words end with it, on lines of their own,
//! after what to do in a file that has the table already.

use corral_policy::snippet::{Snippet, Value};
use corral_policy::{Act, Decision, Effect, Origin, Why};

/// What a question the gate makes of its own (no rule decided it) is reached through,
/// where a program corral cannot name may run: an inline program, a program a line makes.
pub(crate) const UNNAMED: &str = "what corral cannot name";

/// What a question the gate makes of its own about a call that would destroy work is
/// reached through, where the call's changes cannot be recorded for undo.
pub(crate) const UNRECORDED: &str = "what cannot be undone";

/// How a call that was not let through could be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lift {
    /// What a policy file would add: every rule and setting, one table each.
    Rules(Snippet),
    /// No rule in a file corral reads lets it through: who decides, and how.
    Nobody(String),
}

impl Lift {
    /// The lift for `decisions`, the ones of a check that did not allow.
    pub fn of<'d>(decisions: impl IntoIterator<Item = &'d Decision>) -> Lift {
        let mut rules = Snippet::new();
        for decision in decisions {
            if decision.effect == Effect::Allow {
                continue;
            }
            match one(decision) {
                Lift::Rules(more) => rules.merge(more),
                nobody => return nobody,
            }
        }
        if rules.is_empty() {
            return Lift::Nobody(
                "no rule decided it, so no rule can lift it: a person can approve it when asked"
                    .into(),
            );
        }
        Lift::Rules(rules)
    }

    /// The lift in words for a hint: where the rules go (the policy files, where the run's
    /// policy was read from them; else the run's own policy), ending with them as TOML on
    /// lines of their own; or who decides.
    pub fn words(&self, from_files: bool) -> String {
        match self {
            Lift::Rules(rules) if !from_files => format!(
                "to let exactly this through, the program that opened this run would add these \
                 rules to its policy; in a policy file, {}",
                rules.pasting()
            ),
            Lift::Rules(rules) => {
                let broad = if rules.tables().any(|t| t == "effects") {
                    " (an [effects] setting holds for every such program, not only this one)"
                } else {
                    ""
                };
                format!(
                    "to let exactly this through, add these lines{broad} to a policy file \
                     corral reads ({}, a file passed with --config, or the workspace's \
                     corral.toml once a person has trusted it with `corral policy trust`); {}",
                    crate::paths::user_config_path().map_or_else(
                        || "the user's config.toml".to_string(),
                        |p| format!("the user's {}", p.display())
                    ),
                    rules.pasting()
                )
            }
            Lift::Nobody(who) => who.clone(),
        }
    }
}

/// The lift for one decision that asked or denied.
fn one(decision: &Decision) -> Lift {
    // The host shell's own questions (a line outside a full sandbox, programs a parser
    // cannot name) are no setting's to lift: a person decides, or the line changes.
    if decision.via.iter().any(|v| v == UNRECORDED)
        && let Why::UnparsableInnerLine { refusal, .. } = &decision.why
    {
        return Lift::Nobody(format!(
            "{refusal}; no rule lifts that: a person approves it when corral asks"
        ));
    }
    if decision
        .via
        .iter()
        .any(|v| v == "host shell" || v == UNNAMED)
        && let Why::UnparsableInnerLine { refusal, .. } = &decision.why
    {
        return Lift::Nobody(format!(
            "{refusal}: no rule lifts that; a person approves it when corral asks, or write \
             the line so that corral can name every program it runs"
        ));
    }
    if decision.via.iter().any(|v| v == corral_policy::ADDED_WORDS)
        && let Why::UnparsableInnerLine { refusal, .. } = &decision.why
    {
        return Lift::Nobody(format!(
            "{refusal}: no setting lifts that; a person approves it when corral asks, or the \
             command is written out with the words it would run"
        ));
    }
    if let Some(rule) = &decision.rule {
        let (pattern, layer, origin) = (rule.pattern(), rule.layer(), rule.origin());
        if decision.effect == Effect::Deny {
            return Lift::Nobody(format!(
                "the rule {pattern:?} in layer {layer} ({origin}) denies it, and no approval or \
                 allow rule lifts a deny: only whoever keeps that file can remove the rule"
            ));
        }
        if *origin == Origin::Builtin {
            return Lift::Nobody(format!(
                "a built-in ask ({layer}, {pattern:?}): no rule lifts it, an allow included (ask \
                 beats allow); a person approves it when corral asks"
            ));
        }
        return Lift::Nobody(format!(
            "the ask rule {pattern:?} in layer {layer} ({origin}) asks about it, and an allow \
             rule does not lift an ask: a person approves it when corral asks, or whoever \
             keeps that file narrows the rule"
        ));
    }
    match &decision.why {
        Why::RiskyVariable { name, .. } => {
            Lift::Rules(Snippet::new().item("env", "allow", &escape_glob(name)))
        }
        Why::InterpreterOneLiner => Lift::Rules(allow_effect("interpreter_one_liner")),
        Why::ScriptFile { .. } => Lift::Rules(allow_effect("script_file")),
        Why::UnparsableInnerLine { .. } | Why::DepthLimit => {
            Lift::Rules(allow_effect("unparsable_inner_line"))
        }
        // A default decided (a rule would have been named above).
        _ => Lift::Rules(exact_allow(decision.act, &decision.target)),
    }
}

/// `[effects] key = "allow"`.
fn allow_effect(key: &str) -> Snippet {
    Snippet::new().set("effects", key, Value::Text("allow".into()))
}

/// The allow rule that names exactly `target`: the whole joined argv for a command, the
/// path for a read or a write, the `NAME` of a `NAME=value` assignment.
pub fn exact_allow(act: Act, target: &str) -> Snippet {
    let target = match act {
        Act::Env => target.split('=').next().unwrap_or(target),
        _ => target,
    };
    Snippet::new().item(act.name(), "allow", &escape_glob(target))
}

/// `text` as a glob that matches only itself.
fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_characters_are_escaped() {
        assert_eq!(
            exact_allow(Act::Exec, "echo x*y [a] {b}").to_string(),
            "[exec]\nallow = [\"echo x\\\\*y \\\\[a\\\\] \\\\{b\\\\}\"]\n"
        );
        assert_eq!(
            exact_allow(Act::Env, "PYTHONPATH=.").to_string(),
            "[env]\nallow = [\"PYTHONPATH\"]\n"
        );
    }
}
