//! The policy: a tier, a stack of layers of rules, and the settings for
//! what cannot be checked inside.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use corral_line::{Command, RedirectOp};

use crate::approval::ApprovalMode;
use crate::config::PolicyFile;
use crate::decision::{Decision, MatchedRule, Terminal, Verdict, Why};
use crate::interactive;
use crate::model::{Act, Effect, Origin, Tier};
use crate::pattern::{Entry, ExecSubject, Index, PatternError, Rule, basename};
use crate::safe;
use crate::unwrap::{Inner, family, unwrap};

/// How deep commands may nest (`env bash -c 'nice sh -c "..."'`): each
/// wrapper and each shell line is one level. Deeper nesting is decided by
/// the `unparsable_inner_line` setting.
pub const MAX_DEPTH: usize = 16;

/// A named, ordered list of rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    name: Arc<str>,
    rules: Vec<Rule>,
}

impl Layer {
    /// An empty layer.
    pub fn new(name: &str) -> Layer {
        Layer {
            name: Arc::from(name),
            rules: Vec::new(),
        }
    }

    /// Add a rule (builder style).
    pub fn with(mut self, rule: Rule) -> Layer {
        self.rules.push(rule);
        self
    }

    /// Add a rule.
    pub fn push(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    /// The layer's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its rules, in order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }
}

/// Effects for what cannot be checked inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Effects {
    /// A shell line (`sh -c LINE`) the grammar refuses, or nesting deeper
    /// than [`MAX_DEPTH`]. Default `Ask`.
    pub unparsable_inner_line: Effect,
    /// An interpreter's inline program (`python -c`, `node -e`, ...).
    /// Default `Ask`.
    pub interpreter_one_liner: Effect,
    /// A script file run by a shell or interpreter (`bash script.sh`,
    /// `python x.py`, `sh -s`). Default `None`: no extra decision, so the
    /// rule or default for the interpreter itself decides.
    pub script_file: Option<Effect>,
}

impl Default for Effects {
    fn default() -> Self {
        Effects {
            unparsable_inner_line: Effect::Ask,
            interpreter_one_liner: Effect::Ask,
            script_file: None,
        }
    }
}

/// One command to check: its argv and, when known, the resolved program.
#[derive(Debug, Clone, Copy)]
pub struct CommandCheck<'a> {
    /// The argv as it will be run.
    pub argv: &'a [String],
    /// The absolute path `argv[0]` resolved to, if the caller resolved it.
    pub program_path: Option<&'a Path>,
}

/// Settings a configuration file may set once; later files only tighten.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Setting {
    Tier,
    Default(usize),
    Unparsable,
    OneLiner,
    Script,
}

/// A stack of layers of rules over a tier. See the crate docs.
#[derive(Debug, Clone)]
pub struct Policy {
    tier: Tier,
    act_defaults: [Option<Effect>; 3],
    layers: Vec<Layer>,
    current: Option<usize>,
    effects: Effects,
    approval: Option<ApprovalMode>,
    interactive_extra: BTreeSet<String>,
    interactive_allowed: BTreeSet<String>,
    settled: BTreeSet<Setting>,
    index: OnceLock<Arc<Index>>,
}

impl Default for Policy {
    /// [`Tier::Default`]: anything no rule names is asked about.
    fn default() -> Self {
        Policy::new(Tier::Default)
    }
}

impl Policy {
    /// An empty policy over `tier`.
    pub fn new(tier: Tier) -> Policy {
        Policy {
            tier,
            act_defaults: [None; 3],
            layers: Vec::new(),
            current: None,
            effects: Effects::default(),
            approval: None,
            interactive_extra: BTreeSet::new(),
            interactive_allowed: BTreeSet::new(),
            settled: BTreeSet::new(),
            index: OnceLock::new(),
        }
    }

    /// Anything no rule names is allowed.
    pub fn permissive() -> Policy {
        Policy::new(Tier::Permissive)
    }

    /// Anything no rule names is denied.
    pub fn strict() -> Policy {
        Policy::new(Tier::Strict)
    }

    fn changed(&mut self) {
        self.index = OnceLock::new();
    }

    fn layer_index(&mut self, name: &str) -> usize {
        match self.layers.iter().position(|l| &*l.name == name) {
            Some(i) => i,
            None => {
                self.layers.push(Layer::new(name));
                self.layers.len() - 1
            }
        }
    }

    /// Make `name` the layer later rules go to, adding it on top of the
    /// stack if it is new.
    pub fn layer(mut self, name: &str) -> Policy {
        self.current = Some(self.layer_index(name));
        self
    }

    /// Add a rule to the current layer (a layer named `library` if none
    /// was chosen).
    ///
    /// # Panics
    ///
    /// If the pattern is empty or not a valid glob; use [`Policy::try_rule`]
    /// for patterns that come from outside the program.
    pub fn rule(self, act: Act, pattern: &str, effect: Effect) -> Policy {
        match self.try_rule(act, pattern, effect, Origin::Library) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }

    /// Add a rule to the current layer, or say why the pattern is invalid.
    pub fn try_rule(
        self,
        act: Act,
        pattern: &str,
        effect: Effect,
        origin: Origin,
    ) -> Result<Policy, PatternError> {
        let rule = Rule::new(act, pattern, effect, origin)?;
        Ok(self.with_rule(rule))
    }

    /// Add a rule to the current layer.
    pub fn with_rule(mut self, rule: Rule) -> Policy {
        let i = match self.current {
            Some(i) => i,
            None => {
                let i = self.layer_index("library");
                self.current = Some(i);
                i
            }
        };
        self.layers[i].rules.push(rule);
        self.changed();
        self
    }

    /// Add a rule to the layer `layer` (created on top if new).
    pub fn push_rule(&mut self, layer: &str, rule: Rule) {
        let i = self.layer_index(layer);
        self.layers[i].rules.push(rule);
        self.changed();
    }

    /// Add a layer on top (or append its rules to the layer of that name)
    /// and make it current.
    pub fn with_layer(mut self, layer: Layer) -> Policy {
        self.push_layer(layer);
        self
    }

    /// Add a layer on top (or append its rules to the layer of that name).
    pub fn push_layer(&mut self, layer: Layer) {
        let i = self.layer_index(&layer.name);
        self.layers[i].rules.extend(layer.rules);
        self.current = Some(i);
        self.changed();
    }

    /// Add a parsed configuration file: its rules go to its layer; its
    /// settings apply as described in [`crate::config`] (the first file to
    /// set a value sets it, later files may only make it stricter).
    pub fn push_file(&mut self, file: PolicyFile) {
        if let Some(t) = file.tier {
            self.tier = self.settle(Setting::Tier, self.tier, t);
        }
        for (act, e) in file.defaults {
            let i = act.index();
            let cur = self.act_defaults[i].unwrap_or(self.tier.default_effect());
            self.act_defaults[i] = Some(self.settle(Setting::Default(i), cur, e));
        }
        if let Some(e) = file.unparsable_inner_line {
            self.effects.unparsable_inner_line =
                self.settle(Setting::Unparsable, self.effects.unparsable_inner_line, e);
        }
        if let Some(e) = file.interpreter_one_liner {
            self.effects.interpreter_one_liner =
                self.settle(Setting::OneLiner, self.effects.interpreter_one_liner, e);
        }
        if let Some(e) = file.script_file {
            let cur = self.effects.script_file.unwrap_or(Effect::Allow);
            self.effects.script_file = Some(self.settle(Setting::Script, cur, e));
        }
        if let Some(mode) = file.approval {
            self.approval = Some(mode);
        }
        self.interactive_extra.extend(file.interactive_programs);
        self.interactive_allowed.extend(file.interactive_allow);
        let i = self.layer_index(&file.layer);
        self.layers[i].rules.extend(file.rules);
        self.current = Some(i);
        self.changed();
    }

    /// Builder form of [`Policy::push_file`].
    pub fn with_file(mut self, file: PolicyFile) -> Policy {
        self.push_file(file);
        self
    }

    fn settle<T: Ord>(&mut self, setting: Setting, current: T, new: T) -> T {
        if self.settled.insert(setting) {
            new
        } else {
            current.max(new)
        }
    }

    /// Replace the tier.
    pub fn tier(mut self, tier: Tier) -> Policy {
        self.tier = tier;
        self
    }

    /// Override the tier's default effect for one act.
    pub fn default_effect(mut self, act: Act, effect: Effect) -> Policy {
        self.act_defaults[act.index()] = Some(effect);
        self
    }

    /// Set the effect for shell lines that cannot be parsed.
    pub fn unparsable_inner_line(mut self, effect: Effect) -> Policy {
        self.effects.unparsable_inner_line = effect;
        self
    }

    /// Set the effect for interpreter one-liners.
    pub fn interpreter_one_liner(mut self, effect: Effect) -> Policy {
        self.effects.interpreter_one_liner = effect;
        self
    }

    /// Set (or, with `None`, clear) the effect for script files.
    pub fn script_file(mut self, effect: Option<Effect>) -> Policy {
        self.effects.script_file = effect;
        self
    }

    /// Set the approval mode this policy asks for.
    pub fn approval(mut self, mode: ApprovalMode) -> Policy {
        self.approval = Some(mode);
        self
    }

    /// Treat these programs (by basename) as needing a terminal too.
    pub fn interactive_programs<I, S>(mut self, programs: I) -> Policy
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.interactive_extra
            .extend(programs.into_iter().map(Into::into));
        self
    }

    /// Never treat these programs (by basename) as needing a terminal, even
    /// if the built-in list names them.
    pub fn allow_interactive<I, S>(mut self, programs: I) -> Policy
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.interactive_allowed
            .extend(programs.into_iter().map(Into::into));
        self
    }

    /// `allow` an exec pattern in the current layer.
    pub fn allow_exec(self, pattern: &str) -> Policy {
        self.rule(Act::Exec, pattern, Effect::Allow)
    }
    /// `ask` about an exec pattern in the current layer.
    pub fn ask_exec(self, pattern: &str) -> Policy {
        self.rule(Act::Exec, pattern, Effect::Ask)
    }
    /// `deny` an exec pattern in the current layer.
    pub fn deny_exec(self, pattern: &str) -> Policy {
        self.rule(Act::Exec, pattern, Effect::Deny)
    }
    /// `allow` reading paths matching a glob.
    pub fn allow_read(self, pattern: &str) -> Policy {
        self.rule(Act::Read, pattern, Effect::Allow)
    }
    /// `ask` about reading paths matching a glob.
    pub fn ask_read(self, pattern: &str) -> Policy {
        self.rule(Act::Read, pattern, Effect::Ask)
    }
    /// `deny` reading paths matching a glob.
    pub fn deny_read(self, pattern: &str) -> Policy {
        self.rule(Act::Read, pattern, Effect::Deny)
    }
    /// `allow` writing paths matching a glob.
    pub fn allow_write(self, pattern: &str) -> Policy {
        self.rule(Act::Write, pattern, Effect::Allow)
    }
    /// `ask` about writing paths matching a glob.
    pub fn ask_write(self, pattern: &str) -> Policy {
        self.rule(Act::Write, pattern, Effect::Ask)
    }
    /// `deny` writing paths matching a glob.
    pub fn deny_write(self, pattern: &str) -> Policy {
        self.rule(Act::Write, pattern, Effect::Deny)
    }

    /// The tier.
    pub fn current_tier(&self) -> Tier {
        self.tier
    }

    /// The effect for `act` when no rule matches.
    pub fn default_for(&self, act: Act) -> Effect {
        self.act_defaults[act.index()].unwrap_or(self.tier.default_effect())
    }

    /// The layers, bottom first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// The settings for what cannot be checked inside.
    pub fn effects(&self) -> Effects {
        self.effects
    }

    /// The approval mode set by the builder or a file, if any.
    pub fn approval_mode(&self) -> Option<ApprovalMode> {
        self.approval
    }

    fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            let entries = self
                .layers
                .iter()
                .enumerate()
                .flat_map(|(layer, l)| {
                    l.rules.iter().map(move |rule| Entry {
                        layer,
                        rule: rule.clone(),
                    })
                })
                .collect();
            Arc::new(Index::build(entries))
        })
    }

    fn decision(
        &self,
        act: Act,
        target: String,
        entry: Option<&Entry>,
        via: &[String],
    ) -> Decision {
        let (effect, rule, why) = match entry {
            Some(e) => (
                e.rule.effect(),
                Some(MatchedRule::new(
                    e.rule.clone(),
                    self.layers[e.layer].name.clone(),
                )),
                Why::Rule,
            ),
            None => match self.act_defaults[act.index()] {
                Some(effect) => (effect, None, Why::ActDefault),
                None => (
                    self.tier.default_effect(),
                    None,
                    Why::TierDefault { tier: self.tier },
                ),
            },
        };
        Decision {
            effect,
            act,
            target,
            rule,
            why,
            via: via.to_vec(),
            wrapper: false,
        }
    }

    /// Check one string target, as in `policy.check(Act::Exec, "cargo
    /// test")`. An exec target is split on whitespace and checked as
    /// [`Policy::check_command`] would (wrappers and all), returning the
    /// decisive decision; a read or write target is a path.
    pub fn check(&self, act: Act, target: &str) -> Decision {
        match act {
            Act::Exec => {
                let argv: Vec<String> = target.split_whitespace().map(str::to_string).collect();
                let verdict = self.check_command(&CommandCheck {
                    argv: &argv,
                    program_path: None,
                });
                verdict.decisive().clone()
            }
            _ => self.check_path(act, Path::new(target)),
        }
    }

    /// Check a path for reading or writing (a resolved redirect target).
    /// For [`Act::Exec`] the path is checked as a program run with no
    /// arguments.
    pub fn check_path(&self, act: Act, path: &Path) -> Decision {
        if act == Act::Exec {
            let argv = vec![path.to_string_lossy().into_owned()];
            return self
                .check_command(&CommandCheck {
                    argv: &argv,
                    program_path: Some(path),
                })
                .decisive()
                .clone();
        }
        let entry = self.index().path(act, path);
        self.decision(act, path.to_string_lossy().into_owned(), entry, &[])
    }

    /// Check a command and everything it would run (see the crate docs).
    pub fn check_command(&self, command: &CommandCheck<'_>) -> Verdict {
        let mut walk = Walk {
            policy: self,
            index: self.index(),
            out: Vec::new(),
            terminal: None,
        };
        let mut via = Vec::new();
        walk.command(command.argv, command.program_path, &mut via, 0);
        let known_safe = safe::is_known_safe(command.argv);
        Verdict::from_decisions(walk.out, known_safe, walk.terminal)
    }

    /// Why `argv` (or a command it runs) needs a terminal, with this
    /// policy's additions and exceptions to the built-in list.
    pub fn needs_terminal(&self, argv: &[String]) -> Option<&'static str> {
        interactive::find(argv, &|a| self.needs_terminal_here(a), 0).map(|(_, r)| r)
    }

    fn needs_terminal_here(&self, argv: &[String]) -> Option<&'static str> {
        let name = basename(argv.first()?);
        if self.interactive_allowed.contains(name)
            || self.interactive_allowed.contains(family(name))
        {
            return None;
        }
        if self.interactive_extra.contains(name) || self.interactive_extra.contains(family(name)) {
            return Some("listed as interactive by the policy");
        }
        interactive::needs_terminal_here(argv)
    }

    /// A human-readable listing of the effective policy, for
    /// `corral policy show`.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "tier: {}", self.tier);
        let _ = writeln!(
            s,
            "defaults: exec {}, read {}, write {}",
            self.default_for(Act::Exec),
            self.default_for(Act::Read),
            self.default_for(Act::Write)
        );
        let _ = writeln!(
            s,
            "approval: {}",
            self.approval.map_or("(not set)", ApprovalMode::name)
        );
        let _ = writeln!(
            s,
            "unparsable_inner_line: {}\ninterpreter_one_liner: {}\nscript_file: {}",
            self.effects.unparsable_inner_line,
            self.effects.interpreter_one_liner,
            self.effects
                .script_file
                .map_or("(the decision for the interpreter)", Effect::name)
        );
        if !self.interactive_extra.is_empty() || !self.interactive_allowed.is_empty() {
            let join = |set: &BTreeSet<String>| set.iter().cloned().collect::<Vec<_>>().join(" ");
            let _ = writeln!(
                s,
                "interactive: also [{}], never [{}]",
                join(&self.interactive_extra),
                join(&self.interactive_allowed)
            );
        }
        if self.layers.is_empty() {
            let _ = writeln!(s, "(no layers)");
        }
        for layer in &self.layers {
            let n = layer.rules.len();
            let _ = writeln!(
                s,
                "layer {} ({n} rule{})",
                layer.name,
                if n == 1 { "" } else { "s" }
            );
            for rule in &layer.rules {
                let _ = writeln!(s, "  {rule}");
            }
        }
        s
    }

    /// The strictest deny rule naming any word of `line` as a program: a
    /// line the grammar refuses is still denied if it mentions a denied
    /// program.
    fn denied_word(&self, index: &Index, line: &str) -> Option<Entry> {
        let mut best: Option<&Entry> = None;
        for word in line
            .split(|c: char| c.is_whitespace() || ";|&()<>`$\"'{}\\".contains(c))
            .filter(|w| !w.is_empty())
        {
            let subject = ExecSubject {
                argv0: word,
                path: None,
                joined: word,
                joined_base: None,
            };
            if let Some(e) = index
                .exec(&subject)
                .filter(|e| e.rule.effect() == Effect::Deny)
            {
                best.get_or_insert(e);
            }
        }
        best.cloned()
    }
}

struct Walk<'p> {
    policy: &'p Policy,
    index: &'p Index,
    out: Vec<Decision>,
    terminal: Option<Terminal>,
}

impl Walk<'_> {
    fn too_deep(&mut self, target: String, via: &[String]) {
        self.out.push(Decision {
            effect: self.policy.effects.unparsable_inner_line,
            act: Act::Exec,
            target,
            rule: None,
            why: Why::DepthLimit,
            via: via.to_vec(),
            wrapper: false,
        });
    }

    fn command(
        &mut self,
        argv: &[String],
        program_path: Option<&Path>,
        via: &mut Vec<String>,
        depth: usize,
    ) {
        let joined = argv.join(" ");
        if depth > MAX_DEPTH {
            self.too_deep(joined, via);
            return;
        }
        let argv0 = argv.first().map_or("", String::as_str);
        let path: Option<Cow<'_, str>> = program_path.map(|p| p.to_string_lossy());
        let base0 = basename(argv0);
        let joined_base = (base0.len() != argv0.len()).then(|| {
            let mut j = String::with_capacity(joined.len());
            j.push_str(base0);
            j.push_str(&joined[argv0.len()..]);
            j
        });
        let entry = self.index.exec(&ExecSubject {
            argv0,
            path: path.as_deref(),
            joined: &joined,
            joined_base: joined_base.as_deref(),
        });
        if self.terminal.is_none()
            && let Some(reason) = self.policy.needs_terminal_here(argv)
        {
            self.terminal = Some(Terminal {
                command: joined.clone(),
                reason,
            });
        }
        let steps = unwrap(argv);
        let mut decision = self.policy.decision(Act::Exec, joined, entry, via);
        decision.wrapper = steps.as_ref().is_some_and(|s| {
            s.iter()
                .any(|s| matches!(s.inner, Inner::Argv(_) | Inner::Line(_)))
        });
        let target = decision.target.clone();
        self.out.push(decision);
        for step in steps.into_iter().flatten() {
            match step.inner {
                Inner::Argv(inner) => {
                    via.push(step.via);
                    self.command(&inner, None, via, depth + 1);
                    via.pop();
                }
                Inner::Line(line) => {
                    via.push(step.via);
                    self.line(&line, via, depth + 1);
                    via.pop();
                }
                Inner::OneLiner => self.out.push(Decision {
                    effect: self.policy.effects.interpreter_one_liner,
                    act: Act::Exec,
                    target: target.clone(),
                    rule: None,
                    why: Why::InterpreterOneLiner,
                    via: via.clone(),
                    wrapper: false,
                }),
                Inner::Script(script) => {
                    if let Some(effect) = self.policy.effects.script_file {
                        self.out.push(Decision {
                            effect,
                            act: Act::Exec,
                            target: target.clone(),
                            rule: None,
                            why: Why::ScriptFile { script },
                            via: via.clone(),
                            wrapper: false,
                        });
                    }
                }
            }
        }
    }

    fn line(&mut self, line: &str, via: &mut Vec<String>, depth: usize) {
        if depth > MAX_DEPTH {
            self.too_deep(line.to_string(), via);
            return;
        }
        match corral_line::parse(line) {
            Ok(parsed) => {
                for command in parsed.commands() {
                    let Command::Simple(simple) = command else {
                        continue;
                    };
                    let argv: Vec<String> = simple.argv.iter().map(|w| w.value.clone()).collect();
                    self.command(&argv, None, via, depth);
                    for redirect in &simple.redirects {
                        let (act, word) = match &redirect.op {
                            RedirectOp::Read(w) => (Act::Read, w),
                            RedirectOp::Write(w) | RedirectOp::Append(w) => (Act::Write, w),
                            // Text fed to stdin, and a copy of a descriptor: nothing to check.
                            RedirectOp::Dup(_)
                            | RedirectOp::HereDoc(_)
                            | RedirectOp::HereString(_) => continue,
                        };
                        let entry = self.index.path(act, Path::new(&word.value));
                        let d = self.policy.decision(act, word.value.clone(), entry, via);
                        self.out.push(d);
                    }
                }
            }
            Err(refusal) => {
                let denied = self.policy.denied_word(self.index, line);
                let (effect, rule) = match denied {
                    Some(e) => (
                        Effect::Deny,
                        Some(MatchedRule::new(
                            e.rule.clone(),
                            self.policy.layers[e.layer].name.clone(),
                        )),
                    ),
                    None => (self.policy.effects.unparsable_inner_line, None),
                };
                self.out.push(Decision {
                    effect: effect.max(self.policy.effects.unparsable_inner_line),
                    act: Act::Exec,
                    target: line.to_string(),
                    rule,
                    why: Why::UnparsableInnerLine {
                        line: line.to_string(),
                        refusal: refusal.to_string(),
                    },
                    via: via.clone(),
                    wrapper: false,
                });
            }
        }
    }
}
