//! A request becomes a [`Plan`]: every stage's argv, resolved program and working
//! directory, every redirect's resolved path, all decided before anything starts.
//!
//! The plan is the one thing that is checked and the one thing that is spawned: an argv
//! is never joined back into a string, and nothing about a stage is decided after the
//! check. Two decisions are made here, in the open:
//!
//! - **`cd DIR`** changes the planned working directory of every later stage. The grammar
//!   admits it only where it runs unconditionally, the directory must exist when the line
//!   is planned, and it must stay inside the workspace.
//! - **Programs named without a `/`** are looked up on `PATH` when the line is planned, so
//!   the program that was checked is the program that runs. A program that a line's earlier
//!   stage would create (`make tool && tool`) must be named by its path (`./tool`); a path
//!   is resolved (and its existence checked) when the stage starts.

use std::path::{Component, Path, PathBuf};

use corral_line::{Command, Connector, RedirectOp};
use serde::Serialize;

use crate::env::check_overrides;
use crate::error::{Error, Result};
use crate::redirect::{self, Target};
use crate::resolve::{self, Unavailable};
use crate::run::canonical_dir;

/// A checked, ready-to-spawn request.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// And-or lists, run one after another.
    pub lists: Vec<PlannedList>,
}

/// Pipelines joined by `&&` / `||`, left to right.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedList {
    /// The first pipeline, which always runs.
    pub first: PlannedPipeline,
    /// The rest, each run or skipped by its connector and the status so far.
    pub rest: Vec<(PlannedConnector, PlannedPipeline)>,
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
    /// A `cd` whose directory was resolved when planning; its status is 0.
    Cd(PathBuf),
}

/// One process to start.
#[derive(Debug, Clone, Serialize)]
pub struct Stage {
    /// The argv exactly as it will be spawned.
    pub argv: Vec<String>,
    /// The program file, or why there is none.
    #[serde(serialize_with = "program_ser")]
    pub program: Result<PathBuf, Unavailable>,
    /// The working directory, as a shell keeps it (logical).
    pub cwd: PathBuf,
    /// The directory `cwd` resolved to when it was checked; the stage does not start if it
    /// resolves elsewhere by then (an earlier stage replaced a directory with a symlink).
    #[serde(skip)]
    pub(crate) physical_cwd: PathBuf,
    /// `NAME=value` assignments written before the program, set for this stage only.
    pub env: Vec<(String, String)>,
    /// Redirects in the order written; the order matters (`>f 2>&1` is not `2>&1 >f`).
    pub redirects: Vec<PlannedRedirect>,
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
}

impl Stage {
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
    /// A plan of one stage: what `exec` runs, with the call's environment overrides.
    pub(crate) fn single(
        argv: Vec<String>,
        cwd: PathBuf,
        path_var: Option<&str>,
        env: Vec<(String, String)>,
    ) -> Plan {
        let program = resolve::program(&argv[0], path_var, &cwd);
        let stage = Stage {
            argv,
            program,
            physical_cwd: cwd.clone(),
            cwd,
            env,
            redirects: Vec::new(),
        };
        Plan {
            lists: vec![PlannedList {
                first: PlannedPipeline::Stages(vec![stage]),
                rest: Vec::new(),
            }],
        }
    }

    /// Plan `line` as `shell` would, starting in `cwd` inside `workspace`, looking programs
    /// up on this process's `PATH`. Nothing runs; nothing is recorded.
    pub fn for_line(line: &str, workspace: &Path, cwd: &Path) -> Result<Plan> {
        let parsed = corral_line::parse(line).map_err(Error::refused)?;
        let workspace = canonical_dir(workspace, "workspace")?;
        let cwd = canonical_dir(cwd, "cwd")?;
        let path_var = std::env::var("PATH").ok();
        plan_line(&parsed, &workspace, &cwd, path_var.as_deref(), &[])
    }

    /// Plan one argv as `exec` would, in `cwd`, looking the program up on this process's
    /// `PATH`. Nothing runs; nothing is recorded.
    pub fn for_argv(argv: Vec<String>, cwd: &Path) -> Result<Plan> {
        if argv.first().is_none_or(String::is_empty) {
            return Err(Error::invalid(
                "argv is empty: name the program to run as its first element",
            ));
        }
        let cwd = canonical_dir(cwd, "cwd")?;
        let path_var = std::env::var("PATH").ok();
        Ok(Plan::single(argv, cwd, path_var.as_deref(), Vec::new()))
    }

    /// Every stage, in the order written.
    pub fn stages(&self) -> impl Iterator<Item = &Stage> {
        self.lists
            .iter()
            .flat_map(|l| std::iter::once(&l.first).chain(l.rest.iter().map(|(_, p)| p)))
            .flat_map(|p| match p {
                PlannedPipeline::Stages(stages) => stages.as_slice(),
                PlannedPipeline::Cd(_) => &[],
            })
    }
}

/// Turn a parsed line into a plan, starting in `cwd`, inside `workspace`, looking programs
/// up on `path_var`. No redirect may write under a `protected` directory.
pub(crate) fn plan_line(
    line: &corral_line::Line,
    workspace: &Path,
    cwd: &Path,
    path_var: Option<&str>,
    protected: &[PathBuf],
) -> Result<Plan> {
    let mut planner = Planner {
        physical: cwd.to_path_buf(),
        workspace,
        cwd: cwd.to_path_buf(),
        path_var,
        protected,
    };
    let mut lists = Vec::with_capacity(line.lists.len());
    for list in &line.lists {
        let first = planner.pipeline(&list.first)?;
        let mut rest = Vec::with_capacity(list.rest.len());
        for (connector, pipeline) in &list.rest {
            let connector = match connector {
                Connector::And => PlannedConnector::And,
                Connector::Or => PlannedConnector::Or,
            };
            rest.push((connector, planner.pipeline(pipeline)?));
        }
        lists.push(PlannedList { first, rest });
    }
    Ok(Plan { lists })
}

/// The state of planning a line: where the next stage will run.
struct Planner<'a> {
    workspace: &'a Path,
    /// The logical working directory, as a shell keeps it: `cd in/..` returns to where it
    /// started even when `in` is a symlink.
    cwd: PathBuf,
    /// What `cwd` resolved to when it was checked.
    physical: PathBuf,
    path_var: Option<&'a str>,
    protected: &'a [PathBuf],
}

impl Planner<'_> {
    fn pipeline(&mut self, pipeline: &corral_line::Pipeline) -> Result<PlannedPipeline> {
        let mut stages = Vec::with_capacity(pipeline.commands.len());
        for command in &pipeline.commands {
            match command {
                // The grammar only admits `cd` alone at the start of a list.
                Command::Cd(cd) => {
                    self.cd(&cd.dir.value)?;
                    return Ok(PlannedPipeline::Cd(self.cwd.clone()));
                }
                Command::Simple(simple) => stages.push(self.stage(simple)?),
            }
        }
        Ok(PlannedPipeline::Stages(stages))
    }

    fn stage(&self, simple: &corral_line::Simple) -> Result<Stage> {
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
        let argv: Vec<String> = simple.argv.iter().map(|w| w.value.clone()).collect();
        let program = resolve::program(&argv[0], self.path_var, &self.cwd);
        let redirects = simple
            .redirects
            .iter()
            .map(|r| self.redirect(r))
            .collect::<Result<Vec<_>>>()?;
        Ok(Stage {
            argv,
            program,
            cwd: self.cwd.clone(),
            physical_cwd: self.physical.clone(),
            env,
            redirects,
        })
    }

    fn redirect(&self, r: &corral_line::Redirect) -> Result<PlannedRedirect> {
        let (word, writing) = match &r.op {
            RedirectOp::Dup(fd) => {
                return Ok(PlannedRedirect {
                    fd: r.fd,
                    op: PlannedOp::Dup(*fd),
                    written: None,
                });
            }
            RedirectOp::Read(w) => (w, false),
            RedirectOp::Write(w) | RedirectOp::Append(w) => (w, true),
        };
        let path = match redirect::resolve(&self.cwd, &word.value, writing, self.protected)? {
            Target::Descriptor(fd) => {
                return Ok(PlannedRedirect {
                    fd: r.fd,
                    op: PlannedOp::Dup(fd),
                    written: None,
                });
            }
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
            written: Some(self.cwd.join(&word.value)),
        })
    }

    /// `cd dir`, as a shell does it: `..` is taken off the logical path, the result must be
    /// a directory, and it must stay inside the workspace.
    fn cd(&mut self, dir: &str) -> Result<()> {
        let logical = logical_join(&self.cwd, dir);
        let physical = canonical_dir(&logical, "cd target")?;
        if !physical.starts_with(self.workspace) {
            return Err(Error::invalid(format!(
                "`cd {dir}` leaves the workspace ({}): stay inside {}",
                physical.display(),
                self.workspace.display()
            )));
        }
        self.cwd = logical;
        self.physical = physical;
        Ok(())
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
