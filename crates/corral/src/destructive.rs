//! What destroys work, and which of it `corral undo` can put back.
//!
//! Every surface a model drives (`corral mcp`, a `corral run` task, `corral exec --caller
//! model`) gets the built-in asks; a person typing on the command line and the library do
//! not. The asks are made **by effect** (`gate/by_effect.rs`): a command is read as it
//! runs — wrappers, `bash -c`, git's options before its subcommand and its aliases, `rm`'s
//! options after its operands, a target's `.` and `..`, `find … -delete` and `find … -exec
//! rm` — and what it would destroy is put in one of three classes ([`Loss`]):
//!
//! - [`Loss::Recorded`]: files the undo record holds (`rm -rf src`, `git clean -f` of
//!   untracked files, `git checkout -- .`), and git's refs, reflogs and index (`git reset
//!   --hard`, `branch -D`, `stash drop`). With a working record these are **not** asked:
//!   `corral undo` puts them back. Where the record is off, failed or over its budget,
//!   they are asked, on every surface.
//! - [`Loss::Unrecorded`]: local state the record leaves out — ignored files (`git clean
//!   -x`, `rm` of an ignored path), objects pruned now and reflogs expired now (`gc
//!   --prune=now`, `prune`, `reflog expire`, `filter-repo`). Asked on a model's
//!   surfaces whatever the record; on the others where the record does not work.
//! - [`Loss::Remote`]: the remote's (`git push --force`). Asked on a model's surfaces.
//!
//! The switch is the policy layer [`LAYER`], which [`layer`] makes and
//! [`crate::Posture`] pushes for a model's surfaces: `corral policy show --surface mcp`
//! lists it. Its rules are the git rows of [`GIT`] that are asked whatever the record, as
//! globs over the joined argv (so a policy `allow` in another layer does not lift them:
//! ask beats allow); each row's example is checked by a test to be classified, by effect,
//! as the row says. The table (`destructive_table.md`) is the documentation:
//!
#![doc = include_str!("destructive_table.md")]
//!
//! What the words cannot tell (an inline program, a script, a build) is not asked about
//! here: the sandbox keeps those inside the workspace, and undo puts back what they
//! change there.

use std::path::Path;

use corral_policy::{Act, Effect, Layer, Origin, Policy, Rule};

/// The layer the built-in asks live in.
pub const LAYER: &str = "built-in: destroys work";

/// What a destroying command loses, by whether undo can put it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// Files the undo record holds: `corral undo` puts them back.
    Recorded,
    /// Git's refs, reflogs and index: in the undo record where git may write its data
    /// (`git_write`, the default), so recorded there ([`Loss::held`]); left out otherwise.
    Refs,
    /// Local state the record leaves out: ignored files, objects pruned and reflogs
    /// expired now, what lies outside the workspace.
    Unrecorded,
    /// The remote's refs and history.
    Remote,
}

impl Loss {
    /// What it is where the record holds git's refs (`refs` true) or not: git's refs
    /// without them in the record are state the record leaves out.
    pub fn held(self, refs: bool) -> Loss {
        match self {
            Loss::Refs if !refs => Loss::Unrecorded,
            Loss::Refs => Loss::Recorded,
            other => other,
        }
    }

    /// Whether a call that loses this is asked: on a model's surfaces (`builtin`) when
    /// undo cannot put it back; anywhere when the call's changes are not recorded
    /// (`recorded` false), except the remote's, which only a model's surfaces ask about.
    pub fn asked(self, builtin: bool, recorded: bool) -> bool {
        match self {
            Loss::Recorded | Loss::Refs => !recorded,
            Loss::Unrecorded => builtin || !recorded,
            Loss::Remote => builtin,
        }
    }

    /// Why undo cannot put it back, in words; `None` when it can.
    pub fn why(self) -> Option<&'static str> {
        match self {
            Loss::Recorded | Loss::Refs => None,
            Loss::Unrecorded => Some("the undo record does not hold it"),
            Loss::Remote => Some("it is the remote's, which undo does not reach"),
        }
    }
}

/// One row of what git destroys. The words and classes `gate/git_effect.rs` gives are
/// its own; a test holds each row to them.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(
    not(test),
    allow(dead_code, reason = "the rows' words are read by the tests")
)]
pub struct GitRow {
    /// The glob after `git ` for the policy layer (asked whatever the record), or `None`
    /// for a row undo puts back, which only the by-effect check asks about.
    pub pattern: Option<&'static str>,
    /// A spelling that does it, checked by effect in a test.
    pub example: &'static str,
    /// What it destroys.
    pub why: &'static str,
    pub loss: Loss,
}

const fn row(
    pattern: Option<&'static str>,
    example: &'static str,
    why: &'static str,
    loss: Loss,
) -> GitRow {
    GitRow {
        pattern,
        example,
        why,
        loss,
    }
}

/// Git's refs, reflogs and index are in the undo record (`undo/walk.rs` `git_dir`, with
/// `git_write`, the default): what moves them is put back by `corral undo`, so it is asked
/// only where the record does not work. What drops objects or reflogs now stays asked.
const REFS: Loss = Loss::Refs;

/// What git destroys, as `gate/git_effect.rs` classifies it.
pub const GIT: &[GitRow] = &[
    row(
        None,
        "reset --hard HEAD~1",
        "discards uncommitted changes and moves the branch",
        REFS,
    ),
    row(
        None,
        "reset --merge",
        "discards uncommitted changes and moves the branch",
        REFS,
    ),
    row(
        None,
        "clean -fdx",
        "deletes ignored files, which the undo record leaves out",
        Loss::Unrecorded,
    ),
    row(
        None,
        "clean -fX",
        "deletes ignored files, which the undo record leaves out",
        Loss::Unrecorded,
    ),
    row(None, "clean -fd", "deletes untracked files", Loss::Recorded),
    row(
        None,
        "checkout -- .",
        "puts the paths it names back as committed, discarding their changes",
        Loss::Recorded,
    ),
    row(
        None,
        "checkout -f main",
        "discards uncommitted changes",
        Loss::Recorded,
    ),
    row(
        None,
        "restore .",
        "discards the uncommitted changes of the paths it names",
        Loss::Recorded,
    ),
    row(
        None,
        "switch --discard-changes main",
        "discards uncommitted changes",
        Loss::Recorded,
    ),
    row(
        None,
        "read-tree -u --reset HEAD",
        "overwrites the work tree, discarding uncommitted changes",
        Loss::Recorded,
    ),
    row(
        None,
        "rm -f a.txt",
        "removes files whatever their uncommitted changes",
        Loss::Recorded,
    ),
    row(None, "stash drop", "deletes a stash", REFS),
    row(None, "stash clear", "deletes every stash", REFS),
    row(
        None,
        "branch -D topic",
        "deletes a branch whatever its merge state",
        REFS,
    ),
    row(
        None,
        "update-ref -d refs/heads/topic",
        "deletes a ref",
        REFS,
    ),
    row(
        None,
        "filter-branch --tree-filter true HEAD",
        "rewrites history",
        REFS,
    ),
    row(
        Some("filter-repo*"),
        "filter-repo --path src",
        "rewrites history and drops the reflogs and unreachable objects",
        Loss::Unrecorded,
    ),
    row(
        Some("reflog expire*"),
        "reflog expire --expire=now --all",
        "drops the record that lets lost commits be found",
        Loss::Unrecorded,
    ),
    row(
        Some("gc*--prune=now*"),
        "gc --prune=now",
        "deletes unreachable commits now",
        Loss::Unrecorded,
    ),
    row(
        Some("prune{, *}"),
        "prune",
        "deletes unreachable commits now",
        Loss::Unrecorded,
    ),
    row(
        Some("push*--force*"),
        "push --force origin main",
        "rewrites the remote's history",
        Loss::Remote,
    ),
    row(
        Some("push* -f*"),
        "push -f origin main",
        "rewrites the remote's history",
        Loss::Remote,
    ),
    row(
        Some("push* +*"),
        "push origin +main",
        "rewrites the remote's history",
        Loss::Remote,
    ),
    row(
        Some("push*--mirror*"),
        "push --mirror origin",
        "rewrites the remote's refs",
        Loss::Remote,
    ),
    row(
        Some("push*--delete*"),
        "push --delete origin topic",
        "deletes remote refs",
        Loss::Remote,
    ),
    row(
        Some("push* :*"),
        "push origin :topic",
        "deletes remote refs",
        Loss::Remote,
    ),
];

/// Where git takes options before its subcommand, for the layer's globs: `git -C dir …`,
/// `git -c k=v …` (the by-effect check reads every option git takes there).
const GIT_PREFIXES: &str = "git{, -C *, -c *} ";

/// Directories that are build output or caches, wherever they are: removing one, or what
/// is in it, is routine (`rm -rf target`) though the record leaves it out, since a build
/// makes it again. Any other path the record leaves out (an ignored `.env`) is asked.
pub const GENERATED: &[&str] = &[
    "target",
    "node_modules",
    "build",
    "dist",
    "out",
    "bin",
    "obj",
    "coverage",
    "tmp",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".cache",
    ".next",
    ".nuxt",
    ".turbo",
    ".parcel-cache",
    ".gradle",
    ".terraform",
    "_build",
    "zig-cache",
    "zig-out",
];

fn rule(pattern: &str) -> Rule {
    Rule::new(Act::Exec, pattern, Effect::Ask, Origin::Builtin)
        .unwrap_or_else(|e| panic!("built-in pattern {pattern:?}: {e}"))
}

/// The built-in asks' layer: the rows of [`GIT`] asked whatever the record. Its presence
/// in a policy turns the by-effect asks of [`Loss::Unrecorded`] and [`Loss::Remote`] on
/// (see [`is_on`]).
pub fn layer(_workspace: &Path) -> Layer {
    let mut layer = Layer::new(LAYER);
    for pattern in GIT.iter().filter_map(|r| r.pattern) {
        layer.push(rule(&format!("{GIT_PREFIXES}{pattern}")));
    }
    layer
}

/// Whether `policy` carries the built-in asks (a model's surface).
pub fn is_on(policy: &Policy) -> bool {
    policy.layers().iter().any(|l| l.name() == LAYER)
}

// The rows' own tests are beside the check that reads them: `gate/by_effect/table.rs`.
