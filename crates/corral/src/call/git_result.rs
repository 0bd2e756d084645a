//! What a sandboxed call did to git, said in its result.
//!
//! With `git_write` (the default) git writes its own data in the box, and the result says
//! what came of it, in `git:` lines after the sandbox line:
//!
//! 1. A commit made in the box: `git: committed 1a2b3c4 on main`. Told from what git
//!    appended to `.git/logs/HEAD` during the call (its entries say `commit: …`), read
//!    by descriptor beneath the workspace: corral never runs git itself.
//! 2. A config write refused: `config` and its kin are read-only mounts in the box
//!    (`config::git_dir`), and git's `config.lock` renamed over a mount point fails with
//!    `EBUSY`. The result names the git command that failed for this reason and the line
//!    a person can run on the host, in place of the mount's quirk. A `git branch -m` or
//!    `-D` changes the ref but not the branch's section, and the line moves or removes it.
//! 3. A `git config --global`, which lands in the run's own home and is gone after the
//!    run: the line to run on the host.

use std::path::{Path, PathBuf};

use crate::outcome::Outcome;
use crate::plan::Plan;

/// How much of what git appended to its `HEAD` reflog during a call is read.
const LOG_LIMIT: u64 = 256 * 1024;

/// The repository as a call found it.
#[derive(Debug, Clone)]
pub(crate) struct Before {
    workspace: PathBuf,
    /// The length of `.git/logs/HEAD`.
    log_len: u64,
    /// The branch `HEAD` named.
    branch: Option<String>,
}

/// What git writes when it cannot replace its config (`config.c`, `branch.c`).
const CONFIG_REFUSED: &[&str] = &[
    "could not write config file",
    "could not lock config file",
    "could not commit config file",
    "update of config-file failed",
];

impl Before {
    /// The repository of `workspace` now; `None` where it has no `.git` directory.
    pub(crate) fn of(workspace: &Path) -> Option<Before> {
        let roots = crate::beneath::Roots::open([workspace.to_path_buf()]).ok()?;
        let git = roots.dir(&workspace.join(".git")).ok()?;
        Some(Before {
            workspace: workspace.to_path_buf(),
            log_len: log_len(&git).unwrap_or(0),
            branch: branch(workspace),
        })
    }

    /// Put the `git:` lines of the module docs on `outcome`, a call of `plan`.
    pub(crate) fn annotate(&self, plan: &Plan, outcome: &mut Outcome) {
        let lines = self.lines(plan, outcome);
        if lines.is_empty() {
            return;
        }
        let mut observation = outcome.observation.clone();
        for line in lines.iter().rev() {
            observation = super::sandbox_rerun::insert_after_sandbox_line(&observation, line);
        }
        outcome.observation = observation;
    }

    fn lines(&self, plan: &Plan, outcome: &Outcome) -> Vec<String> {
        let mut out = Vec::new();
        out.extend(self.committed());
        let said = format!(
            "{}\n{}\n{}\n{}",
            outcome.stderr.window.head,
            outcome.stderr.window.tail,
            outcome.stdout.window.head,
            outcome.stdout.window.tail
        );
        let gits: Vec<(Vec<String>, PathBuf)> = plan
            .checked_stages()
            .filter(|s| {
                Path::new(&s.argv[0])
                    .file_name()
                    .is_some_and(|n| n == "git")
            })
            .map(|s| (s.argv.clone(), s.cwd.clone()))
            .collect();
        if CONFIG_REFUSED.iter().any(|m| said.contains(m)) {
            out.extend(self.config_refused(&gits));
        }
        for (argv, cwd) in &gits {
            if let Some((at, sub, _)) = crate::gate::git_subcommand(argv, cwd)
                && sub == "config"
                && argv[at + 1..].iter().any(|a| a == "--global")
            {
                out.push(format!(
                    "git: `{}` wrote the box's own home, which is gone when the run ends; to \
                     keep it, run on the host: {}",
                    corral_line::display_argv(argv),
                    corral_line::display_argv(argv)
                ));
            }
        }
        out
    }

    /// Step 1 of the module docs.
    fn committed(&self) -> Option<String> {
        let roots = crate::beneath::Roots::open([self.workspace.clone()]).ok()?;
        let git = roots.dir(&self.workspace.join(".git")).ok()?;
        let appended = appended(&git, self.log_len)?;
        let commits: Vec<&str> = appended
            .lines()
            .filter_map(|line| {
                let (head, message) = line.split_once('\t')?;
                let new = head.split(' ').nth(1)?;
                message.starts_with("commit").then_some(new)
            })
            .collect();
        let last = commits.last()?;
        let on = branch(&self.workspace).unwrap_or_else(|| "a detached HEAD".to_string());
        let short = &last[..last.len().min(7)];
        Some(match commits.len() {
            1 => format!("git: committed {short} on {on}"),
            n => format!("git: committed {n} commits (the last {short}) on {on}"),
        })
    }

    /// Step 2 of the module docs: the git commands of the call that may have written
    /// config (each, where the call ran several), with the line to run on the host.
    fn config_refused(&self, gits: &[(Vec<String>, PathBuf)]) -> Vec<String> {
        let mut out = Vec::new();
        for (argv, cwd) in gits {
            let Some((at, sub, _)) = crate::gate::git_subcommand(argv, cwd) else {
                continue;
            };
            let args = &argv[at + 1..];
            let shown = corral_line::display_argv(argv);
            let mut host: Vec<String> = vec!["git".into(), "-C".into()];
            host.push(cwd.display().to_string());
            let section = (sub == "branch")
                .then(|| self.section_change(args))
                .flatten();
            match section {
                Some((change, words)) => {
                    host.extend(words);
                    out.push(format!(
                        "git: `{shown}` changed the branch but not {change} in .git/config, \
                         which stays read-only in the box (a config names programs git runs \
                         on your machine); to change it too, run on the host: {}",
                        corral_line::display_argv(&host)
                    ));
                }
                None if sub == "branch" && !writes_branch_config(args) => {}
                None => {
                    host.extend(argv[1..].iter().cloned());
                    out.push(format!(
                        "git: `{shown}` could not write .git/config, which stays read-only \
                         in the box (a config names programs git runs on your machine); run \
                         on the host: {}",
                        corral_line::display_argv(&host)
                    ));
                }
            }
        }
        out
    }

    /// For `git branch -m`/`-M`/`-d`/`-D` with `args`: which section was left as it was,
    /// and the `git config` words that move or remove it.
    fn section_change(&self, args: &[String]) -> Option<(String, Vec<String>)> {
        let names: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
        let flag = |f: &[&str]| args.iter().any(|a| f.contains(&a.as_str()));
        if flag(&["-m", "-M", "--move"]) {
            let (old, new) = match names.as_slice() {
                [old, new] => ((*old).clone(), (*new).clone()),
                [new] => (self.branch.clone()?, (*new).clone()),
                _ => return None,
            };
            return Some((
                format!("its section [branch \"{old}\"]"),
                vec![
                    "config".into(),
                    "--rename-section".into(),
                    format!("branch.{old}"),
                    format!("branch.{new}"),
                ],
            ));
        }
        if flag(&["-d", "-D", "--delete"]) {
            let name = names.first()?;
            return Some((
                format!("its section [branch \"{name}\"]"),
                vec![
                    "config".into(),
                    "--remove-section".into(),
                    format!("branch.{name}"),
                ],
            ));
        }
        None
    }
}

/// Whether a `git branch` with `args` sets a branch's config (`-u`, `--set-upstream-to`,
/// `--track`, `--unset-upstream`, `--edit-description`).
fn writes_branch_config(args: &[String]) -> bool {
    args.iter().any(|a| {
        a == "-u"
            || a == "-t"
            || a.starts_with("--set-upstream")
            || a.starts_with("--track")
            || a == "--unset-upstream"
            || a == "--edit-description"
    })
}

/// The length of `logs/HEAD` in the git directory open as `git`.
fn log_len(git: &std::os::fd::OwnedFd) -> Option<u64> {
    let fd = open_log(git)?;
    let st = rustix::fs::fstat(&fd).ok()?;
    u64::try_from(st.st_size).ok()
}

fn open_log(git: &std::os::fd::OwnedFd) -> Option<std::os::fd::OwnedFd> {
    use rustix::fs::OFlags;
    let fd = crate::beneath::open_beneath(
        git,
        Path::new("logs/HEAD"),
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY,
    )
    .ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    (rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile)
        .then_some(fd)
}

/// What `logs/HEAD` holds past `from` (at most [`LOG_LIMIT`] bytes); `None` when it is
/// no longer than that (or was cut short: a reflog expired).
fn appended(git: &std::os::fd::OwnedFd, from: u64) -> Option<String> {
    let fd = open_log(git)?;
    let len = u64::try_from(rustix::fs::fstat(&fd).ok()?.st_size).ok()?;
    if len <= from {
        return None;
    }
    let want = (len - from).min(LOG_LIMIT);
    let mut bytes = vec![0u8; usize::try_from(want).ok()?];
    let mut got = 0;
    while got < bytes.len() {
        match rustix::io::pread(&fd, &mut bytes[got..], from + got as u64) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    bytes.truncate(got);
    String::from_utf8(bytes).ok()
}

/// The branch `.git/HEAD` names in `workspace` (`None`: detached or unreadable).
fn branch(workspace: &Path) -> Option<String> {
    let head = crate::beneath::read_in(workspace, Path::new(".git/HEAD"), 4096).ok()??;
    let head = String::from_utf8(head).ok()?;
    head.trim()
        .strip_prefix("ref: refs/heads/")
        .map(str::to_string)
}
