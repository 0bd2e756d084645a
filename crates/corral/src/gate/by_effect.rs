//! Asking by effect where a call's changes cannot be recorded for undo (the workspace is
//! over the record's budget, the record failed, recording is off): a call that would
//! destroy work is asked about by what it does, not by how it is spelled, where corral
//! can tell from its words.
//!
//! - `git`, with its options before the subcommand passed over and aliases resolved (see
//!   `git_effect`): `reset --hard`, `checkout -- PATHS`, `restore`, `read-tree -u
//!   --reset`, `clean -f`, `stash drop`, …
//! - `rm`, `unlink`, `shred` and `find … -delete`, each target resolved against where it
//!   runs (`rm src -rf`, `rm -rf ./src/../src`, a pattern by what it matches now): asked
//!   when one is the workspace, holds it, or is in it and not left out of the record
//!   (ignored build output is routine to remove); a target computed when the line runs
//!   (`rm -rf "$dir"`, what `xargs` reads) is asked about, since it could be any.
//! - A command word computed when the line runs (`c=rm; $c -rf ./*`, `eval "$(…)"`):
//!   what it runs cannot be told, so it is asked about.
//!
//! The same words reached through wrappers and shells (`env`, `sudo`, `bash -c`, `find
//! -exec`, `xargs`) are checked as the policy reaches them. What the words cannot tell
//! (an inline program, a script) is not asked about here: its result says that its
//! changes cannot be undone. With a working record none of this is asked: `corral undo`
//! puts back what any call did.

use std::path::{Path, PathBuf};

use corral_policy::{ApprovalMode, UNKNOWN_WORD};

use super::git_effect::{self, GitEffect};
use super::{Check, lexical, lift, own_question};
use crate::plan::{Plan, Stage};
use crate::undo::rules::Rules;

/// How deep a git alias's shell line is followed.
const DEPTH: usize = 4;

/// The questions for what `plan` would destroy that cannot be undone, `why` being why
/// its changes cannot be recorded.
pub(super) fn checks(plan: &Plan, workspace: &Path, why: &str, mode: ApprovalMode) -> Vec<Check> {
    let mut checks = Vec::new();
    let mut rules = None;
    for (i, stage) in plan.checked_stages().enumerate() {
        let mut at = At {
            workspace,
            rules: &mut rules,
        };
        if let Some(what) = at.stage(stage) {
            let target = corral_line::display_argv(&stage.checked_argv());
            let why = format!(
                "{what}, and {why}, so it could not be undone: a person decides whether it runs"
            );
            checks.push(own_question(i, target, why, lift::UNRECORDED, mode));
        }
    }
    checks
}

/// Where commands are judged: the workspace, and its ignore rules once read.
struct At<'a> {
    workspace: &'a Path,
    rules: &'a mut Option<Rules>,
}

impl At<'_> {
    /// What `stage` would destroy, in words.
    fn stage(&mut self, stage: &Stage) -> Option<String> {
        let Some(host) = &stage.host else {
            return self.command(&stage.argv, &stage.env, std::slice::from_ref(&stage.cwd), 0);
        };
        if let Some(word) = host.extracted.computed.first() {
            return Some(format!(
                "its command word `{word}` is computed when the line runs, so what it runs \
                 cannot be told"
            ));
        }
        // The bash parser does not say in which order `cd`s run: a target is resolved
        // against each directory the line may be in.
        let mut cwds = vec![stage.cwd.clone()];
        for argv in &host.extracted.commands {
            if let [cd, dir] = argv.as_slice()
                && (cd == "cd" || cd == "pushd")
                && !dir.contains(['$', '`'])
            {
                cwds.push(lexical(&stage.cwd.join(dir)));
            }
        }
        host.extracted
            .commands
            .iter()
            .zip(&host.extracted.assignments)
            .find_map(|(argv, env)| self.command(argv, env, &cwds, 0))
    }

    /// What `argv`, or a command it runs, would destroy.
    fn command(
        &mut self,
        argv: &[String],
        env: &[(String, String)],
        cwds: &[PathBuf],
        depth: usize,
    ) -> Option<String> {
        let reached = corral_policy::reached(argv);
        reached
            .commands
            .iter()
            .find_map(|argv| self.simple(argv, env, cwds, depth))
    }

    /// What one simple command would destroy.
    fn simple(
        &mut self,
        argv: &[String],
        env: &[(String, String)],
        cwds: &[PathBuf],
        depth: usize,
    ) -> Option<String> {
        let (program, args) = argv.split_first()?;
        let name = program.rsplit('/').next().unwrap_or(program);
        match name {
            "git" => cwds
                .iter()
                .find_map(|cwd| match git_effect::effect(argv, env, cwd) {
                    GitEffect::Destroys(what) => Some(what),
                    GitEffect::Line(line) if depth < DEPTH => {
                        let Ok(parsed) = corral_line::parse(&line) else {
                            return Some(format!(
                                "`{program} {}` runs the alias `!{line}`, which corral cannot read",
                                args.join(" ")
                            ));
                        };
                        parsed.commands().find_map(|c| match c {
                            corral_line::Command::Simple(s) => {
                                let words: Vec<String> =
                                    s.argv.iter().map(|w| w.value.clone()).collect();
                                self.command(&words, env, std::slice::from_ref(cwd), depth + 1)
                            }
                            _ => None,
                        })
                    }
                    _ => None,
                }),
            "rm" | "unlink" | "shred" => {
                let targets = operands(args);
                if targets.is_empty() {
                    // Given its paths when it runs (`xargs rm`): they could be any.
                    return Some(format!(
                        "`{name}` removes paths it is given when it runs, which could be any"
                    ));
                }
                self.removes(name, &targets, cwds)
            }
            "find" if args.iter().any(|a| a == "-delete") => {
                let targets = find_paths(args);
                self.removes("find -delete", &targets, cwds)
            }
            _ => None,
        }
    }

    /// Whether removing `targets` (as written, from each of `cwds`) destroys work; what,
    /// in words.
    fn removes(&mut self, how: &str, targets: &[&str], cwds: &[PathBuf]) -> Option<String> {
        for target in targets {
            if target.contains(['$', '`']) || target.contains(UNKNOWN_WORD) {
                return Some(format!(
                    "`{how}` removes a path computed when the line runs, which could be any"
                ));
            }
            for cwd in cwds {
                for path in self.resolve(target, cwd) {
                    if self.holds_work(&path) {
                        return Some(format!(
                            "`{how} {target}` removes {}",
                            shown(&path, self.workspace)
                        ));
                    }
                }
            }
        }
        None
    }

    /// The paths `target` names from `cwd`: a pattern by what it matches now, `~` as the
    /// home; each without `.` and `..`.
    fn resolve(&self, target: &str, cwd: &Path) -> Vec<PathBuf> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let target = match (target.strip_prefix('~'), &home) {
            (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
                format!("{}{rest}", home.display())
            }
            _ => target.to_string(),
        };
        let matches = if target.contains(['*', '?', '[']) {
            crate::glob::expand(&target, &target, cwd, crate::glob::Hidden::NONE)
                .unwrap_or_else(|_| vec![target.clone()])
        } else {
            vec![target]
        };
        matches.iter().map(|m| lexical(&cwd.join(m))).collect()
    }

    /// Whether removing `path` loses work: it is the workspace or holds it, or it exists
    /// in it and is not left out of the record.
    fn holds_work(&mut self, path: &Path) -> bool {
        let ws = self.workspace;
        if ws.starts_with(path) {
            return true;
        }
        let Ok(rel) = path.strip_prefix(ws) else {
            return false;
        };
        if path.symlink_metadata().is_err() {
            return false;
        }
        let rules = self.rules.get_or_insert_with(|| Rules::new(ws));
        let mut at = ws.to_path_buf();
        for part in rel.components() {
            rules.enter(&at);
            at.push(part);
            if rules.ignored(&at, at.is_dir()) {
                return false;
            }
        }
        true
    }
}

/// An `rm`'s operands: every word but its options, all after `--`.
fn operands(args: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut options = true;
    for a in args {
        if options && a == "--" {
            options = false;
        } else if !(options && a.starts_with('-') && a.len() > 1) {
            out.push(a.as_str());
        }
    }
    out
}

/// A `find`'s starting points (`.` when it names none).
fn find_paths(args: &[String]) -> Vec<&str> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            _ if a.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let paths: Vec<&str> = args[i.min(args.len())..]
        .iter()
        .take_while(|a| !a.starts_with('-') && !matches!(a.as_str(), "(" | "!" | ","))
        .map(String::as_str)
        .collect();
    if paths.is_empty() { vec!["."] } else { paths }
}

/// `path` as the question shows it: relative to the workspace where it is in it.
fn shown(path: &Path, workspace: &Path) -> String {
    match path.strip_prefix(workspace) {
        Ok(rel) if rel.as_os_str().is_empty() => "the whole workspace".to_string(),
        Ok(rel) => format!("`{}` in the workspace", rel.display()),
        Err(_) => format!("`{}`, which holds the workspace", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removals_are_resolved_against_the_workspace() {
        let ws = tempfile::tempdir().unwrap();
        let ws = ws.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(ws.join("target/debug")).unwrap();
        std::fs::write(ws.join("notes.txt"), "x").unwrap();
        let mut rules = None;
        let mut at = At {
            workspace: &ws,
            rules: &mut rules,
        };
        let cwds = [ws.clone()];
        let words =
            |line: &str| -> Vec<String> { line.split_whitespace().map(str::to_string).collect() };
        for line in [
            "rm src -rf",
            "rm -rf ./src/../src",
            "rm -rf ./*",
            "rm -rf .",
            "rm -rf ..",
            "rm notes.txt",
            "find src -delete",
            "find -delete",
            "env rm -rf src",
            "sudo -n rm -r -- src",
            "xargs rm -rf",
        ] {
            assert!(at.command(&words(line), &[], &cwds, 0).is_some(), "{line}");
        }
        for line in [
            "rm -rf target",
            "rm -rf target/debug",
            "rm -f missing.txt",
            "find src -name x",
            "rm -rf /tmp/elsewhere",
        ] {
            assert_eq!(at.command(&words(line), &[], &cwds, 0), None, "{line}");
        }
    }
}
