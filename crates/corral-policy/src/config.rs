//! Policy files (TOML).
//!
//! ```toml
//! tier = "default"             # permissive | default | strict
//! approval = "unless-trusted"  # never | on-request | unless-trusted | on-failure
//!
//! [defaults]                   # per-act default, overriding the tier's
//! read = "allow"
//!
//! [effects]
//! unparsable_inner_line = "ask"
//! interpreter_one_liner = "ask"
//! script_file = "ask"          # unset: the decision for the interpreter stands
//!
//! [exec]                       # compact form: act table, one list per effect
//! allow = ["cargo test*", "npm*"]
//! deny = ["rm", "git push*"]
//! ask = ["curl*"]
//!
//! [write]
//! deny = ["**/.git/hooks/**"]
//!
//! [env]                        # assignments in front of a command (NAME or NAME=value globs)
//! deny = ["LD_*"]
//! allow = ["PYTHONPATH"]       # lifts the built-in ask for a risky name (see envvars)
//!
//! [[rule]]                     # long form: one rule per entry
//! act = "exec"
//! pattern = "cargo publish*"
//! effect = "deny"
//!
//! [interactive]
//! programs = ["my-tui"]        # also needs a terminal
//! allow = ["psql"]             # never treated as needing one
//!
//! [sandbox]                    # read by corral's sandbox, not the policy
//! deny_read = ["~/.secrets"]   # hidden from sandboxed commands, beside the defaults
//! network_allow = ["npm", "*.example.org"]  # names the run's proxy lets through
//! git_write = true                            # git may write .git (hooks, config stay read-only)
//! home_read = ["~/tools"]      # seen of the home besides the toolchains ("~": all of it)
//!
//! [limits]                     # read by corral, not the policy
//! memory = "4G"                # one call's processes together; "none" for no bound
//! ```
//!
//! Every key is optional; unknown keys are errors. Each rule remembers the
//! file and line of its pattern. Rules keep the order they appear in the
//! file.
//!
//! When files are stacked with [`crate::Policy::push_file`], the first file
//! to set `tier`, a `[defaults]` entry or an `[effects]` entry sets it, and
//! later files can only make it stricter (so a project file cannot loosen
//! the operator's base). `approval` is taken from the last file that sets
//! it. `[interactive]` lists are merged.

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use crate::approval::ApprovalMode;
use crate::model::{Act, Effect, Origin, Tier};
use crate::pattern::Rule;

/// A configuration file that could not be read, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {kind}")]
pub struct ConfigError {
    /// The file, as given to [`parse`].
    pub file: String,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    /// What is wrong.
    pub kind: ConfigErrorKind,
}

/// What is wrong with a configuration file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// Not TOML, a value of the wrong type, a missing or unknown key.
    #[error("{0}")]
    Syntax(String),
    /// A value outside its enumeration.
    #[error("unknown {what} \"{value}\"; expected one of: {valid}")]
    UnknownValue {
        /// `act`, `effect`, `tier` or `approval`.
        what: &'static str,
        /// The value as written.
        value: String,
        /// The valid values, comma-separated.
        valid: &'static str,
    },
    /// A number outside the range it must be in.
    #[error("{what} = {value} is out of range: {expected}")]
    OutOfRange {
        /// The key, as `[table] key`.
        what: &'static str,
        /// The value as written.
        value: i64,
        /// The range, and what to write instead.
        expected: String,
    },
    /// A pattern that is empty.
    #[error("empty pattern")]
    EmptyPattern,
    /// A pattern that is not a valid glob.
    #[error("invalid glob \"{pattern}\": {message}")]
    BadGlob {
        /// The pattern as written.
        pattern: String,
        /// What the glob parser said.
        message: String,
    },
}

/// A parsed policy file, ready for [`crate::Policy::push_file`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PolicyFile {
    /// The layer its rules go to.
    pub layer: String,
    /// The file name used in messages and rule origins.
    pub origin: String,
    /// `tier`.
    pub tier: Option<Tier>,
    /// `approval`.
    pub approval: Option<ApprovalMode>,
    /// `[defaults]`.
    pub defaults: Vec<(Act, Effect)>,
    /// `[effects] unparsable_inner_line`.
    pub unparsable_inner_line: Option<Effect>,
    /// `[effects] interpreter_one_liner`.
    pub interpreter_one_liner: Option<Effect>,
    /// `[effects] script_file`.
    pub script_file: Option<Effect>,
    /// Every rule, in file order.
    pub rules: Vec<Rule>,
    /// `[interactive] programs`.
    pub interactive_programs: Vec<String>,
    /// `[interactive] allow`.
    pub interactive_allow: Vec<String>,
    /// `[sandbox] deny_read`: more paths hidden from sandboxed commands.
    pub sandbox_deny_read: Vec<String>,
    /// `[sandbox] network_allow`: names (or presets) the sandbox's proxy lets through.
    pub sandbox_network_allow: Vec<String>,
    /// `[sandbox] home_read`: paths of the home (`~/…`, or `~` for all of it) the box
    /// sees besides the toolchains.
    pub sandbox_home_read: Vec<String>,
    /// `[sandbox] git_write`: whether git may write its metadata in the box (its hooks and
    /// config stay read-only).
    pub sandbox_git_write: Option<bool>,
    /// Nobody has trusted this content yet (a workspace file that is new or
    /// changed since a person last trusted it): [`crate::Policy::push_file`]
    /// takes only what tightens (deny and ask rules, stricter settings,
    /// programs added to the interactive list) and records what it ignored
    /// in [`crate::Policy::notices`].
    pub untrusted: bool,
    /// `[shell] host_shell`: `sandboxed`, `ask` or `never`. Read by corral itself (whether a
    /// line outside its grammar may run through `bash -c`); the policy does not use it.
    pub host_shell: Option<String>,
    /// `[shell] persist_cwd`: whether a final `cd` (or a call's `cwd`) sets where the run's
    /// later calls start. Read by corral itself; the policy does not use it.
    pub persist_cwd: Option<bool>,
    /// `[output] budget`: the bytes of output text one result shows (both streams), from
    /// [`OUTPUT_BUDGET_MIN`] to [`OUTPUT_BUDGET_MAX`]. Read by corral itself; the policy
    /// does not use it.
    pub output_budget: Option<usize>,
    /// `[limits] memory`: a call's memory bound. Read by corral itself; the policy does
    /// not use it.
    pub limits_memory: Option<crate::limits::MemoryLimit>,
    /// `[undo] max_files`: past this many files the workspace is not recorded for undo.
    /// Read by corral itself; the policy does not use it.
    pub undo_max_files: Option<u64>,
    /// `[undo] max_mb`: past this many megabytes the workspace is not recorded for undo.
    /// Read by corral itself; the policy does not use it.
    pub undo_max_mb: Option<u64>,
    /// `[undo] store_max_mb`: the megabytes one run's records may add to the undo store;
    /// a record past it is skipped and the call counts as unrecorded. Read by corral
    /// itself; the policy does not use it.
    pub undo_store_max_mb: Option<u64>,
}

/// The least `[output] budget` (and a call's `max_output`) may be: less shows a model too
/// little of an output to tell what happened.
pub const OUTPUT_BUDGET_MIN: usize = 1024;

/// The most `[output] budget` (and a call's `max_output`) may be: more is a context
/// window's worth of log; the rest of an output is read with the `output` tool.
pub const OUTPUT_BUDGET_MAX: usize = 64 * 1024;

impl PolicyFile {
    /// What this file would loosen, each as a short phrase (`2 allow rules`,
    /// `approval`), for the notice that it was ignored.
    pub fn loosening(&self) -> Vec<String> {
        let mut out = Vec::new();
        let allows = self
            .rules
            .iter()
            .filter(|r| r.effect() == Effect::Allow)
            .count();
        if allows > 0 {
            out.push(format!(
                "{allows} allow rule{}",
                if allows == 1 { "" } else { "s" }
            ));
        }
        if self.approval.is_some() {
            out.push("`approval`".to_string());
        }
        if !self.interactive_allow.is_empty() {
            out.push("`[interactive] allow`".to_string());
        }
        if !self.sandbox_network_allow.is_empty() {
            out.push("`[sandbox] network_allow`".to_string());
        }
        if !self.sandbox_home_read.is_empty() {
            out.push("`[sandbox] home_read`".to_string());
        }
        if self.sandbox_git_write == Some(true) {
            out.push("`[sandbox] git_write`".to_string());
        }
        out
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    tier: Option<Spanned<String>>,
    approval: Option<Spanned<String>>,
    defaults: Option<RawDefaults>,
    effects: Option<RawEffects>,
    #[serde(default)]
    rule: Vec<RawRule>,
    exec: Option<RawLists>,
    read: Option<RawLists>,
    write: Option<RawLists>,
    env: Option<RawLists>,
    interactive: Option<RawInteractive>,
    sandbox: Option<RawSandbox>,
    /// `[verify]`: the task gate, read by corral's task module, not the policy.
    #[allow(dead_code)]
    verify: Option<serde::de::IgnoredAny>,
    shell: Option<RawShell>,
    output: Option<RawOutput>,
    limits: Option<RawLimits>,
    undo: Option<RawUndo>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUndo {
    max_files: Option<Spanned<i64>>,
    max_mb: Option<Spanned<i64>>,
    store_max_mb: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    memory: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutput {
    budget: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShell {
    host_shell: Option<Spanned<String>>,
    persist_cwd: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDefaults {
    exec: Option<Spanned<String>>,
    read: Option<Spanned<String>>,
    write: Option<Spanned<String>>,
    env: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEffects {
    unparsable_inner_line: Option<Spanned<String>>,
    interpreter_one_liner: Option<Spanned<String>>,
    script_file: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    act: Spanned<String>,
    pattern: Spanned<String>,
    effect: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLists {
    #[serde(default)]
    allow: Vec<Spanned<String>>,
    #[serde(default)]
    ask: Vec<Spanned<String>>,
    #[serde(default)]
    deny: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInteractive {
    #[serde(default)]
    programs: Vec<String>,
    #[serde(default)]
    allow: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSandbox {
    #[serde(default)]
    deny_read: Vec<String>,
    #[serde(default)]
    network_allow: Vec<String>,
    #[serde(default)]
    home_read: Vec<Spanned<String>>,
    git_write: Option<bool>,
}

struct Ctx<'a> {
    text: &'a str,
    origin: &'a str,
}

impl Ctx<'_> {
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..self.text.floor_char_boundary(offset)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }

    fn error(&self, span: Option<Range<usize>>, kind: ConfigErrorKind) -> ConfigError {
        let (line, column) = self.line_col(span.map_or(0, |s| s.start));
        ConfigError {
            file: self.origin.to_string(),
            line,
            column,
            kind,
        }
    }

    fn value<T>(
        &self,
        v: &Spanned<String>,
        what: &'static str,
        valid: &'static str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<T, ConfigError> {
        parse(v.get_ref()).ok_or_else(|| {
            self.error(
                Some(v.span()),
                ConfigErrorKind::UnknownValue {
                    what,
                    value: v.get_ref().clone(),
                    valid,
                },
            )
        })
    }

    fn effect(&self, v: &Spanned<String>) -> Result<Effect, ConfigError> {
        self.value(v, "effect", "allow, ask, deny", Effect::from_name)
    }

    fn rule(
        &self,
        act: Act,
        pattern: &Spanned<String>,
        effect: Effect,
    ) -> Result<(usize, Rule), ConfigError> {
        let span = pattern.span();
        let (line, _) = self.line_col(span.start);
        let origin = Origin::File {
            path: self.origin.to_string(),
            line: line as u32,
        };
        let text = pattern.get_ref();
        if text.trim().is_empty() {
            return Err(self.error(Some(span), ConfigErrorKind::EmptyPattern));
        }
        Rule::new(act, text.as_str(), effect, origin)
            .map(|r| (span.start, r))
            .map_err(|e| {
                self.error(
                    Some(span),
                    ConfigErrorKind::BadGlob {
                        pattern: text.clone(),
                        message: e.message,
                    },
                )
            })
    }
}

/// Parse a policy file. `origin` names the file in messages and in each
/// rule's [`Origin`]; `layer` is the layer its rules go to.
pub fn parse(text: &str, origin: &str, layer: &str) -> Result<PolicyFile, ConfigError> {
    let ctx = Ctx { text, origin };
    let raw: Raw = toml::from_str(text)
        .map_err(|e| ctx.error(e.span(), ConfigErrorKind::Syntax(e.message().to_string())))?;
    let mut file = PolicyFile {
        layer: layer.to_string(),
        origin: origin.to_string(),
        ..PolicyFile::default()
    };
    if let Some(t) = &raw.tier {
        file.tier = Some(ctx.value(t, "tier", "permissive, default, strict", Tier::from_name)?);
    }
    if let Some(a) = &raw.approval {
        file.approval = Some(ctx.value(
            a,
            "approval",
            "never, on-request, unless-trusted, on-failure",
            ApprovalMode::from_name,
        )?);
    }
    if let Some(h) = raw.shell.as_ref().and_then(|s| s.host_shell.as_ref()) {
        file.host_shell = Some(ctx.value(h, "host_shell", "sandboxed, ask, never", |v| {
            ["sandboxed", "ask", "never"]
                .contains(&v)
                .then(|| v.to_string())
        })?);
    }
    file.persist_cwd = raw.shell.as_ref().and_then(|s| s.persist_cwd);
    if let Some(b) = raw.output.as_ref().and_then(|o| o.budget.as_ref()) {
        let value = *b.get_ref();
        let range = OUTPUT_BUDGET_MIN as i64..=OUTPUT_BUDGET_MAX as i64;
        if !range.contains(&value) {
            return Err(ctx.error(
                Some(b.span()),
                ConfigErrorKind::OutOfRange {
                    what: "[output] budget",
                    value,
                    expected: format!(
                        "give the bytes of output one result shows, from {OUTPUT_BUDGET_MIN} to \
                         {OUTPUT_BUDGET_MAX}, e.g. 12288 (the default); the rest of an output \
                         is read with the output tool"
                    ),
                },
            ));
        }
        file.output_budget = Some(value as usize);
    }
    if let Some(m) = raw.limits.as_ref().and_then(|l| l.memory.as_ref()) {
        let parsed = crate::limits::parse_memory(m.get_ref())
            .map_err(|why| ctx.error(Some(m.span()), ConfigErrorKind::Syntax(why)))?;
        file.limits_memory = Some(parsed);
    }
    if let Some(undo) = &raw.undo {
        for (value, what, to) in [
            (
                &undo.max_files,
                "[undo] max_files",
                &mut file.undo_max_files,
            ),
            (&undo.max_mb, "[undo] max_mb", &mut file.undo_max_mb),
            (
                &undo.store_max_mb,
                "[undo] store_max_mb",
                &mut file.undo_store_max_mb,
            ),
        ] {
            let Some(v) = value else { continue };
            let n = *v.get_ref();
            if n < 0 {
                return Err(ctx.error(
                    Some(v.span()),
                    ConfigErrorKind::OutOfRange {
                        what,
                        value: n,
                        expected: "give a bound of 0 or more (the defaults: 50000 files, 200 MB)"
                            .into(),
                    },
                ));
            }
            *to = Some(n as u64);
        }
    }
    if let Some(d) = &raw.defaults {
        for (act, v) in [
            (Act::Exec, &d.exec),
            (Act::Read, &d.read),
            (Act::Write, &d.write),
            (Act::Env, &d.env),
        ] {
            if let Some(v) = v {
                file.defaults.push((act, ctx.effect(v)?));
            }
        }
    }
    if let Some(e) = &raw.effects {
        if let Some(v) = &e.unparsable_inner_line {
            file.unparsable_inner_line = Some(ctx.effect(v)?);
        }
        if let Some(v) = &e.interpreter_one_liner {
            file.interpreter_one_liner = Some(ctx.effect(v)?);
        }
        if let Some(v) = &e.script_file {
            file.script_file = Some(ctx.effect(v)?);
        }
    }
    let mut rules = Vec::new();
    for r in &raw.rule {
        let act = ctx.value(&r.act, "act", "exec, read, write, env", Act::from_name)?;
        let effect = ctx.effect(&r.effect)?;
        rules.push(ctx.rule(act, &r.pattern, effect)?);
    }
    for (act, lists) in [
        (Act::Exec, &raw.exec),
        (Act::Read, &raw.read),
        (Act::Write, &raw.write),
        (Act::Env, &raw.env),
    ] {
        let Some(lists) = lists else { continue };
        for (effect, patterns) in [
            (Effect::Allow, &lists.allow),
            (Effect::Ask, &lists.ask),
            (Effect::Deny, &lists.deny),
        ] {
            for p in patterns {
                rules.push(ctx.rule(act, p, effect)?);
            }
        }
    }
    rules.sort_by_key(|(at, _)| *at);
    file.rules = rules.into_iter().map(|(_, r)| r).collect();
    if let Some(i) = raw.interactive {
        file.interactive_programs = i.programs;
        file.interactive_allow = i.allow;
    }
    if let Some(sb) = raw.sandbox {
        file.sandbox_deny_read = sb.deny_read;
        file.sandbox_network_allow = sb.network_allow;
        for entry in &sb.home_read {
            let path = entry.get_ref();
            if path != "~" && !path.starts_with("~/") {
                return Err(ctx.error(
                    Some(entry.span()),
                    ConfigErrorKind::Syntax(format!(
                        "[sandbox] home_read {path:?}: name a path of the home as `~/…` \
                         (or `~` for all of it)"
                    )),
                ));
            }
            file.sandbox_home_read.push(path.clone());
        }
        file.sandbox_git_write = sb.git_write;
    }
    Ok(file)
}
