//! Running a planned line: its lists in order, each pipeline run or skipped by its
//! connector and the status so far, `cd` and the directory stack followed as the line
//! goes, a pipeline put in the background left running, `time` reported. How one
//! pipeline's stages start and end is [`crate::pipeline`]'s; the rules the statuses
//! follow are listed there.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::path::PathBuf;

use crate::env::Var;
use crate::outcome::Status;
use crate::pipeline::{self, Background, LineRun, Origin, Outputs, StageRun};
use crate::plan::{Dir, Plan, PlannedCd, PlannedConnector, PlannedDirStack, PlannedPipeline};
use crate::spawn::Containment;
use crate::supervise::Watch;

/// Run `plan` to its end. `env` is the call's environment (a stage's own assignments are
/// added to it); `stdin` (a handle's input pipe or terminal), if given, is the stdin of
/// each pipeline's first stage instead of the null device, unless a redirect says
/// otherwise.
pub(crate) fn run(
    plan: &Plan,
    env: &[Var],
    outputs: &Outputs,
    stdin: Option<&OwnedFd>,
    report_unavailable: bool,
    watch: &mut Watch<'_>,
    unit: &mut dyn Containment,
) -> io::Result<LineRun> {
    let mut walk = Walk::new(plan, env, outputs, stdin, report_unavailable);
    for list in &plan.lists {
        if list.background {
            walk.background(&list.first, watch, unit)?;
            continue;
        }
        let pipelines = std::iter::once((None, &list.first))
            .chain(list.rest.iter().map(|(c, p)| (Some(*c), p)));
        for (connector, pipeline) in pipelines {
            walk.next(connector, pipeline, watch, unit)?;
        }
    }
    Ok(walk.finish())
}

/// A line being run: where it is, what each stage did, the status so far.
struct Walk<'a> {
    env: &'a [Var],
    outputs: &'a Outputs,
    stdin: Option<&'a OwnedFd>,
    report_unavailable: bool,
    stages: Vec<StageRun>,
    last: Option<Status>,
    /// The directory a `cd` entered, while that `cd` is the last thing the line ran.
    ended_in: Option<PathBuf>,
    /// Where the line is, as planned (logical, physical, the previous directory, the stack).
    here: Dir,
    /// The physical directory the next pipeline's stages must find.
    physical: PathBuf,
    background: Background,
}

impl<'a> Walk<'a> {
    fn new(
        plan: &Plan,
        env: &'a [Var],
        outputs: &'a Outputs,
        stdin: Option<&'a OwnedFd>,
        report_unavailable: bool,
    ) -> Self {
        let here = plan.start.clone();
        let physical = here
            .physical
            .clone()
            .unwrap_or_else(|| here.logical.clone());
        Walk {
            env,
            outputs,
            stdin,
            report_unavailable,
            stages: Vec::with_capacity(plan.stages().count()),
            last: None,
            ended_in: None,
            here,
            physical,
            background: Background::default(),
        }
    }

    fn finish(self) -> LineRun {
        LineRun {
            status: self.last,
            stages: self.stages,
            ended_in: self.ended_in,
            background: self.background,
        }
    }

    /// `pipeline &`: started with stdin on the null device and not waited for; the
    /// line's status is 0.
    fn background(
        &mut self,
        pipeline: &PlannedPipeline,
        watch: &Watch<'_>,
        unit: &mut dyn Containment,
    ) -> io::Result<()> {
        let count = width(pipeline);
        if watch.is_ending() {
            self.skip(count);
            return Ok(());
        }
        self.ended_in = None;
        match pipeline.for_dir(&self.here) {
            Some(PlannedPipeline::Stages(s)) => {
                unit.next_pipeline();
                let origin = Origin {
                    stdin: None,
                    physical: &self.physical,
                    oldpwd: self.here.oldpwd.as_deref(),
                };
                let (runs, procs) = pipeline::start_pipeline(
                    s,
                    self.env,
                    self.outputs,
                    origin,
                    self.report_unavailable,
                    unit,
                )?;
                self.background.add(self.stages.len(), procs);
                self.stages.extend(runs);
            }
            _ => {
                self.say(&self.unplanned());
                self.skip(count);
            }
        }
        self.last = Some(Status::Exited { code: 0 });
        Ok(())
    }

    /// The next pipeline of a list, run or skipped by its `connector`.
    fn next(
        &mut self,
        connector: Option<PlannedConnector>,
        pipeline: &PlannedPipeline,
        watch: &mut Watch<'_>,
        unit: &mut dyn Containment,
    ) -> io::Result<()> {
        let succeeded = self.last.as_ref().is_none_or(Status::success);
        let runs = match connector {
            None => true,
            Some(PlannedConnector::And) => succeeded,
            Some(PlannedConnector::Or) => !succeeded,
        };
        let count = width(pipeline);
        if !runs || watch.is_ending() {
            self.skip(count);
            return Ok(());
        }
        self.ended_in = None;
        let timer = matches!(pipeline, PlannedPipeline::Timed(_)).then(|| Timer::start(unit));
        match pipeline.for_dir(&self.here) {
            Some(PlannedPipeline::Cd(cd)) => self.cd(cd),
            Some(PlannedPipeline::DirStack(d)) => self.dir_stack(d)?,
            Some(PlannedPipeline::Stages(s)) => {
                unit.next_pipeline();
                let origin = Origin {
                    stdin: self.stdin,
                    physical: &self.physical,
                    oldpwd: self.here.oldpwd.as_deref(),
                };
                let ran = pipeline::run_pipeline(
                    s,
                    self.env,
                    self.outputs,
                    origin,
                    self.report_unavailable,
                    watch,
                    unit,
                )?;
                self.last = ran.last().and_then(|r| r.status.clone());
                self.stages.extend(ran);
            }
            Some(PlannedPipeline::NotPlanned {
                reason, stages: n, ..
            }) => self.not_started(&format!("corral: {reason}; not started"), *n),
            // Planning covers every directory a pipeline can start in; should that ever
            // fail, nothing unchecked starts.
            Some(PlannedPipeline::Either(_) | PlannedPipeline::Timed(_)) | None => {
                self.not_started(&self.unplanned(), count);
            }
        }
        if let Some(timer) = timer {
            timer.report(unit, &self.outputs.stderr);
        }
        Ok(())
    }

    fn cd(&mut self, cd: &PlannedCd) {
        match enter(cd, "cd") {
            Ok(now) => {
                self.here.oldpwd = Some(std::mem::replace(&mut self.here.logical, cd.dir.clone()));
                self.moved_to(now);
                self.last = Some(Status::Exited { code: 0 });
            }
            Err(message) => self.failed(&message),
        }
    }

    /// `pushd`, `popd`, `dirs`, `cd -`: the planned stack after it, what it prints.
    fn dir_stack(&mut self, d: &PlannedDirStack) -> io::Result<()> {
        let name = d.builtin.split(' ').next().unwrap_or(d.builtin);
        let entered = match (&d.fails, &d.enter) {
            (Some(why), _) => Err(format!("corral: {why}")),
            (None, Some(cd)) => enter(cd, name).map(Some),
            (None, None) => Ok(None),
        };
        match entered {
            Ok(now) => {
                self.here = d.after.clone();
                if let Some(now) = now {
                    self.moved_to(now);
                }
                let mut out = File::from(self.outputs.stdout.try_clone()?);
                let _ = out.write_all(d.prints.as_bytes());
                self.last = Some(Status::Exited { code: 0 });
            }
            Err(message) => self.failed(&message),
        }
        Ok(())
    }

    /// The line entered `now` (physically).
    fn moved_to(&mut self, now: PathBuf) {
        self.here.physical = Some(now.clone());
        self.ended_in = Some(now.clone());
        self.physical = now;
    }

    /// A builtin failed: its message on stderr, status 1.
    fn failed(&mut self, message: &str) {
        self.say(message);
        self.last = Some(Status::Exited { code: 1 });
    }

    /// `count` stages that did not start, for `message`, status 1.
    fn not_started(&mut self, message: &str, count: usize) {
        self.say(message);
        let cwd = self.here.logical.clone();
        self.stages.extend((0..count).map(|_| StageRun {
            program: None,
            status: Some(Status::Exited { code: 1 }),
            cwd: Some(cwd.clone()),
        }));
        self.last = Some(Status::Exited { code: 1 });
    }

    fn skip(&mut self, count: usize) {
        self.stages.extend((0..count).map(|_| StageRun::skipped()));
    }

    fn unplanned(&self) -> String {
        format!(
            "corral: nothing was planned for {}; not started",
            self.here.logical.display()
        )
    }

    fn say(&self, message: &str) {
        pipeline::report(&self.outputs.stderr, message);
    }
}

/// How many stages a pipeline's report holds.
fn width(pipeline: &PlannedPipeline) -> usize {
    match pipeline {
        PlannedPipeline::Stages(s) => s.len(),
        PlannedPipeline::Cd(_) | PlannedPipeline::DirStack(_) => 0,
        PlannedPipeline::NotPlanned { stages, .. } => *stages,
        PlannedPipeline::Either(v) => v.first().map_or(0, width),
        PlannedPipeline::Timed(inner) => width(inner),
    }
}

/// `time`: the clock and the CPU time of the call's processes, read before a pipeline
/// and again after it. The CPU time is the unit's (its cgroup's `cpu.stat`: every process
/// of the call, whatever left it running) or, where the unit keeps no count, that of the
/// children this process reaped meanwhile (`RUSAGE_CHILDREN`, which counts other calls'
/// children that ended in the same time).
struct Timer {
    began: std::time::Instant,
    cpu: corral_sys::cgroup::CpuTime,
}

impl Timer {
    fn start(unit: &dyn Containment) -> Timer {
        Timer {
            began: std::time::Instant::now(),
            cpu: cpu_now(unit),
        }
    }

    /// bash's report with the default `TIMEFORMAT` (`\nreal\t%3lR\nuser\t%3lU\nsys\t%3lS`).
    fn report(self, unit: &dyn Containment, stderr: &OwnedFd) {
        let real = self.began.elapsed();
        let cpu = cpu_now(unit).since(self.cpu);
        let text = format!(
            "\nreal\t{}\nuser\t{}\nsys\t{}\n",
            long_seconds(real),
            long_seconds(cpu.user),
            long_seconds(cpu.system)
        );
        let mut file = File::from(
            stderr
                .try_clone()
                .expect("duplicating a descriptor we hold"),
        );
        let _ = file.write_all(text.as_bytes());
    }
}

fn cpu_now(unit: &dyn Containment) -> corral_sys::cgroup::CpuTime {
    unit.cpu_time()
        .unwrap_or_else(corral_sys::reaper::children_cpu)
}

/// `%3lR`: minutes, then seconds with three decimals, rounded to the millisecond as bash
/// rounds: `0m0.003s`, `1m5.250s`.
fn long_seconds(d: std::time::Duration) -> String {
    let millis = (d.as_micros() + 500) / 1000;
    let secs = millis / 1000;
    format!("{}m{}.{:03}s", secs / 60, secs % 60, millis % 1000)
}

/// Enter a `cd`'s directory: resolved now, it must be a directory the line may search,
/// inside the workspace, and the one that was checked when it already existed then.
/// The physical directory, or bash's kind of message.
fn enter(cd: &PlannedCd, builtin: &str) -> Result<PathBuf, String> {
    let fail = |why: String| format!("corral: {builtin}: {}: {why}", cd.written);
    let now = cd
        .dir
        .canonicalize()
        .map_err(|e| fail(crate::redirect::plain(&e)))?;
    if !now.is_dir() {
        return Err(fail("Not a directory".into()));
    }
    if let Some(checked) = cd.resolved.as_ref().filter(|c| **c != now) {
        return Err(fail(format!(
            "now resolves to {}, not the {} that was checked; not entered",
            now.display(),
            checked.display()
        )));
    }
    if !now.starts_with(&cd.workspace) {
        return Err(fail(format!(
            "resolves to {}, outside the workspace {}; not entered",
            now.display(),
            cd.workspace.display()
        )));
    }
    rustix::fs::access(&now, rustix::fs::Access::EXEC_OK)
        .map_err(|e| fail(crate::redirect::plain(&e.into())))?;
    Ok(now)
}
