//! Running one pipeline of a [`Plan`](crate::plan::Plan): stages spawned as argvs, OS
//! pipes between them, redirect files opened by corral with the shell's modes, statuses
//! decided as the shell decides them. `line_run` walks a line from one pipeline to the
//! next.
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
//!    `a; b` runs both. A `cd` has status 0 when it enters its directory; when the
//!    directory is missing, not a directory, resolves outside the workspace or elsewhere
//!    than it did when checked, the line stays where it was, the reason goes to stderr
//!    and its status is 1, as bash's `cd` fails.
//! 5. `pushd`, `popd`, `cd -` fail like a `cd` when their directory cannot be entered, and
//!    with status 1 and bash's message when there is nowhere to go (`popd` on an empty
//!    stack, `cd -` before any change of directory); when they work they print what
//!    bash prints to the line's stdout. `dirs` prints the stack.
//! 6. A pipeline followed by `&` starts with stdin on the null device and is not waited
//!    for: its status is 0, and the line goes on. It ends with the call, like anything
//!    else the line leaves running; its stages report how they ended then.
//! 7. `time PIPELINE` has the pipeline's status; when the pipeline ends, bash's report
//!    (`\nreal\t0m0.003s\nuser\t0m0.001s\nsys\t0m0.000s\n`) goes to the line's stderr: the
//!    real time from before its first stage started to after its last exited, and the
//!    CPU time the call's processes spent meanwhile (see `Timer`).
//! 8. The line's status is the status of the last pipeline that ran.
//! 9. When the call times out or is cancelled, nothing more starts, and the line's status
//!    says so instead.
//!
//! All of a line's output goes to two pipes, one for stdout and one for stderr, exactly
//! as a shell's would: the last stage of each pipeline writes its stdout to the first,
//! every stage writes its stderr to the second, unless a redirect says otherwise.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use crate::outcome::Status;
use crate::plan::{PlannedOp, Stage};
use crate::resolve;
use crate::spawn::{self, Containment, Proc};
use crate::supervise::Watch;

/// What happened to one stage.
#[derive(Debug, Clone)]
pub(crate) struct StageRun {
    /// The program file that ran.
    pub program: Option<PathBuf>,
    /// `None` when the stage was skipped by `&&`/`||` or by the end of the call.
    pub status: Option<Status>,
    /// The directory it ran in, when it was reached.
    pub cwd: Option<PathBuf>,
}

impl StageRun {
    pub(crate) fn skipped() -> Self {
        Self {
            program: None,
            status: None,
            cwd: None,
        }
    }
}

/// Everything the line did.
#[derive(Debug)]
pub(crate) struct LineRun {
    /// The status of the last pipeline that ran (before timeout or cancel are applied).
    pub status: Option<Status>,
    /// One per stage of the plan, in order.
    pub stages: Vec<StageRun>,
    /// The directory a `cd` entered, when that `cd` was the last thing the line ran.
    pub ended_in: Option<PathBuf>,
    /// The processes of background pipelines, which the line did not wait for.
    pub background: Background,
}

/// The processes of a line's background pipelines (`server & curl …`), with the index
/// of their stage. They end with the call, like anything else the line leaves running;
/// whatever has not been reaped when this is dropped is reaped by a thread of its own.
#[derive(Debug, Default)]
pub(crate) struct Background(Vec<(usize, Proc)>);

impl Background {
    /// Once the call has ended what the line left running: the status of each background
    /// stage that has exited, in `stages`.
    pub(crate) fn settle(&mut self, stages: &mut [StageRun]) {
        for (slot, proc) in &mut self.0 {
            if let (Ok(Some(status)), Some(run)) = (proc.try_wait(), stages.get_mut(*slot)) {
                run.status = Some(status_of(status));
            }
        }
    }
}

impl Background {
    /// The processes of a pipeline left running, whose stages start at `offset` in the
    /// line's report.
    pub(crate) fn add(&mut self, offset: usize, procs: Vec<(usize, Proc)>) {
        self.0
            .extend(procs.into_iter().map(|(i, p)| (offset + i, p)));
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        reap_later(
            std::mem::take(&mut self.0)
                .into_iter()
                .map(|(_, p)| p)
                .collect(),
        );
    }
}

/// The write ends every stage's output defaults to.
pub(crate) struct Outputs {
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// Processes no one waits for any more: a thread collects them as they end.
fn reap_later(procs: Vec<Proc>) {
    if procs.is_empty() {
        return;
    }
    let reaped = std::thread::Builder::new()
        .name("corral-background".into())
        .spawn(move || {
            for mut proc in procs {
                let _ = proc.wait();
            }
        });
    // Without a thread they stay zombies until corral exits; nothing else depends on it.
    drop(reaped);
}

/// What a pipeline starts from: the line's stdin, and the directory its stages must find
/// when they start (the one checked when planning, or when its `cd` was reached).
pub(crate) struct Origin<'a> {
    pub stdin: Option<&'a OwnedFd>,
    pub physical: &'a Path,
    /// The directory the line was in before its last change of directory, which a
    /// shell exports as `OLDPWD`.
    pub oldpwd: Option<&'a Path>,
}

pub(crate) fn run_pipeline(
    stages: &[Stage],
    env: &[crate::env::Var],
    outputs: &Outputs,
    origin: Origin<'_>,
    report_unavailable: bool,
    watch: &mut Watch<'_>,
    unit: &mut dyn Containment,
) -> io::Result<Vec<StageRun>> {
    let (mut runs, children) =
        start_pipeline(stages, env, outputs, origin, report_unavailable, unit)?;
    let (slots, mut procs): (Vec<usize>, Vec<Proc>) = children.into_iter().unzip();
    let statuses = watch.wait(&mut procs, unit)?;
    for (slot, status) in slots.into_iter().zip(statuses) {
        runs[slot].status = Some(status_of(status));
    }
    Ok(runs)
}

/// Start every stage of a pipeline: what happened to each, and the processes started
/// (with the index of their stage), not yet waited for.
#[allow(clippy::type_complexity)]
pub(crate) fn start_pipeline(
    stages: &[Stage],
    env: &[crate::env::Var],
    outputs: &Outputs,
    origin: Origin<'_>,
    report_unavailable: bool,
    unit: &mut dyn Containment,
) -> io::Result<(Vec<StageRun>, Vec<(usize, Proc)>)> {
    let mut runs: Vec<StageRun> = Vec::with_capacity(stages.len());
    let mut children: Vec<(usize, Proc)> = Vec::with_capacity(stages.len());
    let mut next_stdin: Option<OwnedFd> = None;
    for (i, stage) in stages.iter().enumerate() {
        let stdin = match next_stdin.take() {
            Some(fd) => fd,
            None => match origin.stdin {
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
        let fds = [stdin, stdout, outputs.stderr.try_clone()?];
        let (run, child) = start_stage(stage, fds, env, &origin, report_unavailable, unit)?;
        if let Some(child) = child {
            children.push((runs.len(), child));
        }
        runs.push(run);
    }
    drop(next_stdin);
    Ok((runs, children))
}

/// Start one stage on `fds` (`[stdin, stdout, stderr]` before its redirects): its report,
/// and its process when it started. A stage that cannot start says why on its stderr, as
/// a shell would.
fn start_stage(
    stage: &Stage,
    mut fds: [OwnedFd; 3],
    env: &[crate::env::Var],
    origin: &Origin<'_>,
    report_unavailable: bool,
    unit: &mut dyn Containment,
) -> io::Result<(StageRun, Option<Proc>)> {
    let cwd = Some(stage.cwd.clone());
    let not_run = |status| StageRun {
        program: None,
        status: Some(status),
        cwd: cwd.clone(),
    };
    // A confined stage opens its redirects itself, inside its box: they reach what the
    // command may, no more (see `corral_sys::box_redirects`).
    let boxed = unit.confines();
    let mut in_box = None;
    let checked = if boxed {
        in_box_redirects(stage).map(|r| in_box = Some(r))
    } else {
        apply_redirects(stage, &mut fds)
    };
    let checked = checked.and_then(|()| still_there(stage, origin));
    if let Err(message) = checked {
        report(&fds[2], &message);
        return Ok((not_run(Status::Exited { code: 1 }), None));
    }
    // A program named by a path is found when its stage starts: an earlier stage may
    // have built it.
    let by_path = stage.program_name().as_bytes().contains(&b'/');
    let program = if by_path {
        resolve::program(stage.program_name(), None, &stage.cwd)
    } else {
        stage.program.clone()
    };
    let program = match program {
        Ok(p) => p,
        Err(unavailable) => {
            if report_unavailable {
                report(&fds[2], &format!("corral: {}", unavailable.reason));
            }
            let status = Status::Unavailable {
                program: unavailable.program,
                reason: unavailable.reason,
                code: unavailable.code,
            };
            return Ok((not_run(status), None));
        }
    };
    let (argv, own_env) = stage.spawned();
    let stage_env = environment(env, stage, own_env, origin);
    // Where the stage's own errors go (its `2>`), kept for a start that fails.
    let own_stderr = fds[2].try_clone()?;
    // A path is executed as written, relative to the directory the child is in by its
    // exec: the kernel hands a script's interpreter the path it was executed by, so `$0`
    // is `./t.sh`, as under bash, not the absolute path it resolved to.
    let executed = if by_path {
        Path::new(stage.program_name())
    } else {
        &program
    };
    let spawned = spawn::spawn(
        spawn::Stage {
            program: executed,
            argv: &argv,
            cwd: &stage.cwd,
            env: &stage_env,
            stdio: fds,
            redirects: in_box,
        },
        unit,
    );
    match spawned {
        Ok(child) => {
            let run = StageRun {
                program: Some(program),
                status: None,
                cwd,
            };
            Ok((run, Some(child)))
        }
        Err(e) if let Some((index, why)) = corral_sys::box_redirects::failure(&e) => {
            report(&own_stderr, &refused_in_box(stage, index, &why));
            Ok((not_run(Status::Exited { code: 1 }), None))
        }
        Err(e) => {
            let (reason, status) = not_started(&stage.argv, &argv, &program, &stage_env, &e);
            if report_unavailable {
                report(&own_stderr, &format!("corral: {reason}"));
            }
            Ok((not_run(status), None))
        }
    }
}

/// The directory was checked when the line was planned, or when its `cd` was reached; it
/// must still be that one (an earlier stage may have swapped it for a symlink).
fn still_there(stage: &Stage, origin: &Origin<'_>) -> Result<(), String> {
    match stage.cwd.canonicalize() {
        Ok(now) if now == origin.physical => Ok(()),
        resolved => {
            let now =
                resolved.map_or_else(|e| crate::redirect::plain(&e), |p| p.display().to_string());
            Err(format!(
                "corral: {}: now resolves to {now}, not the {} that was checked; the stage was \
                 not started",
                stage.cwd.display(),
                origin.physical.display()
            ))
        }
    }
}

/// A stage's environment: the call's, with `PWD` the logical directory it runs in (as a
/// shell exports it), `OLDPWD` the line's own (none until the line changes directory,
/// whatever corral inherited, as `cd -` reads it), then its own assignments.
fn environment(
    env: &[crate::env::Var],
    stage: &Stage,
    own_env: Vec<crate::env::Var>,
    origin: &Origin<'_>,
) -> Vec<crate::env::Var> {
    let mut vars: Vec<crate::env::Var> = env.to_vec();
    vars.retain(|(k, _)| k != "PWD" && k != "OLDPWD" && !own_env.iter().any(|(n, _)| n == k));
    vars.push(("PWD".into(), stage.cwd.clone().into_os_string()));
    let own_oldpwd = own_env.iter().any(|(n, _)| n == "OLDPWD");
    if let Some(old) = origin.oldpwd.filter(|_| !own_oldpwd) {
        vars.push(("OLDPWD".into(), old.as_os_str().to_owned()));
    }
    vars.extend(own_env);
    vars
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
            PlannedOp::Read(path) => open(path, OFlags::RDONLY),
            PlannedOp::Write(path) => open(path, OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC),
            PlannedOp::Append(path) => open(path, OFlags::WRONLY | OFlags::CREATE | OFlags::APPEND),
            PlannedOp::Dup(source) => fds[usize::from(*source)]
                .try_clone()
                .map_err(|e| format!("corral: dup: {e}")),
            PlannedOp::Text(text) => {
                text_fd(text).map_err(|e| format!("corral: here-document: {e}"))
            }
        }?;
        fds[fd] = opened;
    }
    Ok(())
}

/// A confined stage's redirects, for its child to open inside the box, in order.
fn in_box_redirects(stage: &Stage) -> Result<corral_sys::box_redirects::Redirects, String> {
    use corral_sys::box_redirects::{OpenFor, Redirects};
    let mut redirects = Redirects::new();
    for redirect in &stage.redirects {
        let fd = redirect.fd;
        let added = match &redirect.op {
            PlannedOp::Read(path) => redirects.open(fd, path, OpenFor::Read),
            PlannedOp::Write(path) => redirects.open(fd, path, OpenFor::Write),
            PlannedOp::Append(path) => redirects.open(fd, path, OpenFor::Append),
            PlannedOp::Dup(source) => redirects.dup(fd, *source),
            PlannedOp::Text(text) => text_fd(text).and_then(|t| redirects.descriptor(fd, t)),
        };
        added.map_err(|e| format!("corral: redirect: {}", crate::redirect::plain(&e)))?;
    }
    Ok(redirects)
}

/// What a confined stage's stderr says of the redirect (its `index`) the box did not let
/// it open: the target as written, and why, as a shell would say it, naming the box
/// where it was the box that refused.
fn refused_in_box(stage: &Stage, index: usize, why: &io::Error) -> String {
    let Some(redirect) = stage.redirects.get(index) else {
        return format!("corral: a redirect: {}", crate::redirect::plain(why));
    };
    let path = match &redirect.op {
        PlannedOp::Read(p) | PlannedOp::Write(p) | PlannedOp::Append(p) => p.as_path(),
        PlannedOp::Dup(_) | PlannedOp::Text(_) => Path::new("a descriptor"),
    };
    let shown = redirect.written.as_deref().unwrap_or(path);
    let reading = matches!(redirect.op, PlannedOp::Read(_));
    use rustix::io::Errno;
    match Errno::from_io_error(why) {
        Some(Errno::NXIO) => fifo_refused(shown),
        Some(Errno::LOOP) => format!(
            "corral: {}: now resolves through a symlink, not to the {} that was checked; it was \
             not opened",
            shown.display(),
            path.display()
        ),
        Some(Errno::ACCESS | Errno::PERM | Errno::ROFS) => format!(
            "corral: {}: {}: refused by the sandbox, which does not let this call {} it",
            shown.display(),
            crate::redirect::plain(why),
            if reading { "read" } else { "write" }
        ),
        _ => format!(
            "corral: {}: {}",
            shown.display(),
            crate::redirect::plain(why)
        ),
    }
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

/// A here-document's text as a file to read from the start: an anonymous memory file,
/// so a body of any size is ready before the stage starts and nothing is left on disk.
fn text_fd(text: &str) -> io::Result<OwnedFd> {
    use std::io::{Seek, SeekFrom};
    let fd = rustix::fs::memfd_create("corral-here-document", rustix::fs::MemfdFlags::CLOEXEC)?;
    let mut file = File::from(fd);
    file.write_all(text.as_bytes())?;
    file.seek(SeekFrom::Start(0))?;
    Ok(file.into())
}

/// Open a redirect's file for a stage, or say why not as a shell would.
///
/// A named pipe is refused rather than opened: corral opens a stage's files before the
/// stage starts, and opening a pipe waits for its other end, which may be a later stage
/// of the same line (`echo hi > p & cat p`), so the open would wait forever. The open is
/// non-blocking for that reason, and a file that is not a pipe is made blocking again.
fn open(path: &Path, flags: rustix::fs::OFlags) -> Result<OwnedFd, String> {
    use rustix::fs::{FileType, OFlags};
    let said = |e: io::Error| format!("corral: {}: {}", path.display(), crate::redirect::plain(&e));
    let is_fifo = |mode| FileType::from_raw_mode(mode) == FileType::Fifo;
    let file = match open_resolved(path, flags | OFlags::NONBLOCK) {
        Ok(file) => file,
        // Opened for writing with no reader yet.
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) => {
            return Err(match rustix::fs::stat(path) {
                Ok(st) if is_fifo(st.st_mode) => fifo_refused(path),
                _ => said(e),
            });
        }
        Err(e) => return Err(said(e)),
    };
    let st = rustix::fs::fstat(&file).map_err(|e| said(e.into()))?;
    if is_fifo(st.st_mode) {
        return Err(fifo_refused(path));
    }
    let blocking = rustix::fs::fcntl_getfl(&file).map_err(|e| said(e.into()))? - OFlags::NONBLOCK;
    rustix::fs::fcntl_setfl(&file, blocking).map_err(|e| said(e.into()))?;
    Ok(file.into())
}

/// What a stage's stderr says of a redirect to a named pipe.
fn fifo_refused(path: &Path) -> String {
    format!(
        "corral: {}: a named pipe: corral opens a stage's redirects before it starts and \
         does not open a pipe there (it would wait for the other end); let a program open \
         it instead, e.g. `… | tee {0} >/dev/null` to write to it or `cat {0} | …` to read it",
        path.display()
    )
}

/// Write a one-line message where the stage's stderr goes, as a shell would.
pub(crate) fn report(fd: &OwnedFd, message: &str) {
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

/// Why a resolved program could not be started, and its status (a shell exits 126: it
/// is there but cannot run). An argument list over the kernel's limit is a status of its
/// own, and says its size and what to do instead.
/// `argv` is the stage's argv as shown, `spawned` the bytes that were passed.
fn not_started(
    argv: &[String],
    spawned: &[std::ffi::OsString],
    program: &Path,
    env: &[crate::env::Var],
    e: &io::Error,
) -> (String, Status) {
    if e.raw_os_error() == Some(libc_e2big()) {
        // What execve copies: every string with its NUL, and a pointer to each.
        let strings: usize = spawned.iter().map(|a| a.len() + 1).sum::<usize>()
            + env
                .iter()
                .map(|(k, v)| k.len() + v.len() + 2)
                .sum::<usize>();
        let pointers = (spawned.len() + env.len() + 2) * std::mem::size_of::<usize>();
        let longest = spawned.iter().map(|a| a.len()).max().unwrap_or(0);
        let bytes = strings + pointers;
        return (
            format!(
                "`{}`: the argument list is too long for the kernel ({bytes} bytes of arguments and environment, the longest argument {longest} bytes; one argument may be at most 131072 bytes, and all of them about a quarter of the stack limit): pass the data in a file or on stdin instead",
                argv[0],
            ),
            Status::TooLong {
                program: argv[0].clone(),
                bytes,
                longest,
            },
        );
    }
    let reason = format!(
        "`{}` ({}) could not be started: {e}",
        argv[0],
        program.display()
    );
    (
        reason.clone(),
        Status::Unavailable {
            program: argv[0].clone(),
            reason,
            code: crate::resolve::CANNOT_RUN,
        },
    )
}

/// `E2BIG`, "Argument list too long".
fn libc_e2big() -> i32 {
    rustix::io::Errno::TOOBIG.raw_os_error()
}
