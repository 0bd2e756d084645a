//! A request becomes a [`Plan`]: every stage's argv, resolved program and working
//! directory, every redirect's resolved path, all decided before anything starts.
//!
//! The plan is the one thing that is checked and the one thing that is spawned: an argv
//! is never joined back into a string, and nothing about a stage is decided after the
//! check. Two decisions are made here, in the open:
//!
//! - **`cd DIR`** changes the working directory of everything that runs after it, as in
//!   bash, wherever it stands (`mkdir -p out && cd out && make`). Planning follows every
//!   way the line can go: a `cd` may run or be skipped by its connector, and may fail, so a
//!   later stage may start in more than one directory; it is planned, and checked, once
//!   for each ([`PlannedPipeline::Either`]). A `cd` must stay inside the workspace by its
//!   lexical path and as far as it resolves while planning; a directory that does not
//!   exist yet is resolved again (symlinks followed) when the `cd` is reached, before
//!   anything after it starts, and a `cd` that fails there fails as bash's does: status 1,
//!   a message, and what `&&` would skip is skipped.
//! - **`pushd DIR`, `popd`, `dirs` and `cd -`** move along the line's directory stack and
//!   its previous directory, as bash's do. The stack and the previous directory are part of
//!   the place a pipeline can start from, so a builtin is planned once per place it can be
//!   reached in ([`PlannedDirStack`]), what it will print included; a target is checked
//!   like a `cd`'s (`popd` returns to a directory that was checked when it was left, and
//!   resolves it again when reached). A line starts with an empty stack and no previous
//!   directory: `cd -` before any change fails as bash's does without `OLDPWD`.
//! - **`time PIPELINE`** is the pipeline, marked ([`PlannedPipeline::Timed`]); **`&`**
//!   marks a list of one pipeline that the line does not wait for
//!   ([`PlannedList::background`]).
//! - **`~`** at the start of a word is the commands' `HOME`, expanded here, so the argv
//!   that is checked is the argv that runs.
//! - **Here-documents and here-strings** are text for a stage's stdin
//!   ([`PlannedOp::Text`]), shown in the plan.
//! - **Programs named without a `/`** are looked up on `PATH` when the line is planned, so
//!   the program that was checked is the program that runs. A program that a line's earlier
//!   stage would create (`make tool && tool`) must be named by its path (`./tool`); a path
//!   is resolved (and its existence checked) when the stage starts.

pub(crate) mod extract;
pub(crate) mod unmodelled;

use std::path::{Component, Path, PathBuf};

use corral_line::{Command, Connector, DirOp, RedirectOp};
use serde::Serialize;

use crate::env::check_overrides;
use crate::error::{Error, Result};
use crate::os_text::OsText;
use crate::paths::canonical_dir;
use crate::redirect::{self, Target};
use crate::resolve::{self, Unavailable};

/// A checked, ready-to-spawn request.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// And-or lists, run one after another.
    pub lists: Vec<PlannedList>,
    /// Where the first stage starts.
    #[serde(skip)]
    pub(crate) start: Dir,
    /// It runs in a box whose kernel keeps a program a deny rule names from starting,
    /// however it is reached (see [`Plan::in_box`]).
    #[serde(skip)]
    pub(crate) kernel_holds_denied_programs: bool,
}

/// Pipelines joined by `&&` / `||`, left to right.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedList {
    /// The first pipeline, which always runs.
    pub first: PlannedPipeline,
    /// The rest, each run or skipped by its connector and the status so far.
    pub rest: Vec<(PlannedConnector, PlannedPipeline)>,
    /// Ended by `&`: its one pipeline starts with stdin on the null device and the line
    /// goes on at once with status 0; it ends with the call, like anything the line
    /// leaves running.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
}

/// `&&` or `||`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlannedConnector {
    /// `&&`: run when the status so far is 0.
    And,
    /// `||`: run when the status so far is not 0.
    Or,
}

/// One pipeline, or a `cd`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlannedPipeline {
    /// Stages connected stdout to stdin by OS pipes.
    Stages(Vec<Stage>),
    /// A `cd`: status 0 when it enters the directory, 1 (and a message) when it cannot.
    Cd(PlannedCd),
    /// A pipeline that may start in more than one directory (after a `cd` that may have
    /// been skipped or may fail): one plan per directory, each checked. The one whose
    /// starting directory is where the line is when it is reached runs.
    Either(Vec<PlannedPipeline>),
    /// A pipeline that could not be planned in a directory the line reaches only after a
    /// `cd` failed (`cd dir; cd ..` from a `dir` that is gone would leave the workspace).
    /// It is not started there: the reason goes to stderr and its status is 1.
    NotPlanned {
        /// The logical directory it would have started in.
        from: PathBuf,
        /// Why it could not be planned there.
        reason: String,
        /// How many stages it has.
        stages: usize,
    },
    /// `cd -`, `pushd DIR`, `popd` or `dirs`, planned from one place (directory, stack and
    /// previous directory).
    DirStack(Box<PlannedDirStack>),
    /// `time PIPELINE`: when it ends, the real time it took and the CPU time its
    /// processes spent go to the line's stderr, as bash's `time` reports them.
    Timed(Box<PlannedPipeline>),
}

impl PlannedPipeline {
    /// The logical directory this plan starts in.
    fn starts_in(&self) -> Option<&Path> {
        match self {
            PlannedPipeline::DirStack(d) => Some(&d.from.logical),
            PlannedPipeline::Stages(stages) => stages.first().map(|s| s.cwd.as_path()),
            PlannedPipeline::Cd(cd) => Some(&cd.from),
            PlannedPipeline::NotPlanned { from, .. } => Some(from),
            PlannedPipeline::Either(_) => None,
            PlannedPipeline::Timed(inner) => inner.starts_in(),
        }
    }

    /// The plan to run when the line is at `here`: a directory-stack builtin is planned
    /// for a whole place, everything else for its directory.
    pub(crate) fn for_dir(&self, here: &Dir) -> Option<&PlannedPipeline> {
        match self {
            PlannedPipeline::Either(variants) => variants.iter().find(|v| v.fits(here)),
            PlannedPipeline::Timed(inner) => inner.for_dir(here),
            one => one.fits(here).then_some(one),
        }
    }

    fn fits(&self, here: &Dir) -> bool {
        match self {
            PlannedPipeline::DirStack(d) => d.from.same_place(here),
            one => one.starts_in() == Some(&here.logical),
        }
    }

    /// The stages of the first plan, standing for every plan (they differ only in
    /// directory).
    fn first_stages(&self) -> &[Stage] {
        match self {
            PlannedPipeline::Stages(stages) => stages,
            PlannedPipeline::Cd(_)
            | PlannedPipeline::DirStack(_)
            | PlannedPipeline::NotPlanned { .. } => &[],
            PlannedPipeline::Either(variants) => variants.first().map_or(&[], Self::first_stages),
            PlannedPipeline::Timed(inner) => inner.first_stages(),
        }
    }

    /// The stages of every plan.
    fn every_stage(&self) -> Box<dyn Iterator<Item = &Stage> + '_> {
        match self {
            PlannedPipeline::Stages(stages) => Box::new(stages.iter()),
            PlannedPipeline::Cd(_)
            | PlannedPipeline::DirStack(_)
            | PlannedPipeline::NotPlanned { .. } => Box::new(std::iter::empty()),
            PlannedPipeline::Either(variants) => {
                Box::new(variants.iter().flat_map(Self::every_stage))
            }
            PlannedPipeline::Timed(inner) => inner.every_stage(),
        }
    }
}

/// A `cd`, planned from one directory.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedCd {
    /// The directory as written (with `~` expanded).
    pub written: String,
    /// The logical directory it starts from.
    pub from: PathBuf,
    /// The directory it enters, as a shell keeps it (logical).
    pub dir: PathBuf,
    /// What `dir` resolved to when planned; `None` when it was not a directory yet. When
    /// the `cd` is reached, `dir` is resolved again (symlinks followed) and must still be
    /// inside the workspace, and be this directory when it was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<PathBuf>,
    #[serde(skip)]
    pub(crate) workspace: PathBuf,
}

/// A directory-stack builtin, planned from one place.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedDirStack {
    /// The builtin as bash names it: `cd -`, `pushd`, `popd` or `dirs`.
    pub builtin: &'static str,
    /// Where it starts.
    #[serde(serialize_with = "place_ser")]
    pub(crate) from: Dir,
    /// The directory it enters, checked like a `cd`'s; `None` for `dirs`, and when there
    /// is nowhere to go.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enter: Option<PlannedCd>,
    /// Where the line is after it, when it works.
    #[serde(skip)]
    pub(crate) after: Dir,
    /// What it prints to stdout when it works: the stack, `~` standing for `HOME`, as
    /// bash's `dirs` shows it (`cd -` prints the directory it entered).
    pub prints: String,
    /// Why it fails wherever it runs from here (bash's message), if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fails: Option<String>,
}

fn place_ser<S: serde::Serializer>(d: &Dir, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&d.logical.display().to_string())
}

/// One process to start.
#[derive(Debug, Clone, Serialize)]
pub struct Stage {
    /// The argv as it will be spawned, as text: an argument that is not UTF-8 is in its
    /// escaped form (see [`crate::os_text::OsText`]), and spawned as its bytes.
    pub argv: Vec<String>,
    /// The program file, or why there is none.
    #[serde(serialize_with = "program_ser")]
    pub program: Result<PathBuf, Unavailable>,
    /// The working directory, as a shell keeps it (logical).
    pub cwd: PathBuf,
    /// `NAME=value` assignments written before the program, set for this stage only.
    pub env: Vec<(String, String)>,
    /// Redirects in the order written; the order matters (`>f 2>&1` is not `2>&1 >f`).
    pub redirects: Vec<PlannedRedirect>,
    /// Text known to reach the stage's stdin: its own here-document or here-string, or
    /// one piped from a `cat` that reads only that. Checked as a program when the stage
    /// runs its stdin (`bash <<'EOF'`, `python3 - <<'EOF'`).
    #[serde(skip)]
    pub(crate) fed: Option<String>,
    /// Whether the stage's stdin is the pipe from a stage before it (whose output is made
    /// when the line runs, unless `fed` knows it).
    #[serde(skip)]
    pub(crate) piped: bool,
    /// For a line run by the host shell (`bash -c LINE`): what the gate checks instead of
    /// the inline line.
    #[serde(skip)]
    pub(crate) host: Option<HostCheck>,
    /// For a stage given as bytes with some not UTF-8: the bytes that are spawned, of
    /// which `argv` and `env` are the escaped forms.
    #[serde(skip)]
    pub(crate) bytes: Option<StageBytes>,
}

/// The bytes of a stage's argv and assignments, where some are not UTF-8.
#[derive(Debug, Clone)]
pub(crate) struct StageBytes {
    pub argv: Vec<std::ffi::OsString>,
    pub env: Vec<(String, std::ffi::OsString)>,
}

/// What is checked about a line the host shell runs.
#[derive(Debug, Clone)]
pub(crate) struct HostCheck {
    /// Every command a bash parser found in it, and its redirect targets.
    pub extracted: extract::Extracted,
    /// The line runs outside a fully enforced sandbox, so a person must approve it.
    pub ask: bool,
    /// The grammar's refusal, shown to whoever is asked.
    pub refusal: String,
    /// What in it runs programs the parser cannot name (see `unmodelled`).
    pub unmodelled: Vec<String>,
    /// It runs in a box whose kernel keeps a program a deny rule names from starting
    /// however it is reached (see `sandbox::programs`): such a rule needs no asking.
    pub kernel_holds_denied_programs: bool,
}

impl Stage {
    /// The text this stage's own redirects leave on its stdin, if any.
    fn own_text(&self) -> Option<&str> {
        self.redirects
            .iter()
            .rev()
            .find(|r| r.fd == 0)
            .and_then(|r| match &r.op {
                PlannedOp::Text(text) => Some(text.as_str()),
                _ => None,
            })
    }

    /// Whether the stage's stdin is left as the pipe from the stage before.
    fn reads_pipe(&self) -> bool {
        !self.redirects.iter().any(|r| r.fd == 0)
    }
}

/// A redirect with its target resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedRedirect {
    /// The descriptor redirected: 0, 1 or 2.
    pub fd: u8,
    /// What it becomes.
    pub op: PlannedOp,
    /// The target as written, joined to the stage's directory: resolved again when the
    /// stage starts, and not opened if it no longer resolves to the checked path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<PathBuf>,
}

/// What a descriptor becomes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlannedOp {
    /// `<`: the file, opened for reading.
    Read(PathBuf),
    /// `>`: the file, created or truncated.
    Write(PathBuf),
    /// `>>`: the file, created or appended to.
    Append(PathBuf),
    /// `N>&M`: a copy of what descriptor M is at that point.
    Dup(u8),
    /// `<<'EOF'` or `<<<'text'`: this text, as stdin.
    Text(String),
}

impl Stage {
    /// `argv[0]` as the bytes the program is found by.
    pub(crate) fn program_name(&self) -> &std::ffi::OsStr {
        match &self.bytes {
            Some(bytes) => &bytes.argv[0],
            None => self.argv[0].as_ref(),
        }
    }

    /// The argv and assignments as spawned: the bytes where given, else the text.
    pub(crate) fn spawned(&self) -> (Vec<std::ffi::OsString>, Vec<crate::env::Var>) {
        match &self.bytes {
            Some(b) => (
                b.argv.clone(),
                b.env.iter().map(|(k, v)| (k.into(), v.clone())).collect(),
            ),
            None => (
                self.argv.iter().map(Into::into).collect(),
                self.env.iter().map(|(k, v)| (k.into(), v.into())).collect(),
            ),
        }
    }

    /// The same stage in the lossy form of its bytes, for the policy's second look at a
    /// stage given as bytes that are not UTF-8; `None` for a stage that is all text.
    pub(crate) fn lossy(&self) -> Option<Stage> {
        let bytes = self.bytes.as_ref()?;
        let mut lossy = self.clone();
        lossy.argv = bytes
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        lossy.env = bytes
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string_lossy().into_owned()))
            .collect();
        Some(lossy)
    }

    /// What the policy checks and an approver sees: the argv, with any `NAME=value`
    /// assignments in front written as the `env` command that would do the same, so the
    /// policy's rules for `env` (which names change what runs) apply to them.
    pub fn checked_argv(&self) -> Vec<String> {
        if self.env.is_empty() {
            return self.argv.clone();
        }
        let mut argv = Vec::with_capacity(1 + self.env.len() + self.argv.len());
        argv.push("env".to_string());
        argv.extend(self.env.iter().map(|(k, v)| format!("{k}={v}")));
        argv.extend(self.argv.iter().cloned());
        argv
    }
}

fn program_ser<S: serde::Serializer>(
    p: &Result<PathBuf, Unavailable>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match p {
        Ok(path) => s.serialize_str(&path.display().to_string()),
        Err(u) => s.serialize_str(&format!("unavailable: {}", u.reason)),
    }
}

impl Plan {
    /// Whether it may change a file: any stage not on the known-safe list, or any
    /// redirect that writes. What the undo record and the box's held paths judge by.
    pub(crate) fn may_write(&self) -> bool {
        self.checked_stages().any(|stage| {
            !corral_policy::safe::is_known_safe(&stage.argv)
                || stage
                    .redirects
                    .iter()
                    .any(|r| matches!(r.op, PlannedOp::Write(_) | PlannedOp::Append(_)))
        })
    }

    /// [`Plan::single`] for an argv and overrides given as bytes: checked and shown in
    /// their escaped form, spawned as the bytes, the program found by its bytes.
    pub(crate) fn single_os(
        argv: &[OsText],
        cwd: PathBuf,
        path_var: Option<&str>,
        env: &[(String, OsText)],
    ) -> Plan {
        let text = |t: &OsText| t.escaped().into_owned();
        let all_text = argv
            .iter()
            .chain(env.iter().map(|(_, v)| v))
            .all(OsText::is_utf8);
        let bytes = (!all_text).then(|| StageBytes {
            argv: argv.iter().map(|a| a.as_os_str().to_owned()).collect(),
            env: env
                .iter()
                .map(|(k, v)| (k.clone(), v.as_os_str().to_owned()))
                .collect(),
        });
        Plan::one_stage(
            argv.iter().map(text).collect(),
            cwd,
            path_var,
            env.iter().map(|(k, v)| (k.clone(), text(v))).collect(),
            bytes,
        )
    }

    /// A plan of one stage: what `exec` runs, with the call's environment overrides.
    pub(crate) fn single(
        argv: Vec<String>,
        cwd: PathBuf,
        path_var: Option<&str>,
        env: Vec<(String, String)>,
    ) -> Plan {
        Plan::one_stage(argv, cwd, path_var, env, None)
    }

    fn one_stage(
        argv: Vec<String>,
        cwd: PathBuf,
        path_var: Option<&str>,
        env: Vec<(String, String)>,
        bytes: Option<StageBytes>,
    ) -> Plan {
        let program = match &bytes {
            Some(b) => resolve::program(&b.argv[0], path_var, &cwd),
            None => resolve::program(&argv[0], path_var, &cwd),
        };
        let start = Dir {
            logical: cwd.clone(),
            physical: Some(cwd.clone()),
            ..Dir::default()
        };
        let stage = Stage {
            argv,
            program,
            cwd,
            env,
            redirects: Vec::new(),
            fed: None,
            piped: false,
            host: None,
            bytes,
        };
        Plan {
            lists: vec![PlannedList {
                first: PlannedPipeline::Stages(vec![stage]),
                rest: Vec::new(),
                background: false,
            }],
            start,
            kernel_holds_denied_programs: false,
        }
    }

    /// A plan of one stage, `bash -c LINE`, for the host shell, checked as `host` says.
    pub(crate) fn host_line(
        argv: Vec<String>,
        cwd: PathBuf,
        path_var: Option<&str>,
        host: HostCheck,
    ) -> Plan {
        let mut plan = Plan::single(argv, cwd, path_var, Vec::new());
        if let PlannedPipeline::Stages(stages) = &mut plan.lists[0].first {
            stages[0].host = Some(host);
        }
        plan
    }

    /// The plan as it runs in a box of `mode`: where that box keeps a program a deny rule
    /// names from starting however it is reached (stubs over its files, or a Landlock
    /// layer of their own), a line whose programs cannot all be named needs no asking for
    /// such a rule. What the `shell` and `exec` tools do, and `corral policy check` with
    /// the same sandbox.
    pub fn in_box(mut self, mode: crate::config::sandbox::SandboxMode) -> Plan {
        self.kernel_holds_denied_programs = mode.kernel_holds_denied_programs();
        self
    }

    /// Plan `line` as `shell` would, starting in `cwd` inside `workspace`, looking programs
    /// up on this process's `PATH`. Nothing runs; nothing is recorded.
    pub fn for_line(line: &str, workspace: &Path, cwd: &Path) -> Result<Plan> {
        let parsed = corral_line::parse(line).map_err(Error::refused)?;
        let workspace = canonical_dir(workspace, "workspace")?;
        let cwd = canonical_dir(cwd, "cwd")?;
        let path_var = std::env::var("PATH").ok();
        let home = std::env::var("HOME").ok();
        plan_line(
            &parsed,
            &LineContext {
                workspace: &workspace,
                cwd: &cwd,
                path_var: path_var.as_deref(),
                home: home.as_deref(),
                protected: &[],
                hidden: crate::glob::Hidden::NONE,
            },
        )
    }

    /// Plan one argv as `exec` would, in `cwd`, looking the program up on this process's
    /// `PATH`. Nothing runs; nothing is recorded. Arguments may be bytes, as for `exec`.
    pub fn for_argv<S: Into<OsText>>(
        argv: impl IntoIterator<Item = S>,
        cwd: &Path,
    ) -> Result<Plan> {
        let argv: Vec<OsText> = argv.into_iter().map(Into::into).collect();
        if argv.first().is_none_or(|a| a.as_os_str().is_empty()) {
            return Err(Error::invalid(
                "argv is empty: name the program to run as its first element",
            ));
        }
        let cwd = canonical_dir(cwd, "cwd")?;
        let path_var = std::env::var("PATH").ok();
        Ok(Plan::single_os(&argv, cwd, path_var.as_deref(), &[]))
    }

    /// Every stage, in the order written. A pipeline that may start in several
    /// directories shows its first plan (see [`Plan::checked_stages`] for all of them).
    pub fn stages(&self) -> impl Iterator<Item = &Stage> {
        self.pipelines().flat_map(PlannedPipeline::first_stages)
    }

    /// Every stage of every plan: what the policy checks, one stage once per directory
    /// it may run in.
    pub fn checked_stages(&self) -> impl Iterator<Item = &Stage> {
        self.pipelines().flat_map(PlannedPipeline::every_stage)
    }

    /// What the line wrote before each of [`Plan::stages`]: `|` inside a pipeline, `&&`
    /// or `||` between pipelines, `;` or `&` between lists; empty before the first. Past a
    /// `cd` (a pipeline without stages) a stage keeps the `;` or `&` before the `cd` if
    /// there was one, since that is what separates it from the stage before.
    pub(crate) fn stage_joints(&self) -> Vec<&'static str> {
        let mut joints = Vec::new();
        let mut pending: Option<&'static str> = None;
        for (i, list) in self.lists.iter().enumerate() {
            if i > 0 {
                pending = Some(if self.lists[i - 1].background {
                    "&"
                } else {
                    ";"
                });
            }
            let rest = list.rest.iter().map(|(connector, p)| {
                let joint = match connector {
                    PlannedConnector::And => "&&",
                    PlannedConnector::Or => "||",
                };
                (Some(joint), p)
            });
            for (joint, pipeline) in std::iter::once((None, &list.first)).chain(rest) {
                if let Some(joint) = joint
                    && !matches!(pending, Some(";" | "&"))
                {
                    pending = Some(joint);
                }
                for k in 0..pipeline.first_stages().len() {
                    joints.push(if k == 0 {
                        pending.take().unwrap_or("")
                    } else {
                        "|"
                    });
                }
            }
        }
        joints
    }

    fn pipelines(&self) -> impl Iterator<Item = &PlannedPipeline> {
        self.lists
            .iter()
            .flat_map(|l| std::iter::once(&l.first).chain(l.rest.iter().map(|(_, p)| p)))
    }
}

/// What planning a line needs besides the line: where it runs and what it may name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LineContext<'a> {
    /// The workspace root, canonical.
    pub workspace: &'a Path,
    /// Where the line starts, canonical.
    pub cwd: &'a Path,
    /// The commands' `PATH`, to find programs on.
    pub path_var: Option<&'a str>,
    /// The commands' `HOME`, which `~` stands for.
    pub home: Option<&'a str>,
    /// Directories no redirect may write under.
    pub protected: &'a [PathBuf],
    /// What the call's box hides, which a pattern does not match.
    pub hidden: crate::glob::Hidden<'a>,
}

/// Turn a parsed line into a plan (see the module docs for how `cd` is planned).
pub(crate) fn plan_line(line: &corral_line::Line, ctx: &LineContext<'_>) -> Result<Plan> {
    let planner = Planner { ctx };
    let start = Dir {
        logical: ctx.cwd.to_path_buf(),
        physical: Some(ctx.cwd.to_path_buf()),
        // A line starts with no previous directory of its own: `cd -` before any change
        // of directory fails as bash's does without `OLDPWD` (see `pipeline`).
        stack: Vec::new(),
        oldpwd: None,
    };
    let mut dirs = vec![start.clone()];
    let mut lists = Vec::with_capacity(line.lists.len());
    for list in &line.lists {
        let mut states: Vec<(Dir, Last)> = dirs.iter().map(|d| (d.clone(), Last::Any)).collect();
        let first = planner.pipeline(&list.first, None, &mut states)?;
        let mut rest = Vec::with_capacity(list.rest.len());
        for (connector, pipeline) in &list.rest {
            let connector = match connector {
                Connector::And => PlannedConnector::And,
                Connector::Or => PlannedConnector::Or,
            };
            rest.push((
                connector,
                planner.pipeline(pipeline, Some(connector), &mut states)?,
            ));
        }
        lists.push(PlannedList {
            first,
            rest,
            background: list.background,
        });
        dirs.clear();
        for (dir, _) in states {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    Ok(Plan {
        lists,
        start,
        kernel_holds_denied_programs: false,
    })
}

/// A directory a stage may run in: as a shell keeps it (logical), and what it resolved
/// to when planned (`None` when it did not exist yet); with the line's directory stack
/// (`pushd`) and its previous directory (`OLDPWD`, for `cd -`) there.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Dir {
    pub logical: PathBuf,
    pub physical: Option<PathBuf>,
    /// Below the current directory, top first.
    pub stack: Vec<(PathBuf, Option<PathBuf>)>,
    pub oldpwd: Option<PathBuf>,
}

impl Dir {
    /// Same directory, stack and previous directory, by their logical paths.
    pub(crate) fn same_place(&self, other: &Dir) -> bool {
        self.logical == other.logical
            && self.oldpwd == other.oldpwd
            && self.stack.len() == other.stack.len()
            && self.stack.iter().zip(&other.stack).all(|(a, b)| a.0 == b.0)
    }

    /// The place after entering `cd`'s directory from here.
    fn entered(&self, cd: &PlannedCd) -> Dir {
        Dir {
            logical: cd.dir.clone(),
            physical: cd.resolved.clone(),
            stack: self.stack.clone(),
            oldpwd: Some(self.logical.clone()),
        }
    }
}

/// What planning knows of the status so far, which decides what `&&` and `||` run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    /// At the start of a list: the first pipeline always runs.
    Any,
    Zero,
    NonZero,
}

impl Last {
    fn runs(self, connector: Option<PlannedConnector>) -> bool {
        match (connector, self) {
            (None, _) | (_, Last::Any) => true,
            (Some(PlannedConnector::And), last) => last == Last::Zero,
            (Some(PlannedConnector::Or), last) => last == Last::NonZero,
        }
    }
}

/// Plans pipelines in every directory they may start in.
struct Planner<'a> {
    ctx: &'a LineContext<'a>,
}

impl Planner<'_> {
    /// Plan `pipeline` after `connector`, from every state in `states` that runs it, and
    /// leave in `states` every state after it (run or skipped). A pipeline always ends with
    /// either status; a `cd` either moved (status 0) or failed where it was (status 1).
    fn pipeline(
        &self,
        pipeline: &corral_line::Pipeline,
        connector: Option<PlannedConnector>,
        states: &mut Vec<(Dir, Last)>,
    ) -> Result<PlannedPipeline> {
        let (run, skipped): (Vec<_>, Vec<_>) =
            states.drain(..).partition(|(_, last)| last.runs(connector));
        let mut from: Vec<Dir> = Vec::new();
        for (dir, _) in run {
            if !from.contains(&dir) {
                from.push(dir);
            }
        }
        let mut variants: Vec<PlannedPipeline> = Vec::with_capacity(from.len());
        let mut after = Vec::new();
        for (i, dir) in from.into_iter().enumerate() {
            let planned = match pipeline.commands.as_slice() {
                // The grammar admits `cd` only alone in its pipeline.
                [Command::Cd(cd)] => self
                    .cd("cd", &dir, &self.word(&cd.dir)?, cd.dir.glob.is_some())
                    .map(|planned| {
                        after.push((dir.entered(&planned), Last::Zero));
                        PlannedPipeline::Cd(planned)
                    }),
                [Command::DirStack(d)] => self.dir_stack(&dir, &d.op).map(|planned| {
                    if planned.fails.is_none() {
                        after.push((planned.after.clone(), Last::Zero));
                    }
                    PlannedPipeline::DirStack(Box::new(planned))
                }),
                commands => self.stages(commands, &dir).map(|stages| {
                    after.push((dir.clone(), Last::Zero));
                    PlannedPipeline::Stages(stages)
                }),
            };
            // The first directory is the way the line goes when every `cd` before works;
            // a problem there refuses the line. Elsewhere (after a `cd` that failed) the
            // pipeline is not started and fails, rather than refusing what bash would run.
            let planned = match planned {
                Ok(planned) => planned,
                Err(e) if i > 0 => PlannedPipeline::NotPlanned {
                    from: dir.logical.clone(),
                    reason: e.to_string(),
                    stages: match pipeline.commands.as_slice() {
                        [Command::Cd(_) | Command::DirStack(_)] => 0,
                        commands => commands.len(),
                    },
                },
                Err(e) => return Err(e),
            };
            // Only a directory-stack builtin depends on more of the place than its
            // directory: the rest is planned once per directory.
            let here = Dir {
                stack: Vec::new(),
                oldpwd: None,
                ..dir.clone()
            };
            if matches!(planned, PlannedPipeline::DirStack(_))
                || !variants.iter().any(|v| v.fits(&here) || v.fits(&dir))
            {
                variants.push(planned);
            }
            after.push((dir, Last::NonZero));
        }
        for state in after.into_iter().chain(skipped) {
            if !states.contains(&state) {
                states.push(state);
            }
        }
        let planned = if variants.len() == 1 {
            variants.remove(0)
        } else {
            PlannedPipeline::Either(variants)
        };
        Ok(if pipeline.timed {
            PlannedPipeline::Timed(Box::new(planned))
        } else {
            planned
        })
    }

    fn stages(&self, commands: &[Command], dir: &Dir) -> Result<Vec<Stage>> {
        let mut stages: Vec<Stage> = Vec::with_capacity(commands.len());
        for command in commands {
            if let Command::Simple(simple) = command {
                let mut stage = self.stage(simple, dir)?;
                if let Some(before) = stages.last()
                    && stage.reads_pipe()
                {
                    stage.piped = true;
                    stage.fed = piped_text(before);
                }
                stages.push(stage);
            }
        }
        Ok(stages)
    }

    /// A word's value, with a leading `~` expanded from the commands' `HOME`.
    fn word(&self, word: &corral_line::Word) -> Result<String> {
        if !word.tilde {
            return Ok(word.value.clone());
        }
        match self.ctx.home {
            Some(home) if !home.is_empty() => Ok(word.expanded(home)),
            _ => Err(Error::invalid(format!(
                "`{}` starts with `~`, but HOME is not set in the command's environment: write the path in full",
                word.value
            ))),
        }
    }

    fn stage(&self, simple: &corral_line::Simple, dir: &Dir) -> Result<Stage> {
        let env: Vec<(String, String)> = simple
            .assignments
            .iter()
            .map(|a| (a.name.clone(), a.value.value.clone()))
            .collect();
        check_overrides(&env.iter().cloned().collect()).map_err(|e| {
            Error::invalid(format!(
                "in `{}`: {e}",
                simple.program().unwrap_or_default()
            ))
        })?;
        let mut argv = Vec::with_capacity(simple.argv.len());
        for word in &simple.argv {
            match &word.glob {
                Some(pattern) => argv.extend(crate::glob::expand(
                    pattern,
                    &self.word(word)?,
                    &dir.logical,
                    self.ctx.hidden,
                )?),
                None => argv.push(self.word(word)?),
            }
        }
        let program = resolve::program(&argv[0], self.ctx.path_var, &dir.logical);
        let redirects = simple
            .redirects
            .iter()
            .map(|r| self.redirect(r, &dir.logical))
            .collect::<Result<Vec<_>>>()?;
        let mut stage = Stage {
            argv,
            program,
            cwd: dir.logical.clone(),
            env,
            redirects,
            fed: None,
            piped: false,
            host: None,
            bytes: None,
        };
        stage.fed = stage.own_text().map(str::to_string);
        Ok(stage)
    }

    fn redirect(&self, r: &corral_line::Redirect, cwd: &Path) -> Result<PlannedRedirect> {
        let planned = |op| PlannedRedirect {
            fd: r.fd,
            op,
            written: None,
        };
        let (word, writing) = match &r.op {
            RedirectOp::Dup(fd) => return Ok(planned(PlannedOp::Dup(*fd))),
            RedirectOp::HereDoc(doc) => return Ok(planned(PlannedOp::Text(doc.body.clone()))),
            RedirectOp::HereString(word) => {
                return Ok(planned(PlannedOp::Text(format!("{}\n", self.word(word)?))));
            }
            RedirectOp::Read(w) => (w, false),
            RedirectOp::Write(w) | RedirectOp::Append(w) => (w, true),
        };
        let target = self.word(word)?;
        if word.glob.is_some() {
            return Err(Error::invalid(format!(
                "the redirect target `{target}` is a pattern, which corral does not expand there: \
                 write the file's name"
            )));
        }
        let path = match redirect::resolve(cwd, &target, writing, self.ctx.protected)? {
            Target::Descriptor(fd) => return Ok(planned(PlannedOp::Dup(fd))),
            Target::File(path) => path,
        };
        let op = match &r.op {
            RedirectOp::Read(_) => PlannedOp::Read(path),
            RedirectOp::Write(_) => PlannedOp::Write(path),
            _ => PlannedOp::Append(path),
        };
        Ok(PlannedRedirect {
            fd: r.fd,
            op,
            written: Some(cwd.join(&target)),
        })
    }

    /// `cd dir` from `from`, as a shell does it: `..` is taken off the logical path, and
    /// the result must stay inside the workspace, both as written and as far as it
    /// resolves now. A directory that does not exist yet (an earlier stage may create
    /// it) is resolved and checked again when the `cd` is reached.
    fn cd(&self, builtin: &str, from: &Dir, written: &str, pattern: bool) -> Result<PlannedCd> {
        let written = written.to_string();
        if pattern {
            return Err(Error::invalid(format!(
                "`{builtin} {written}` names a pattern, which corral does not expand for {builtin}: \
                 write the directory's name"
            )));
        }
        let logical = logical_join(&from.logical, &written);
        // Refused, not malformed: the line is well formed and names a place corral does
        // not let a command go, as the policy refuses a rule's match.
        let leaves = |at: &Path| {
            let hint = format!(
                "stay inside {}: commands run in the workspace and below it",
                self.ctx.workspace.display()
            );
            Error::denied(
                format!(
                    "refused: `{builtin} {written}` leaves the workspace ({}): {hint}",
                    at.display(),
                ),
                crate::error::Denial {
                    status: crate::error::DenialStatus::Refused,
                    rule: None,
                    layer: Some("workspace".into()),
                    hint,
                },
            )
        };
        if !logical.starts_with(self.ctx.workspace) {
            return Err(leaves(&logical));
        }
        let resolved = match logical.canonicalize() {
            Ok(p) if p.is_dir() => Some(p),
            _ => None,
        };
        let reach = match &resolved {
            Some(p) => p.clone(),
            None => redirect::resolve_path(&logical).unwrap_or_else(|_| logical.clone()),
        };
        if !reach.starts_with(self.ctx.workspace) {
            return Err(leaves(&reach));
        }
        Ok(PlannedCd {
            written,
            from: from.logical.clone(),
            dir: logical,
            resolved,
            workspace: self.ctx.workspace.to_path_buf(),
        })
    }
}

impl Planner<'_> {
    /// `cd -`, `pushd DIR`, `popd` or `dirs` from `from`: where it goes (checked as a
    /// `cd` is), what it prints, or bash's message when there is nowhere to go.
    fn dir_stack(&self, from: &Dir, op: &DirOp) -> Result<PlannedDirStack> {
        let planned =
            |builtin, enter: Option<PlannedCd>, after: Dir, prints, fails| PlannedDirStack {
                builtin,
                from: from.clone(),
                enter,
                after,
                prints,
                fails,
            };
        Ok(match op {
            DirOp::Show => planned("dirs", None, from.clone(), self.show(from), None),
            DirOp::Back => match &from.oldpwd {
                None => planned(
                    "cd -",
                    None,
                    from.clone(),
                    String::new(),
                    Some("cd: OLDPWD not set".to_string()),
                ),
                Some(old) => {
                    let cd = self.cd("cd", from, &old.display().to_string(), false)?;
                    let after = from.entered(&cd);
                    let prints = format!("{}\n", after.logical.display());
                    planned("cd -", Some(cd), after, prints, None)
                }
            },
            DirOp::Push(word) => {
                let cd = self.cd("pushd", from, &self.word(word)?, word.glob.is_some())?;
                let mut after = from.entered(&cd);
                after
                    .stack
                    .insert(0, (from.logical.clone(), from.physical.clone()));
                let prints = self.show(&after);
                planned("pushd", Some(cd), after, prints, None)
            }
            DirOp::Pop => match from.stack.split_first() {
                None => planned(
                    "popd",
                    None,
                    from.clone(),
                    String::new(),
                    Some("popd: directory stack empty".to_string()),
                ),
                Some(((top, resolved), rest)) => {
                    let cd = PlannedCd {
                        written: top.display().to_string(),
                        from: from.logical.clone(),
                        dir: top.clone(),
                        resolved: resolved.clone(),
                        workspace: self.ctx.workspace.to_path_buf(),
                    };
                    let mut after = from.entered(&cd);
                    after.stack = rest.to_vec();
                    let prints = self.show(&after);
                    planned("popd", Some(cd), after, prints, None)
                }
            },
        })
    }

    /// The stack as bash's `dirs` prints it: the current directory first, `HOME` as `~`.
    fn show(&self, at: &Dir) -> String {
        let home = self.ctx.home.filter(|h| h.len() > 1);
        let polite = |p: &Path| {
            let p = p.display().to_string();
            match home.and_then(|h| p.strip_prefix(h)) {
                Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("~{rest}"),
                _ => p,
            }
        };
        let words: Vec<String> = std::iter::once(polite(&at.logical))
            .chain(at.stack.iter().map(|(d, _)| polite(d)))
            .collect();
        format!("{}\n", words.join(" "))
    }
}

/// `base` joined with `dir`, with `.` dropped and `..` taking off the previous part, as a
/// shell's `cd` does by default.
fn logical_join(base: &Path, dir: &str) -> PathBuf {
    let mut out = if Path::new(dir).is_absolute() {
        PathBuf::from("/")
    } else {
        base.to_path_buf()
    };
    for part in Path::new(dir).components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(p) => out.push(p),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    out
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// The text `before` writes into the pipe, when the line alone says what it is:
/// `cat <<'EOF' | bash` passes its here-document through unchanged, and `echo WORDS | sh`
/// writes its words. `None` when it is made when the line runs.
fn piped_text(before: &Stage) -> Option<String> {
    let (program, args) = before.argv.split_first()?;
    match program.as_str() {
        "cat" if args.is_empty() || args == ["-"] => before.fed.clone(),
        "echo" => {
            let words: Vec<&str> = args
                .iter()
                .map(String::as_str)
                .skip_while(|a| matches!(*a, "-n" | "-e" | "-E" | "-ne" | "-en"))
                .collect();
            Some(format!("{}\n", words.join(" ")))
        }
        _ => None,
    }
}

impl Plan {
    /// The reports of this plan's stages, before they start.
    pub(crate) fn stage_reports(&self) -> Vec<crate::outcome::StageReport> {
        self.stages()
            .zip(self.stage_joints())
            .map(|(stage, joint)| crate::outcome::StageReport {
                argv: stage.argv.clone(),
                program: stage.program.as_ref().ok().cloned(),
                cwd: stage.cwd.clone(),
                status: None,
                joint,
            })
            .collect()
    }
}
