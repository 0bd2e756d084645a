//! Running a [`Plan`]: stages spawned as argvs, OS pipes between them, redirect files
//! opened by corral with the shell's modes, statuses decided as the shell decides them.
//!
//! How the status of a line is chosen, as in bash:
//!
//! 1. A pipeline's status is its last stage's. Every stage's own status is reported too,
//!    which a shell hides.
//! 2. A stage whose program is unavailable does not start; after its redirects are applied
//!    (a `>f` still creates `f`), its reason is written to its stderr and its status is 127.
//! 3. A stage whose redirect cannot be opened does not start; the reason goes to its
//!    stderr and its status is 1.
//! 4. `a && b` runs `b` only when the status so far is 0; `a || b` only when it is not;
//!    `a; b` runs both. A `cd` has status 0 (its directory was checked when planning).
//! 5. The line's status is the status of the last pipeline that ran.
//! 6. When the call times out or is cancelled, nothing more starts, and the line's status
//!    says so instead.
//!
//! All of a line's output goes to two pipes, one for stdout and one for stderr, exactly
//! as a shell's would: the last stage of each pipeline writes its stdout to the first,
//! every stage writes its stderr to the second, unless a redirect says otherwise.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};

use crate::outcome::Status;
use crate::plan::{Plan, PlannedConnector, PlannedOp, PlannedPipeline, Stage};
use crate::resolve;
use crate::spawn::{self, Containment};
use crate::supervise::Watch;

/// What happened to one stage.
#[derive(Debug, Clone)]
pub(crate) struct StageRun {
    /// The program file that ran.
    pub program: Option<PathBuf>,
    /// `None` when the stage was skipped by `&&`/`||` or by the end of the call.
    pub status: Option<Status>,
}

/// Everything the line did.
#[derive(Debug)]
pub(crate) struct LineRun {
    /// The status of the last pipeline that ran (before timeout or cancel are applied).
    pub status: Option<Status>,
    /// One per stage of the plan, in order.
    pub stages: Vec<StageRun>,
}

/// The write ends every stage's output defaults to.
pub(crate) struct Outputs {
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// Run `plan` to its end. `env` is the call's environment; a stage's own assignments are
/// added to it.
pub(crate) fn run(
    plan: &Plan,
    env: &[(String, String)],
    outputs: &Outputs,
    report_unavailable: bool,
    watch: &mut Watch<'_>,
    unit: &mut dyn Containment,
) -> io::Result<LineRun> {
    run_with_stdin(plan, env, outputs, None, report_unavailable, watch, unit)
}

/// [`run`], with `stdin` (a handle's input pipe or terminal) instead of the null device as
/// the stdin of each pipeline's first stage, unless a redirect says otherwise.
pub(crate) fn run_with_stdin(
    plan: &Plan,
    env: &[(String, String)],
    outputs: &Outputs,
    stdin: Option<&OwnedFd>,
    report_unavailable: bool,
    watch: &mut Watch<'_>,
    unit: &mut dyn Containment,
) -> io::Result<LineRun> {
    let mut stages: Vec<StageRun> = Vec::with_capacity(plan.stages().count());
    let mut last: Option<Status> = None;
    for list in &plan.lists {
        let pipelines = std::iter::once((None, &list.first))
            .chain(list.rest.iter().map(|(c, p)| (Some(*c), p)));
        for (connector, pipeline) in pipelines {
            let succeeded = last.as_ref().is_none_or(Status::success);
            let runs = match connector {
                None => true,
                Some(PlannedConnector::And) => succeeded,
                Some(PlannedConnector::Or) => !succeeded,
            };
            if !runs || watch.is_ending() {
                if let PlannedPipeline::Stages(s) = pipeline {
                    stages.extend(s.iter().map(|_| StageRun {
                        program: None,
                        status: None,
                    }));
                }
                continue;
            }
            match pipeline {
                PlannedPipeline::Cd(_) => last = Some(Status::Exited { code: 0 }),
                PlannedPipeline::Stages(s) => {
                    unit.next_pipeline();
                    let ran =
                        run_pipeline(s, env, outputs, stdin, report_unavailable, watch, unit)?;
                    last = ran.last().and_then(|r| r.status.clone());
                    stages.extend(ran);
                }
            }
        }
    }
    Ok(LineRun {
        status: last,
        stages,
    })
}

fn run_pipeline(
    stages: &[Stage],
    env: &[(String, String)],
    outputs: &Outputs,
    line_stdin: Option<&OwnedFd>,
    report_unavailable: bool,
    watch: &mut Watch<'_>,
    unit: &mut dyn Containment,
) -> io::Result<Vec<StageRun>> {
    let mut runs: Vec<StageRun> = Vec::with_capacity(stages.len());
    let mut children: Vec<(usize, Child)> = Vec::with_capacity(stages.len());
    let mut next_stdin: Option<OwnedFd> = None;
    for (i, stage) in stages.iter().enumerate() {
        let stdin = match next_stdin.take() {
            Some(fd) => fd,
            None => match line_stdin {
                Some(fd) => fd.try_clone()?,
                None => File::open("/dev/null")?.into(),
            },
        };
        let stdout = if i + 1 < stages.len() {
            let (reader, writer) = io::pipe()?;
            next_stdin = Some(reader.into());
            writer.into()
        } else {
            outputs.stdout.try_clone()?
        };
        let stderr = outputs.stderr.try_clone()?;
        let mut fds = [stdin, stdout, stderr];
        if let Err(message) = apply_redirects(stage, &mut fds) {
            report(&fds[2], &message);
            runs.push(StageRun {
                program: None,
                status: Some(Status::Exited { code: 1 }),
            });
            continue;
        }
        // The directory was checked when the line was planned; it must still be the one
        // that was checked (an earlier stage may have swapped it for a symlink).
        match stage.cwd.canonicalize() {
            Ok(now) if now == stage.physical_cwd => {}
            resolved => {
                let now = resolved
                    .map_or_else(|e| crate::redirect::plain(&e), |p| p.display().to_string());
                report(
                    &fds[2],
                    &format!(
                        "corral: {}: now resolves to {now}, not the {} that was checked; the stage was not started",
                        stage.cwd.display(),
                        stage.physical_cwd.display()
                    ),
                );
                runs.push(StageRun {
                    program: None,
                    status: Some(Status::Exited { code: 1 }),
                });
                continue;
            }
        }
        // A program named by a path is found when its stage starts: an earlier stage may
        // have built it.
        let program = if stage.argv[0].contains('/') {
            resolve::program(&stage.argv[0], None, &stage.cwd)
        } else {
            stage.program.clone()
        };
        let program = match program {
            Ok(p) => p,
            Err(unavailable) => {
                if report_unavailable {
                    report(&fds[2], &format!("corral: {}", unavailable.reason));
                }
                runs.push(StageRun {
                    program: None,
                    status: Some(Status::Unavailable {
                        program: unavailable.program,
                        reason: unavailable.reason,
                        code: unavailable.code,
                    }),
                });
                continue;
            }
        };
        // As a shell exports it: the logical directory the stage runs in.
        let pwd = ("PWD".to_string(), stage.cwd.display().to_string());
        let mut stage_env: Vec<(String, String)> = env.to_vec();
        stage_env.retain(|(k, _)| k != "PWD" && !stage.env.iter().any(|(n, _)| n == k));
        stage_env.push(pwd);
        stage_env.extend(stage.env.iter().cloned());
        let [stdin, stdout, stderr] = fds;
        let spawned = spawn::spawn(
            spawn::Stage {
                program: &program,
                argv: &stage.argv,
                cwd: &stage.cwd,
                env: &stage_env,
                stdin: Stdio::from(stdin),
                stdout: Stdio::from(stdout),
                stderr: Stdio::from(stderr),
            },
            unit,
        );
        match spawned {
            Ok(child) => {
                children.push((runs.len(), child));
                runs.push(StageRun {
                    program: Some(program),
                    status: None,
                });
            }
            Err(e) => {
                let (reason, code) = not_started(&stage.argv, &program, &stage_env, &e);
                if report_unavailable {
                    report(&outputs.stderr, &format!("corral: {reason}"));
                }
                runs.push(StageRun {
                    program: None,
                    status: Some(Status::Unavailable {
                        program: stage.argv[0].clone(),
                        reason,
                        code,
                    }),
                });
            }
        }
    }
    drop(next_stdin);
    let (slots, mut procs): (Vec<usize>, Vec<Child>) = children.into_iter().unzip();
    let statuses = watch.wait(&mut procs, unit)?;
    for (slot, status) in slots.into_iter().zip(statuses) {
        runs[slot].status = Some(status_of(status));
    }
    Ok(runs)
}

/// Apply a stage's redirects in order to its descriptors `[stdin, stdout, stderr]`.
///
/// A file target is resolved again first: if it no longer resolves to the path that was
/// checked (an earlier stage replaced a symlink, say), it is not opened.
fn apply_redirects(stage: &Stage, fds: &mut [OwnedFd; 3]) -> Result<(), String> {
    for redirect in &stage.redirects {
        let fd = usize::from(redirect.fd);
        if let (
            Some(written),
            PlannedOp::Read(checked) | PlannedOp::Write(checked) | PlannedOp::Append(checked),
        ) = (&redirect.written, &redirect.op)
        {
            let now = crate::redirect::resolve_path(written).map_err(|e| {
                format!(
                    "corral: {}: {}",
                    written.display(),
                    crate::redirect::plain(&e)
                )
            })?;
            if &now != checked {
                return Err(format!(
                    "corral: {}: now resolves to {}, not the {} that was checked; it was not opened",
                    written.display(),
                    now.display(),
                    checked.display()
                ));
            }
        }
        use rustix::fs::OFlags;
        let opened = match &redirect.op {
            PlannedOp::Read(path) => open(path, open_resolved(path, OFlags::RDONLY)),
            PlannedOp::Write(path) => open(
                path,
                open_resolved(path, OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC),
            ),
            PlannedOp::Append(path) => open(
                path,
                open_resolved(path, OFlags::WRONLY | OFlags::CREATE | OFlags::APPEND),
            ),
            PlannedOp::Dup(source) => fds[usize::from(*source)]
                .try_clone()
                .map_err(|e| format!("corral: dup: {e}")),
        }?;
        fds[fd] = opened;
    }
    Ok(())
}

/// Open a checked, fully resolved path without following any symlink on the way, so a
/// component swapped for a symlink after the check cannot redirect the open
/// (`openat2` with `RESOLVE_NO_SYMLINKS`; on kernels without it, `O_NOFOLLOW` guards the
/// last component). Files are created with mode 0666 less the umask, as a shell does.
fn open_resolved(path: &Path, flags: rustix::fs::OFlags) -> io::Result<File> {
    use rustix::fs::{CWD, Mode, OFlags, ResolveFlags, openat2};
    let flags = flags | OFlags::CLOEXEC;
    // openat2 refuses a mode unless the open may create the file.
    let mode = if flags.contains(OFlags::CREATE) {
        Mode::from_raw_mode(0o666)
    } else {
        Mode::empty()
    };
    match openat2(CWD, path, flags, mode, ResolveFlags::NO_SYMLINKS) {
        Ok(fd) => Ok(File::from(fd)),
        Err(rustix::io::Errno::NOSYS) => Ok(File::from(rustix::fs::open(
            path,
            flags | OFlags::NOFOLLOW,
            mode,
        )?)),
        Err(e) => Err(e.into()),
    }
}

fn open(path: &Path, file: io::Result<File>) -> Result<OwnedFd, String> {
    file.map(OwnedFd::from)
        .map_err(|e| format!("corral: {}: {}", path.display(), crate::redirect::plain(&e)))
}

/// Write a one-line message where the stage's stderr goes, as a shell would.
fn report(fd: &OwnedFd, message: &str) {
    let mut file = File::from(fd.try_clone().expect("duplicating a descriptor we hold"));
    let _ = writeln!(file, "{message}");
}

pub(crate) fn status_of(status: ExitStatus) -> Status {
    match (status.code(), status.signal()) {
        (Some(code), _) => Status::Exited { code },
        (None, Some(signal)) => Status::Signaled { signal },
        (None, None) => Status::Exited { code: -1 },
    }
}

/// Why a resolved program could not be started, and the status a shell would give (126:
/// it is there but cannot run). An argument list over the kernel's limit says so, with
/// its size, and what to do instead.
fn not_started(
    argv: &[String],
    program: &Path,
    env: &[(String, String)],
    e: &io::Error,
) -> (String, i32) {
    if e.raw_os_error() == Some(libc_e2big()) {
        // What execve copies: every string with its NUL, and a pointer to each.
        let strings: usize = argv.iter().map(|a| a.len() + 1).sum::<usize>()
            + env
                .iter()
                .map(|(k, v)| k.len() + v.len() + 2)
                .sum::<usize>();
        let pointers = (argv.len() + env.len() + 2) * std::mem::size_of::<usize>();
        let longest = argv.iter().map(String::len).max().unwrap_or(0);
        return (
            format!(
                "`{}`: the argument list is too long for the kernel ({} bytes of arguments and environment, the longest argument {longest} bytes; one argument may be at most 131072 bytes, and all of them about a quarter of the stack limit): pass the data in a file or on stdin instead",
                argv[0],
                strings + pointers,
            ),
            crate::resolve::CANNOT_RUN,
        );
    }
    (
        format!(
            "`{}` ({}) could not be started: {e}",
            argv[0],
            program.display()
        ),
        crate::resolve::CANNOT_RUN,
    )
}

/// `E2BIG`, "Argument list too long".
fn libc_e2big() -> i32 {
    rustix::io::Errno::TOOBIG.raw_os_error()
}
