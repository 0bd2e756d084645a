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
use crate::decision::{Decision, MatchedRule, SameFile, Terminal, Verdict, Why};
use crate::envvars;

/// The last `via` of a question about a command whose words are added when it runs
/// (`xargs git`, `find -exec git {}`, a git alias) and could complete a written rule over
/// arguments: no setting lifts it (a person approves it, or the command is spelled out).
pub const ADDED_WORDS: &str = "words added when it runs";
use crate::interactive;
use crate::model::{Act, Effect, Origin, Tier};
use crate::pattern::{Entry, ExecSubject, Index, PatternError, Rule, basename};
use crate::safe;
use crate::unwrap::{Inner, MAX_DEPTH, UNKNOWN_WORD, family, unwrap};

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
    /// At least this for an environment variable that makes programs run other code
    /// (`PYTHONPATH`, `LD_PRELOAD`, `GIT_*`, see [`crate::envvars::risk`]) that no `[env]`
    /// rule decides. Default `Ask`.
    pub risky_env: Effect,
}

impl Default for Effects {
    fn default() -> Self {
        Effects {
            unparsable_inner_line: Effect::Ask,
            interpreter_one_liner: Effect::Ask,
            script_file: None,
            risky_env: Effect::Ask,
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

/// One simple command as a shell would run it: the assignments written in
/// front of it, its argv, and what the caller found out about its program.
/// This is what a caller that parsed a command line itself (a bash parser,
/// corral's grammar) hands to [`Policy::check_simple`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SimpleCommand<'a> {
    /// `NAME=value` assignments in front of the program, in order.
    pub env: &'a [(String, String)],
    /// The argv as it will be run.
    pub argv: &'a [String],
    /// The absolute path `argv[0]` resolved to, if the caller resolved it.
    pub program_path: Option<&'a Path>,
    /// Programs (this one or any it runs, by `argv[0]` as written) that are
    /// the same file as a program an exec rule names.
    pub same_files: &'a [SameFile],
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
    act_defaults: [Option<Effect>; 4],
    layers: Vec<Layer>,
    current: Option<usize>,
    effects: Effects,
    approval: Option<ApprovalMode>,
    interactive_extra: BTreeSet<String>,
    interactive_allowed: BTreeSet<String>,
    sandbox_deny_read: Vec<String>,
    sandbox_network_allow: Vec<String>,
    sandbox_home_read: Vec<String>,
    sandbox_git_write: Option<bool>,
    settled: BTreeSet<Setting>,
    notices: Vec<String>,
    /// Its layers come from policy files a person can edit (see [`Policy::read_from_files`]).
    from_files: bool,
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
            act_defaults: [None; 4],
            layers: Vec::new(),
            current: None,
            effects: Effects::default(),
            approval: None,
            interactive_extra: BTreeSet::new(),
            interactive_allowed: BTreeSet::new(),
            sandbox_deny_read: Vec::new(),
            sandbox_network_allow: Vec::new(),
            sandbox_home_read: Vec::new(),
            sandbox_git_write: None,
            settled: BTreeSet::new(),
            notices: Vec::new(),
            from_files: false,
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
    ///
    /// An [`PolicyFile::untrusted`] file only tightens: its allow rules,
    /// `approval` and `[interactive] allow` are ignored, its settings apply
    /// only where stricter than what is already set, and a notice says so.
    pub fn push_file(&mut self, mut file: PolicyFile) {
        if file.untrusted {
            let ignored = file.loosening();
            self.notices.push(format!(
                "{} is not trusted (new or changed since a person last trusted it): {}; \
                 its denies and asks apply. Review it, then run `corral policy trust`",
                file.origin,
                if ignored.is_empty() {
                    "nothing in it loosens the policy".to_string()
                } else {
                    format!("ignoring its {}", ignored.join(", "))
                }
            ));
            file.rules.retain(|r| r.effect() != Effect::Allow);
            file.approval = None;
            file.interactive_allow.clear();
            file.sandbox_network_allow.clear();
            file.sandbox_home_read.clear();
            if file.sandbox_git_write == Some(true) {
                file.sandbox_git_write = None;
            }
            // Settings only tighten: taken as the stricter of what is set.
            let tier = file.tier.take();
            if let Some(t) = tier {
                self.tier = self.tier.max(t);
            }
            for (act, e) in std::mem::take(&mut file.defaults) {
                let i = act.index();
                let cur = self.act_defaults[i].unwrap_or(self.tier.default_effect());
                self.act_defaults[i] = Some(cur.max(e));
            }
            if let Some(e) = file.unparsable_inner_line.take() {
                self.effects.unparsable_inner_line = self.effects.unparsable_inner_line.max(e);
            }
            if let Some(e) = file.interpreter_one_liner.take() {
                self.effects.interpreter_one_liner = self.effects.interpreter_one_liner.max(e);
            }
            if let Some(e) = file.script_file.take() {
                self.effects.script_file = Some(self.effects.script_file.map_or(e, |c| c.max(e)));
            }
        }
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
        for p in file.sandbox_deny_read {
            if !self.sandbox_deny_read.contains(&p) {
                self.sandbox_deny_read.push(p);
            }
        }
        for n in file.sandbox_network_allow {
            if !self.sandbox_network_allow.contains(&n) {
                self.sandbox_network_allow.push(n);
            }
        }
        for h in file.sandbox_home_read {
            if !self.sandbox_home_read.contains(&h) {
                self.sandbox_home_read.push(h);
            }
        }
        if let Some(g) = file.sandbox_git_write {
            self.sandbox_git_write = Some(g);
        }
        let i = self.layer_index(&file.layer);
        self.layers[i].rules.extend(file.rules);
        self.current = Some(i);
        self.changed();
    }

    /// The `[sandbox] deny_read` entries of every file, in order: paths the sandbox
    /// hides besides its defaults. An untrusted file's count too (they only tighten).
    pub fn sandbox_deny_read(&self) -> &[String] {
        &self.sandbox_deny_read
    }

    /// The `[sandbox] network_allow` entries of every trusted file, in order.
    pub fn sandbox_network_allow(&self) -> &[String] {
        &self.sandbox_network_allow
    }

    /// The `[sandbox] home_read` entries of every trusted file, in order.
    pub fn sandbox_home_read(&self) -> &[String] {
        &self.sandbox_home_read
    }

    /// `[sandbox] git_write` as the last file that set it says (an untrusted file may only
    /// turn it off).
    pub fn sandbox_git_write(&self) -> Option<bool> {
        self.sandbox_git_write
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

    /// Set the least effect for a risky environment variable no rule decides (see
    /// [`Effects::risky_env`]).
    pub fn risky_env(mut self, effect: Effect) -> Policy {
        self.effects.risky_env = effect;
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

    /// Add something the policy should say about itself (see [`Policy::notices`]): a
    /// file that was left out, say.
    pub fn push_notice(&mut self, notice: impl Into<String>) {
        self.notices.push(notice.into());
    }

    /// Say that this policy was stacked from the policy files corral reads (operator,
    /// user, workspace), as the `corral` command and `corral mcp` stack it, so that a hint
    /// may tell a person which file a rule goes in. A policy an embedding program built
    /// has none.
    pub fn read_from_files(&mut self) {
        self.from_files = true;
    }

    /// Whether [`Policy::read_from_files`] was said.
    pub fn is_from_files(&self) -> bool {
        self.from_files
    }

    /// What the policy says about itself that a person should know: an
    /// untrusted file whose loosening parts are ignored. Shown by
    /// [`Policy::describe`] and with every result.
    pub fn notices(&self) -> &[String] {
        &self.notices
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
            Act::Env => {
                let (name, value) = target.split_once('=').unwrap_or((target, ""));
                self.env_decision(name, value, &[])
                    .unwrap_or_else(|| Decision {
                        effect: Effect::Allow,
                        act: Act::Env,
                        target: target.to_string(),
                        rule: None,
                        why: Why::ActDefault,
                        via: Vec::new(),
                        wrapper: false,
                    })
            }
            _ => self.check_path(act, Path::new(target)),
        }
    }

    /// The decision on assigning `name=value` for a command, or `None` when
    /// there is nothing to say: no `[env]` rule names it, it is not a
    /// variable of [`crate::envvars`], and no default for env was set.
    pub fn env_decision(&self, name: &str, value: &str, via: &[String]) -> Option<Decision> {
        let target = format!("{name}={value}");
        if let Some(entry) = self.index().env(name, value) {
            let mut d = self.decision(Act::Env, target, Some(entry), via);
            if let Some(reason) = envvars::risk(name) {
                d.why = Why::RiskyVariable {
                    name: name.to_string(),
                    reason: reason.to_string(),
                };
            }
            return Some(d);
        }
        if let Some(reason) = envvars::risk(name) {
            let effect = self
                .effects
                .risky_env
                .max(self.default_for(Act::Env).max(self.tier.default_effect()));
            return Some(Decision {
                effect,
                act: Act::Env,
                target,
                rule: None,
                why: Why::RiskyVariable {
                    name: name.to_string(),
                    reason: reason.to_string(),
                },
                via: via.to_vec(),
                wrapper: false,
            });
        }
        self.act_defaults[Act::Env.index()]
            .is_some()
            .then(|| self.decision(Act::Env, target, None, via))
    }

    /// Program names (one-word exec rules without glob characters) that a
    /// rule of at least `effect` names, and program paths such rules name:
    /// what a caller looks up to find [`SameFile`]s.
    pub fn ruled_programs(&self, effect: Effect) -> Vec<String> {
        let mut out: Vec<String> = self
            .index()
            .exec_names_at_least(effect)
            .into_iter()
            .map(str::to_string)
            .collect();
        for layer in &self.layers {
            for rule in &layer.rules {
                let p = rule.pattern();
                if rule.act() == Act::Exec
                    && rule.effect() >= effect
                    && p.starts_with('/')
                    && !p.contains(char::is_whitespace)
                    && !crate::pattern::has_glob(p)
                    && !out.iter().any(|o| o == p)
                {
                    out.push(p.to_string());
                }
            }
        }
        out
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
        self.check_simple(&SimpleCommand {
            argv: command.argv,
            program_path: command.program_path,
            ..SimpleCommand::default()
        })
    }

    /// Check one simple command with its assignments: each assignment is an
    /// [`Act::Env`] decision (see [`crate::envvars`]), then the argv and
    /// everything it would run, as [`Policy::check_command`] does. A
    /// [`SameFile`] makes the rules on the program it names apply.
    ///
    /// It is known-safe only when the argv is ([`safe::is_known_safe`]),
    /// no assignment is to a variable of [`crate::envvars`], the resolved
    /// program (when given) is in a system directory, and no program is the
    /// same file as a ruled one.
    pub fn check_simple(&self, command: &SimpleCommand<'_>) -> Verdict {
        let mut walk = Walk {
            policy: self,
            index: self.index(),
            out: Vec::new(),
            terminal: None,
            assigned: command.env.to_vec(),
            programs: Vec::new(),
            same_files: command.same_files,
        };
        let mut via = Vec::new();
        walk.assignments(
            command.env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            &via,
        );
        walk.command(command.argv, command.program_path, &mut via, 0);
        let not_safe = self.why_not_safe(command, &walk.programs);
        Verdict::from_decisions(walk.out, not_safe, walk.terminal, walk.programs)
    }

    fn why_not_safe(&self, command: &SimpleCommand<'_>, programs: &[String]) -> Option<String> {
        if let Err(why) = safe::risky_assignment(command.env.iter().map(|(k, _)| k.as_str())) {
            return Some(why.into_owned());
        }
        if let Some(path) = command.program_path.map(|p| p.to_string_lossy())
            && command.argv.first().is_some_and(|a| !a.contains('/'))
            && !safe::in_system_dir(&path)
        {
            return Some(format!(
                "{} resolves to {path}, outside the system directories",
                command.argv[0]
            ));
        }
        if let Some(sf) = command
            .same_files
            .iter()
            .find(|sf| programs.contains(&sf.program))
        {
            return Some(format!(
                "{} is the same file as {} (device {}, inode {})",
                sf.program, sf.path, sf.device, sf.inode
            ));
        }
        safe::why_not_safe(command.argv)
    }

    /// Why `argv` (or a command it runs) needs a terminal, with this
    /// policy's additions and exceptions to the built-in list.
    pub fn needs_terminal(&self, argv: &[String]) -> Option<&'static str> {
        self.needs_terminal_with(argv, &[])
    }

    /// [`Policy::needs_terminal`] with the `NAME=value` assignments `assigned` in force
    /// for `argv` (its environment, as far as the check reads it: the editor git starts).
    pub fn needs_terminal_with(
        &self,
        argv: &[String],
        assigned: &[(String, String)],
    ) -> Option<&'static str> {
        interactive::find(
            argv,
            assigned,
            &|a, env| self.needs_terminal_here(a, env),
            0,
        )
        .map(|(_, r)| r)
    }

    /// The check for one command, with the assignments `assigned` in force for it.
    fn needs_terminal_here(
        &self,
        argv: &[String],
        assigned: &[(String, String)],
    ) -> Option<&'static str> {
        let name = basename(argv.first()?);
        if self.interactive_allowed.contains(name)
            || self.interactive_allowed.contains(family(name))
        {
            return None;
        }
        if self.interactive_extra.contains(name) || self.interactive_extra.contains(family(name)) {
            return Some("listed as interactive by the policy");
        }
        interactive::needs_terminal_in(argv, assigned)
    }

    /// A human-readable listing of the effective policy, for
    /// `corral policy show`.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        for notice in &self.notices {
            let _ = writeln!(s, "note: {notice}");
        }
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
            "env: assignments to names that make programs run other code \
             (PATH, LD_*, BASH_ENV, GIT_*, PYTHON*, ...) ask unless an [env] rule decides{}",
            match self.act_defaults[Act::Env.index()] {
                Some(e) => format!("; other names: {e}"),
                None => String::new(),
            }
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
            .split(|c: char| c.is_whitespace() || ";|&()<>`$\"'{}\\=!,:[]".contains(c))
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
    /// The `NAME=value` assignments in force for the command being walked: written in
    /// front of it or by a wrapper that runs it (`env NAME=value`). The terminal check
    /// reads them (the editor git starts).
    assigned: Vec<(String, String)>,
    programs: Vec<String>,
    same_files: &'p [SameFile],
}

impl Walk<'_> {
    fn assignments<'a>(&mut self, pairs: impl Iterator<Item = (&'a str, &'a str)>, via: &[String]) {
        for (name, value) in pairs {
            if let Some(d) = self.policy.env_decision(name, value, via) {
                self.out.push(d);
            }
        }
    }

    /// A command corral cannot see into: decided like an unparsable line,
    /// and denied if a word of it names a denied program.
    fn opaque(&mut self, text: &str, reason: String, via: &[String]) {
        let denied = self.policy.denied_word(self.index, text);
        let unparsable = self.policy.effects.unparsable_inner_line;
        let (effect, rule) = match denied {
            Some(e) => (
                Effect::Deny,
                Some(MatchedRule::new(
                    e.rule.clone(),
                    self.policy.layers[e.layer].name.clone(),
                )),
            ),
            None => (unparsable, None),
        };
        self.out.push(Decision {
            effect: effect.max(unparsable),
            act: Act::Exec,
            target: text.to_string(),
            rule,
            why: Why::UnparsableInnerLine {
                line: text.to_string(),
                refusal: reason,
            },
            via: via.to_vec(),
            wrapper: false,
        });
    }

    /// A command that gets more arguments when it runs (`probe`, [`UNKNOWN_WORD`] where
    /// they go): asked about where a deny or ask rule over arguments could match once
    /// they are there (`echo push | xargs git` under `git push*`).
    /// A command that gets words only when it runs (`xargs git`, a git alias), where they
    /// could complete a written rule over arguments: asked about, whatever the effects
    /// say, and marked [`ADDED_WORDS`] (no setting lifts it).
    fn more_args(&mut self, probe: &[String], via: &[String]) {
        let Some(at) = probe.iter().position(|w| w.contains(UNKNOWN_WORD)) else {
            return;
        };
        let mut known: Vec<&str> = probe[..at].iter().map(String::as_str).collect();
        if let Some(first) = known.first_mut() {
            *first = basename(first);
        }
        let Some(entry) = self.index.exec_could_extend(&known.join(" ")) else {
            return;
        };
        let shown: Vec<String> = probe.iter().map(|w| w.replace(UNKNOWN_WORD, "…")).collect();
        let target = shown.join(" ");
        // No rule decided (none matched): the one they could make match is named.
        self.out.push(Decision {
            effect: Effect::Ask.max(self.policy.effects.unparsable_inner_line),
            act: Act::Exec,
            target: target.clone(),
            rule: None,
            why: Why::UnparsableInnerLine {
                line: target,
                refusal: if via.last().is_some_and(|v| v == "git alias") {
                    format!(
                        "its subcommand is none of git's: an alias in git's configuration (or \
                         a `git-` program) that may stand for any git command, and could make \
                         the rule {:?} (layer {}) match; spell out the git command it stands for",
                        entry.rule.pattern(),
                        self.policy.layers[entry.layer].name
                    )
                } else {
                    format!(
                        "its arguments are added when it runs, and could make the rule {:?} \
                         (layer {}) match",
                        entry.rule.pattern(),
                        self.policy.layers[entry.layer].name
                    )
                },
            },
            via: via
                .iter()
                .cloned()
                .chain([ADDED_WORDS.to_string()])
                .collect(),
            wrapper: false,
        });
    }

    /// The strictest rule on a program this one is the same file as, if it
    /// is stricter than `entry`.
    fn same_file_entry(&self, argv: &[String], entry: Option<&Entry>) -> Option<(Entry, SameFile)> {
        let argv0 = argv.first()?;
        let mut best: Option<(Entry, SameFile)> = None;
        for sf in self.same_files.iter().filter(|sf| &sf.program == argv0) {
            let mut joined = sf.path.clone();
            for a in &argv[1..] {
                joined.push(' ');
                joined.push_str(a);
            }
            let base = basename(&sf.path);
            let joined_base = format!("{base}{}", &joined[sf.path.len()..]);
            let found = self.index.exec(&ExecSubject {
                argv0: &sf.path,
                path: Some(&sf.path),
                joined: &joined,
                joined_base: Some(&joined_base),
            });
            if let Some(e) = found {
                let current = best
                    .as_ref()
                    .map(|(b, _)| b.rule.effect())
                    .or(entry.map(|e| e.rule.effect()));
                if current.is_none_or(|c| e.rule.effect() > c) {
                    best = Some((e.clone(), sf.clone()));
                }
            }
        }
        best
    }

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
            && let Some(reason) = self.policy.needs_terminal_here(argv, &self.assigned)
        {
            self.terminal = Some(Terminal {
                command: joined.clone(),
                reason,
            });
        }
        self.programs.push(argv0.to_string());
        let same = self.same_file_entry(argv, entry);
        let steps = unwrap(argv);
        let mut decision = match same {
            Some((e, sf)) => {
                let mut d = self.policy.decision(Act::Exec, joined, Some(&e), via);
                d.why = Why::SameFile {
                    path: sf.path.clone(),
                    device: sf.device,
                    inode: sf.inode,
                };
                d
            }
            None => self.policy.decision(Act::Exec, joined, entry, via),
        };
        decision.wrapper = steps.as_ref().is_some_and(|s| {
            s.iter().any(|s| {
                matches!(
                    s.inner,
                    Inner::Argv(_) | Inner::Line(_) | Inner::ZshLine(_) | Inner::Opaque(_)
                )
            })
        });
        let target = decision.target.clone();
        self.out.push(decision);
        // A wrapper's assignments are in force for what it runs, and only for that.
        let scope = self.assigned.len();
        if let Some(steps) = &steps {
            self.assigned
                .extend(interactive::in_force_inside(argv, steps));
        }
        for step in steps.into_iter().flatten() {
            match step.inner {
                Inner::Argv(inner) => {
                    via.push(step.via);
                    self.command(&inner, None, via, depth + 1);
                    via.pop();
                }
                Inner::Line(line) => {
                    via.push(step.via);
                    self.line(&line, false, via, depth + 1);
                    via.pop();
                }
                Inner::ZshLine(line) => {
                    via.push(step.via);
                    self.line(&line, true, via, depth + 1);
                    via.pop();
                }
                Inner::Assign(pairs) => {
                    via.push(step.via);
                    self.assignments(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())), via);
                    via.pop();
                }
                Inner::Opaque(reason) => {
                    via.push(step.via);
                    let text = argv.join(" ");
                    self.opaque(&text, reason, via);
                    via.pop();
                }
                Inner::MoreArgs(probe) => {
                    via.push(step.via);
                    self.more_args(&probe, via);
                    via.pop();
                }
                Inner::OneLiner => {
                    // An inline program that names a denied program (`perl -e
                    // 'system("rm x")'`) is denied: it cannot be read, but its words can.
                    let denied = self.policy.denied_word(self.index, &target);
                    let rule = denied.map(|e| {
                        MatchedRule::new(e.rule.clone(), self.policy.layers[e.layer].name.clone())
                    });
                    self.out.push(Decision {
                        effect: if rule.is_some() {
                            Effect::Deny
                        } else {
                            self.policy.effects.interpreter_one_liner
                        },
                        act: Act::Exec,
                        target: target.clone(),
                        rule,
                        why: Why::InterpreterOneLiner,
                        via: via.clone(),
                        wrapper: false,
                    })
                }
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
        self.assigned.truncate(scope);
    }

    /// What a shell or an interpreter in `line` runs from its stdin: a here-document's or
    /// here-string's text, as its inline form (`sh <<< "rm x"` is `sh -c "rm x"`); from a
    /// pipe (`piped`), text made when the line runs, which no check can read: decided as
    /// an unparsable line is, denied when a word of the line names a denied program
    /// (`echo rm x | sh`).
    fn fed(
        &mut self,
        line: &str,
        argv: &[String],
        simple: &corral_line::Simple,
        piped: bool,
        via: &mut Vec<String>,
        depth: usize,
    ) {
        let text = simple.redirects.iter().rev().find_map(|r| r.stdin_text());
        if let Some(inline) = crate::stdin_script::as_inline(argv, text.as_deref()) {
            via.push(format!("{} <<<", argv[0]));
            self.command(&inline, None, via, depth + 1);
            via.pop();
        } else if piped && crate::stdin_script::as_inline(argv, Some("")).is_some() {
            self.opaque(
                line,
                format!(
                    "`{}` runs what a pipe feeds it, made when the line runs",
                    argv.join(" ")
                ),
                via,
            );
        }
    }

    /// A shell line: every stage, its assignments and redirects. For zsh, a
    /// word starting with an unquoted `=` is the program it names.
    fn line(&mut self, line: &str, zsh: bool, via: &mut Vec<String>, depth: usize) {
        if depth > MAX_DEPTH {
            self.too_deep(line.to_string(), via);
            return;
        }
        match corral_line::parse(line) {
            Ok(parsed) => {
                let stages = parsed
                    .lists
                    .iter()
                    .flat_map(|list| list.pipelines())
                    .flat_map(|p| p.commands.iter().enumerate());
                for (place, command) in stages {
                    let Command::Simple(simple) = command else {
                        continue;
                    };
                    self.assignments(
                        simple
                            .assignments
                            .iter()
                            .map(|a| (a.name.as_str(), a.value.value.as_str())),
                        via,
                    );
                    let argv: Vec<String> = simple
                        .argv
                        .iter()
                        .map(|w| match w.value.strip_prefix('=') {
                            Some(name) if zsh && safe::zsh_equals(line, w) => name.to_string(),
                            _ => w.value.clone(),
                        })
                        .collect();
                    let scope = self.assigned.len();
                    self.assigned.extend(
                        simple
                            .assignments
                            .iter()
                            .map(|a| (a.name.clone(), a.value.value.clone())),
                    );
                    self.command(&argv, None, via, depth);
                    self.assigned.truncate(scope);
                    self.fed(line, &argv, simple, place > 0, via, depth);
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
