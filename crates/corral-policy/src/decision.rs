//! What a check returns: one [`Decision`] per thing checked, and a
//! [`Verdict`] over a whole command and everything it would run.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde::ser::SerializeStruct;

use crate::approval::{ApprovalMode, Resolution, resolve};
use crate::model::{Act, Effect, Origin, Tier};
use crate::pattern::Rule;

/// The rule that decided, and where it sits in the stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchedRule {
    rule: Rule,
    layer: Arc<str>,
}

impl MatchedRule {
    pub(crate) fn new(rule: Rule, layer: Arc<str>) -> Self {
        MatchedRule { rule, layer }
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        self.rule.pattern()
    }

    /// The layer the rule is in.
    pub fn layer(&self) -> &str {
        &self.layer
    }

    /// Where the rule came from.
    pub fn origin(&self) -> &Origin {
        self.rule.origin()
    }

    /// The rule itself.
    pub fn rule(&self) -> &Rule {
        &self.rule
    }
}

impl Serialize for MatchedRule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("MatchedRule", 4)?;
        st.serialize_field("pattern", self.pattern())?;
        st.serialize_field("effect", &self.rule.effect())?;
        st.serialize_field("layer", self.layer())?;
        st.serialize_field("origin", self.origin())?;
        st.end()
    }
}

/// Why a decision came out as it did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Why {
    /// A rule matched (see [`Decision::rule`]).
    Rule,
    /// No rule matched: the tier's default for this act.
    TierDefault {
        /// The policy's tier.
        tier: Tier,
    },
    /// No rule matched: the default set for this act in particular.
    ActDefault,
    /// A shell line inside the command could not be parsed, so what it runs
    /// is unknown; the `unparsable_inner_line` setting decided (or, when
    /// [`Decision::rule`] is set, a word of the line named a denied program).
    UnparsableInnerLine {
        /// The line.
        line: String,
        /// Why the grammar refused it.
        refusal: String,
    },
    /// An interpreter's inline program (`python -c`): the
    /// `interpreter_one_liner` setting decided.
    InterpreterOneLiner,
    /// A script file (or stdin) that cannot be read here: the `script_file`
    /// setting decided.
    ScriptFile {
        /// The script as named (`-` for stdin).
        script: String,
    },
    /// Commands nested deeper than [`crate::MAX_DEPTH`]; decided as an
    /// unparsable inner line.
    DepthLimit,
    /// An assignment to a variable that makes programs run other code or
    /// read other configuration, and no `[env]` rule named it: the built-in
    /// default (`ask`, or the tier's default when stricter). See
    /// [`crate::envvars`].
    RiskyVariable {
        /// The variable.
        name: String,
        /// What it does.
        reason: String,
    },
    /// The program is the same file (device and inode, after symlinks) as a
    /// program a rule names, found by the caller: the rule in
    /// [`Decision::rule`] decided as if it had been named.
    SameFile {
        /// The file the rule's program was found at.
        path: String,
        /// Its device.
        device: u64,
        /// Its inode.
        inode: u64,
    },
}

/// What the caller found out about the file a program runs from: it is the
/// same file (device and inode, symlinks resolved) as `path`, a program an
/// exec rule names. Finding this needs the filesystem, so the library does
/// it while planning and hands it to [`crate::Policy::check_simple`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct SameFile {
    /// The program as written in the argv (`./del`, `del`).
    pub program: String,
    /// Where the ruled program was found (`/usr/bin/rm`).
    pub path: String,
    /// The file's device.
    pub device: u64,
    /// The file's inode.
    pub inode: u64,
}

/// One check: the effect, what was checked, and what decided it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// What happens.
    pub effect: Effect,
    /// What was checked.
    pub act: Act,
    /// The joined argv, or the path.
    pub target: String,
    /// The matching rule, or `None` when a default or a setting decided.
    pub rule: Option<MatchedRule>,
    /// Why.
    pub why: Why,
    /// For a command found inside another: how it was reached, outermost
    /// first (`["env", "bash -c", "nice"]`). Empty for the command itself.
    pub via: Vec<String>,
    /// Whether this command runs another one that was checked as well.
    pub wrapper: bool,
}

impl Decision {
    /// Whether a rule or an explicit setting decided (rather than a default).
    pub fn is_explicit(&self) -> bool {
        !matches!(self.why, Why::TierDefault { .. } | Why::ActDefault) || self.rule.is_some()
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:<5} {:<5} {}  (", self.effect, self.act, self.target)?;
        let rule = |f: &mut fmt::Formatter<'_>, r: &MatchedRule| {
            write!(
                f,
                "rule {:?} in layer {}, {}",
                r.pattern(),
                r.layer(),
                r.origin()
            )
        };
        match (&self.why, &self.rule) {
            (Why::Rule, Some(r)) => rule(f, r)?,
            (Why::Rule, None) => f.write_str("rule")?,
            (Why::TierDefault { tier }, _) => write!(f, "default for {} in tier {tier}", self.act)?,
            (Why::ActDefault, _) => write!(f, "default for {} set to {}", self.act, self.effect)?,
            (Why::UnparsableInnerLine { refusal, .. }, r) => {
                write!(f, "inner line not checkable: {refusal}")?;
                match r {
                    Some(r) => {
                        f.write_str("; a word names a denied program: ")?;
                        rule(f, r)?;
                    }
                    None => write!(f, "; unparsable_inner_line = {}", self.effect)?,
                }
            }
            (Why::InterpreterOneLiner, Some(r)) => {
                f.write_str("inline program not checkable; a word names a denied program: ")?;
                rule(f, r)?;
            }
            (Why::InterpreterOneLiner, None) => write!(
                f,
                "inline program not checkable; interpreter_one_liner = {}",
                self.effect
            )?,
            (Why::ScriptFile { script }, _) => write!(
                f,
                "script {script:?} not checkable; script_file = {}",
                self.effect
            )?,
            (Why::DepthLimit, _) => write!(
                f,
                "nested deeper than {}; unparsable_inner_line = {}",
                crate::MAX_DEPTH,
                self.effect
            )?,
            (Why::RiskyVariable { name, reason }, r) => {
                write!(f, "{name}: {reason}")?;
                match r {
                    Some(r) => {
                        f.write_str("; ")?;
                        rule(f, r)?;
                    }
                    None => write!(f, "; built-in default for env = {}", self.effect)?,
                }
            }
            (
                Why::SameFile {
                    path,
                    device,
                    inode,
                },
                r,
            ) => {
                write!(
                    f,
                    "the program is the same file as {path} (device {device}, inode {inode})"
                )?;
                if let Some(r) = r {
                    f.write_str("; ")?;
                    rule(f, r)?;
                }
            }
        }
        if !self.via.is_empty() {
            write!(f, "; via {}", self.via.join(" > "))?;
        }
        f.write_str(")")
    }
}

/// Why a command needs a terminal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Terminal {
    /// The joined argv of the (possibly inner) command that needs it.
    pub command: String,
    /// Why.
    pub reason: &'static str,
}

/// The decision over a whole command: the strictest of its own decision and
/// those of every command it would run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// The strictest effect of all decisions.
    pub effect: Effect,
    /// The command's own decision first, then every inner one in the order
    /// found (including redirects inside `sh -c` lines).
    pub decisions: Vec<Decision>,
    /// [`crate::safe::is_known_safe`] of the command.
    pub known_safe: bool,
    /// Whether the effect was chosen explicitly (by a rule or a setting)
    /// rather than by a default. For `Allow`, every non-wrapper decision
    /// must be explicit; for `Ask`/`Deny`, any decision with that effect.
    pub explicit: bool,
    /// Set when the command (or one it runs) needs a terminal.
    pub needs_terminal: Option<Terminal>,
    /// Why the command is not known-safe, when it is not (the flag,
    /// variable or program that made it so); `None` when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_safe: Option<String>,
    /// `argv[0]` of the command and of every command it would run, in the
    /// order found: what a caller resolves to find [`SameFile`]s.
    #[serde(skip)]
    pub programs: Vec<String>,
}

impl Verdict {
    pub(crate) fn from_decisions(
        decisions: Vec<Decision>,
        not_safe: Option<String>,
        needs_terminal: Option<Terminal>,
        programs: Vec<String>,
    ) -> Verdict {
        let known_safe = not_safe.is_none();
        let effect = decisions
            .iter()
            .map(|d| d.effect)
            .max()
            .unwrap_or(Effect::Deny);
        let explicit = match effect {
            Effect::Allow => decisions
                .iter()
                .filter(|d| !d.wrapper)
                .all(Decision::is_explicit),
            _ => decisions
                .iter()
                .any(|d| d.effect == effect && d.is_explicit()),
        };
        Verdict {
            effect,
            decisions,
            known_safe,
            explicit,
            needs_terminal,
            not_safe,
            programs,
        }
    }

    /// The decision that produced the effect: the first explicit one with
    /// that effect, else the first with that effect.
    pub fn decisive(&self) -> &Decision {
        self.decisions
            .iter()
            .find(|d| d.effect == self.effect && d.is_explicit())
            .or_else(|| self.decisions.iter().find(|d| d.effect == self.effect))
            .unwrap_or(&self.decisions[0])
    }

    /// What to do under `mode`: see [`resolve`].
    pub fn resolve(&self, mode: ApprovalMode) -> Resolution {
        resolve(mode, self.effect, self.known_safe, self.explicit)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.decisions.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}
