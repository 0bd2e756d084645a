//! Each surface's default posture: the policy, approval mode and sandbox a run gets when
//! nothing says otherwise, decided in one place so that what a surface does and what
//! `corral policy show --surface …` says it does cannot drift apart.
//!
//! | surface | sandbox | approval | what no rule names |
//! |---|---|---|---|
//! | `cli` (`corral exec`, `corral shell`) | `full` (none) | the policy's, else `on-request` | allowed: the person typing is the approver, their one-liners and `NAME=value` too (under `unless-trusted`, asked as any command not known safe is); with `--caller model`, exactly the `mcp` posture |
//! | `library` (`Run::builder`) | `full` (none) | the policy's, else `on-request` | asked about ([`Policy::default`]) |
//! | `mcp` (`corral mcp`), every confinement layer enforced | `workspace-write`, network off | the policy's, else `on-failure` | allowed, inline programs and unparsable inner lines too (under `unless-trusted`, asked); the [built-in asks](crate::destructive) still ask |
//! | `mcp`, a confinement layer missing or partial on this host | as asked | the policy's, else `unless-trusted` | asked about unless known safe ([`Policy::default`]) |
//! | `task` (`corral run`) | as `mcp` | as `mcp` | as `mcp`; asks go to the person's terminal, refused with none |
//!
//! A model driving the command line (`--caller model`, `CORRAL_CALLER=model`) gets the
//! `mcp` row: the same base policy, approval, built-in asks and sandbox default, so every
//! surface a model drives gives the same verdict for the same line.
//!
//! An allowance for what corral cannot read (a line it cannot parse, an inline program,
//! `NAME=value` that runs code) is a surface's default, not a rule someone wrote: under
//! `unless-trusted`, which asks about every command not known to be safe, it is not
//! given, so a line corral cannot read is never asked less than one it can.
//!
//! In every case the policy files (`$CORRAL_POLICY`, the user's config, the workspace's
//! `corral.toml`, then the files passed) stack on top, so their `ask` and `deny` rules
//! always apply, and a file's `tier` or `approval` replaces the surface's.
//!
//! "Every confinement layer enforced" is read from the real report of this host, for this
//! process's user, for the run's sandbox ([`crate::sandbox::enforcement::report_for`]:
//! Landlock ABI, namespaces, seccomp, the PID namespace), computed once when the run is
//! opened ([`SandboxReport::unenforced`]). The confinement layers are named once, in
//! [`CONFINEMENT`]; the resource limits ([`RESOURCE_LIMITS`]: `pids.max`) are reported but
//! never decide the posture. Where a layer is missing, the posture's first sentence says so.

use std::fmt;
use std::path::{Path, PathBuf};

use corral_policy::{ApprovalMode, Effect, Policy};

use crate::config::Config;
use crate::config::sandbox::SandboxMode;
use crate::error::Result;
use crate::outcome::sandbox_report::SandboxReport;
use crate::policy_files::PolicyFiles;
use crate::sandbox::enforcement::report_for;

pub use crate::outcome::sandbox_report::{CONFINEMENT, RESOURCE_LIMITS};

/// Where a run is driven from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Surface {
    /// `corral exec` and `corral shell`, typed by a person.
    Cli,
    /// `corral mcp`, driven by a model through an MCP client.
    Mcp,
    /// The Rust library, driven by the embedding program.
    Library,
    /// `corral run`: a model driven to a goal, as `corral mcp`'s calls are (the sandbox
    /// the boundary where this host enforces it); a built-in or policy ask is asked on a
    /// terminal, and refused with no one to ask.
    Task,
}

impl Surface {
    /// Every surface.
    pub const ALL: [Surface; 4] = [Surface::Cli, Surface::Mcp, Surface::Library, Surface::Task];

    /// `cli`, `mcp`, `library`.
    pub fn name(self) -> &'static str {
        match self {
            Surface::Cli => "cli",
            Surface::Mcp => "mcp",
            Surface::Library => "library",
            Surface::Task => "task",
        }
    }

    /// Parse a name.
    pub fn from_name(name: &str) -> Option<Surface> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Where a line outside the grammar runs when neither a flag nor a policy file says.
    pub fn host_shell(self) -> crate::host_shell::HostShell {
        match self {
            Surface::Mcp => crate::host_shell::MCP_DEFAULT_HOST_SHELL,
            Surface::Cli | Surface::Library | Surface::Task => {
                crate::host_shell::LIBRARY_DEFAULT_HOST_SHELL
            }
        }
    }
}

impl fmt::Display for Surface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// What the caller asked for explicitly (flags), on top of the surface's defaults.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// More policy files, stacked last.
    pub policy_files: Vec<PathBuf>,
    /// The sandbox mode, when a flag chose one.
    pub sandbox: Option<SandboxMode>,
    /// The approval mode, when a flag chose one.
    pub approval: Option<ApprovalMode>,
    /// On the command line: a model drives it (`--caller model`), so the run gets the
    /// `mcp` posture (its base policy, approval, built-in asks and sandbox default).
    pub model_caller: bool,
}

/// A surface's posture for one workspace: what a run opened there would get.
#[derive(Debug, Clone)]
pub struct Posture {
    /// The surface.
    pub surface: Surface,
    /// The workspace root, canonical.
    pub workspace: PathBuf,
    /// The policy files found, lowest layer first.
    pub files: PolicyFiles,
    /// The policy every call is checked against.
    pub policy: Policy,
    /// When the approver is asked.
    pub approval: ApprovalMode,
    /// The configuration (its `sandbox` decided here).
    pub config: Config,
    /// What the sandbox would enforce on this host.
    pub sandbox: SandboxReport,
    /// Whether what no rule names is allowed because the sandbox is the boundary.
    pub sandbox_is_boundary: bool,
}

impl Posture {
    /// The posture of `surface` in `workspace`: `config` carries the caller's bounds and
    /// sandbox flags (its sandbox mode is replaced by the surface's default unless
    /// `overrides.sandbox` names one).
    pub fn new(
        surface: Surface,
        workspace: &Path,
        mut config: Config,
        overrides: &Overrides,
    ) -> Result<Posture> {
        // As a run holds it: `--workspace .` names this project's build caches, not those
        // of a workspace called `.`.
        let workspace = &crate::paths::canonical_dir(workspace, "workspace")?;
        let surface = match surface {
            Surface::Cli if overrides.model_caller => Surface::Mcp,
            surface => surface,
        };
        let files = PolicyFiles::discover(workspace, &overrides.policy_files)?;
        config.sandbox.mode = overrides.sandbox.unwrap_or(match surface {
            Surface::Mcp | Surface::Task => SandboxMode::WorkspaceWrite,
            Surface::Cli | Surface::Library => SandboxMode::Full,
        });
        let sandbox = report_for(&config, Some(workspace));
        let model_driven = matches!(surface, Surface::Mcp | Surface::Task);
        let boundary = model_driven && sandbox.unenforced(CONFINEMENT).is_empty();
        let fallback = match surface {
            Surface::Mcp | Surface::Task if boundary => ApprovalMode::OnFailure,
            Surface::Mcp | Surface::Task => ApprovalMode::UnlessTrusted,
            Surface::Cli | Surface::Library => ApprovalMode::default(),
        };
        // The surface's allowances are not given where the approval asks about what is
        // not known safe: loaded again without them when only the files say so.
        let unless_trusted = Some(ApprovalMode::UnlessTrusted);
        let mut policy = files.load_onto(base(
            surface,
            boundary,
            overrides.approval != unless_trusted,
        ))?;
        let approval = overrides
            .approval
            .or(policy.approval_mode())
            .unwrap_or(fallback);
        if overrides.approval.is_none() && approval == ApprovalMode::UnlessTrusted {
            policy = files.load_onto(base(surface, boundary, false))?;
        }
        if model_driven {
            policy.push_layer(crate::destructive::layer(workspace));
        }
        if model_driven && !boundary {
            let why = if config.sandbox.mode.is_sandboxed() {
                format!(
                    "not every confinement layer is enforced on this host for this user ({}; \
                     `corral sandbox report` says why)",
                    sandbox.missing(CONFINEMENT)
                )
            } else {
                format!("the sandbox is off (--sandbox {})", config.sandbox.mode)
            };
            config.sandbox.note = Some(format!(
                "{why}, so commands not known to be safe are asked about (approval {approval})"
            ));
        }
        let mut sandbox = sandbox;
        sandbox.note = config.sandbox.note.clone();
        Ok(Posture {
            surface,
            workspace: workspace.to_path_buf(),
            files,
            policy,
            approval,
            config,
            sandbox,
            sandbox_is_boundary: boundary,
        })
    }

    /// What a call of `plan` would be asked about, as the tools' gate asks it: the
    /// policy's checks ([`crate::explain`]), then the [built-in asks](crate::destructive)
    /// by effect, taking the undo record to work unless recording is off (a record over
    /// its budget is known only when a call is made).
    pub fn explain(&self, plan: &crate::plan::Plan) -> Vec<crate::Check> {
        let mut checks = crate::explain(&self.policy, plan, self.approval);
        let unrecorded = (!self.config.record).then_some("recording for undo is off in this run");
        checks.extend(crate::gate::by_effect::checks(
            plan,
            &self.workspace,
            unrecorded,
            crate::destructive::is_on(&self.policy),
            self.config.sandbox.git_write,
            self.approval,
        ));
        checks
    }

    /// A paragraph on what runs without asking, for a startup log, a server's instructions
    /// and `corral policy show`.
    pub fn summary(&self) -> String {
        summary(
            &self.config,
            self.approval,
            self.sandbox_is_boundary,
            &self.workspace,
        )
    }
}

/// A surface's base policy, before the files: with `allowances`, what the surface lets
/// run though corral cannot read it (a person's own one-liners and `NAME=value`; a
/// model's inline programs and unparsable lines where the sandbox is the boundary).
fn base(surface: Surface, boundary: bool, allowances: bool) -> Policy {
    match surface {
        // The person typing is the approver and the author: their own one-liner or
        // `PYTHONPATH=.` is not a question to ask them.
        Surface::Cli if allowances => Policy::permissive()
            .interpreter_one_liner(Effect::Allow)
            .unparsable_inner_line(Effect::Allow)
            .risky_env(Effect::Allow),
        Surface::Cli => Policy::permissive(),
        Surface::Library => Policy::default(),
        Surface::Mcp | Surface::Task if boundary && allowances => Policy::permissive()
            .interpreter_one_liner(Effect::Allow)
            .unparsable_inner_line(Effect::Allow),
        Surface::Mcp | Surface::Task if boundary => Policy::permissive(),
        Surface::Mcp | Surface::Task => Policy::default(),
    }
}

/// [`Posture::summary`] for an open run: what its calls get.
pub fn run_summary(run: &crate::Run) -> String {
    let config = run.config();
    let boundary = config.sandbox.mode.is_sandboxed()
        && config.sandbox.note.is_none()
        && run.policy().default_for(corral_policy::Act::Exec) == Effect::Allow;
    summary(config, run.approval_mode(), boundary, run.workspace())
}

fn summary(config: &Config, approval: ApprovalMode, boundary: bool, workspace: &Path) -> String {
    let sandbox = &config.sandbox;
    let mut out = if sandbox.mode.is_sandboxed() {
        format!(
            "Commands run in a sandbox ({}, network {}): ",
            sandbox.mode,
            if sandbox.network {
                "on"
            } else if sandbox.network_allow.is_empty() {
                "off"
            } else {
                "by domain"
            }
        )
    } else {
        format!("Commands run without a sandbox ({}). ", sandbox.mode)
    };
    match sandbox.mode {
        SandboxMode::WorkspaceWrite => {
            out.push_str("they may write only the workspace, their private temp directory");
            if let Some(dir) = crate::sandbox::cache_dir_for(workspace) {
                out.push_str(&format!(" and the build caches in {}", dir.display()));
            }
            out.push_str(". ");
        }
        SandboxMode::ReadOnly => out.push_str("they may write only a private temp directory. "),
        _ => {}
    }
    // The host's probe makes a namespace: asked only of a box.
    let boxed_in_namespaces =
        sandbox.mode.is_sandboxed() && corral_sys::sandbox::host_support().namespaces;
    if boxed_in_namespaces && !sandbox.network {
        out.push_str(
            "The run's calls share one network of their own (loopback only): a server started \
             with shell_start answers later calls on localhost. ",
        );
        if !sandbox.network_allow.is_empty() {
            out.push_str(&format!(
                "Beyond it they reach only {} through corral's proxy (HTTP_PROXY, HTTPS_PROXY \
                 and ALL_PROXY are set; there is no DNS), and a result names any domain the \
                 proxy refused. ",
                sandbox.network_allow.join(", ")
            ));
        }
    }
    if boxed_in_namespaces {
        out.push_str(
            "Credential stores (~/.ssh, ~/.aws, ~/.netrc, ...) are hidden from commands. ",
        );
    }
    if boundary {
        out.push_str(&format!(
            "Every confinement layer is enforced on this host, so what no rule asks about or denies \
             runs without asking; commands that destroy work in the workspace (git reset --hard, \
             rm -rf of the workspace, ...) are asked about. Approval {approval}: a write the \
             sandbox refuses is offered to the person as a rerun with that path added."
        ));
    } else if let Some(note) = &sandbox.note {
        // What decides every call comes first: the rest is detail.
        let mut first = upper_first(note);
        first.push_str(". ");
        out.insert_str(0, &first);
    } else {
        out.push_str(&format!("Approval {approval}."));
    }
    out
}

/// `text` with its first letter capitalised, for a note that starts a paragraph.
fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
