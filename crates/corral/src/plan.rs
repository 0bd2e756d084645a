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

use std::path::{Path, PathBuf};

use corral_line::{Command, Connector, RedirectOp};
use serde::Serialize;

use crate::env::check_overrides;
use crate::error::{Error, Result};
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
    /// The working directory.
    pub cwd: PathBuf,
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
    /// A plan of one stage: what `exec` runs.
    pub(crate) fn single(argv: Vec<String>, cwd: PathBuf, path_var: Option<&str>) -> Plan {
        let program = resolve::program(&argv[0], path_var, &cwd);
        let stage = Stage {
            argv,
            program,
            cwd,
            env: Vec::new(),
            redirects: Vec::new(),
        };
        Plan {
            lists: vec![PlannedList {
                first: PlannedPipeline::Stages(vec![stage]),
                rest: Vec::new(),
            }],
        }
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
/// up on `path_var`.
pub(crate) fn plan_line(
    line: &corral_line::Line,
    workspace: &Path,
    cwd: &Path,
    path_var: Option<&str>,
) -> Result<Plan> {
    let mut cwd = cwd.to_path_buf();
    let mut lists = Vec::with_capacity(line.lists.len());
    for list in &line.lists {
        let first = plan_pipeline(&list.first, workspace, &mut cwd, path_var)?;
        let mut rest = Vec::with_capacity(list.rest.len());
        for (connector, pipeline) in &list.rest {
            let connector = match connector {
                Connector::And => PlannedConnector::And,
                Connector::Or => PlannedConnector::Or,
            };
            rest.push((
                connector,
                plan_pipeline(pipeline, workspace, &mut cwd, path_var)?,
            ));
        }
        lists.push(PlannedList { first, rest });
    }
    Ok(Plan { lists })
}

fn plan_pipeline(
    pipeline: &corral_line::Pipeline,
    workspace: &Path,
    cwd: &mut PathBuf,
    path_var: Option<&str>,
) -> Result<PlannedPipeline> {
    let mut stages = Vec::with_capacity(pipeline.commands.len());
    for command in &pipeline.commands {
        match command {
            // The grammar only admits `cd` alone at the start of a list.
            Command::Cd(cd) => {
                *cwd = resolve_cd(workspace, cwd, &cd.dir.value)?;
                return Ok(PlannedPipeline::Cd(cwd.clone()));
            }
            Command::Simple(simple) => {
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
                let program = resolve::program(&argv[0], path_var, cwd);
                let redirects = simple
                    .redirects
                    .iter()
                    .map(|r| {
                        let op = match &r.op {
                            RedirectOp::Read(w) => PlannedOp::Read(resolve_target(cwd, &w.value)?),
                            RedirectOp::Write(w) => {
                                PlannedOp::Write(resolve_target(cwd, &w.value)?)
                            }
                            RedirectOp::Append(w) => {
                                PlannedOp::Append(resolve_target(cwd, &w.value)?)
                            }
                            RedirectOp::Dup(fd) => PlannedOp::Dup(*fd),
                        };
                        Ok(PlannedRedirect { fd: r.fd, op })
                    })
                    .collect::<Result<Vec<_>>>()?;
                stages.push(Stage {
                    argv,
                    program,
                    cwd: cwd.clone(),
                    env,
                    redirects,
                });
            }
        }
    }
    Ok(PlannedPipeline::Stages(stages))
}

/// The directory `cd dir` moves to from `cwd`: it must exist and stay in the workspace.
fn resolve_cd(workspace: &Path, cwd: &Path, dir: &str) -> Result<PathBuf> {
    let target = canonical_dir(&cwd.join(dir), "cd target")?;
    if !target.starts_with(workspace) {
        return Err(Error::invalid(format!(
            "`cd {dir}` leaves the workspace ({}): stay inside {}",
            target.display(),
            workspace.display()
        )));
    }
    Ok(target)
}

/// A redirect target, resolved against `cwd` and through existing symlinks, so the path
/// that is checked is the file that is opened.
fn resolve_target(cwd: &Path, target: &str) -> Result<PathBuf> {
    if target.is_empty() {
        return Err(Error::invalid("a redirect target is empty: name a file"));
    }
    // No lexical clean-up: `link/../f` means what the kernel says it means.
    let joined = cwd.join(target);
    if let Ok(existing) = joined.canonicalize() {
        return Ok(existing);
    }
    // The file does not exist yet: resolve the directory that will hold it.
    let (Some(parent), Some(name)) = (joined.parent(), joined.file_name()) else {
        return Ok(joined);
    };
    match parent.canonicalize() {
        Ok(dir) => Ok(dir.join(name)),
        Err(e) => Err(Error::invalid(format!(
            "redirect target {target}: its directory {} cannot be reached ({e}); create it first",
            parent.display()
        ))),
    }
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}
