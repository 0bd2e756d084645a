//! Asking by effect: a call that would destroy work is asked about by what it does, not
//! by how it is spelled, where corral can tell from its words; whether it is asked
//! depends on whether `corral undo` could put back what it destroys (see
//! [`crate::destructive`] for the classes and the table):
//!
//! - what the undo record holds ([`Loss::Recorded`]) is asked only where the call's
//!   changes cannot be recorded (the workspace over the record's budget, the record
//!   failed, recording off);
//! - what it leaves out ([`Loss::Unrecorded`]) and the remote's ([`Loss::Remote`]) are
//!   asked on a model's surfaces (the built-in asks on) whatever the record; where the
//!   record does not work, what it leaves out is asked on every surface.
//!
//! What is read:
//!
//! - `git`, with its options before the subcommand passed over and aliases resolved (see
//!   `git_effect`): `reset --hard`, `checkout -- PATHS`, `restore`, `clean -f` (`-x`: the
//!   ignored files), `stash drop`, `push --force`, `gc --prune=now`, …
//! - `rm`, `unlink`, `shred`, `find … -delete` and `find … -exec rm`, each target
//!   resolved against where it runs (`rm src -rf`, `rm -rf ./src/../src`, a pattern by
//!   what it matches now; see `removal`); a target computed when the line runs (`rm -rf
//!   "$dir"`, what `xargs` reads) could be any, so it is taken as one the record leaves
//!   out.
//! - A command word computed when the line runs (`c=rm; $c -rf ./*`, `eval "$(…)"`):
//!   what it runs cannot be told, so it is taken as what the record leaves out too.
//!
//! The same words reached through wrappers and shells (`env`, `sudo`, `bash -c`, `find
//! -exec`, `xargs`) are checked as the policy reaches them. What the words cannot tell
//! (an inline program, a script) is not asked about here: its result says when its
//! changes cannot be undone.

mod removal;
#[cfg(test)]
mod table;

use std::path::{Path, PathBuf};

use corral_policy::{ApprovalMode, UNKNOWN_WORD};

use super::git_effect::{self, GitEffect};
use super::{Check, lexical, lift, own_question};
use crate::destructive::Loss;
use crate::plan::{Plan, Stage};
use crate::undo::rules::Rules;

/// How deep a git alias's shell line is followed.
const DEPTH: usize = 4;

/// The questions for what `plan` would destroy, in `workspace`: `unrecorded` says why the
/// call's changes cannot be recorded for undo, when they cannot; `builtin`, whether the
/// built-in asks hold (a model's surface).
pub(crate) fn checks(
    plan: &Plan,
    workspace: &Path,
    unrecorded: Option<&str>,
    builtin: bool,
    refs_recorded: bool,
    mode: ApprovalMode,
) -> Vec<Check> {
    if !builtin && unrecorded.is_none() && refs_recorded {
        return Vec::new();
    }
    let asked = |loss: Loss| {
        loss.held(refs_recorded)
            .asked(builtin, unrecorded.is_none())
    };
    let mut checks = Vec::new();
    let mut rules = None;
    for (i, stage) in plan.checked_stages().enumerate() {
        let mut at = At {
            workspace,
            rules: &mut rules,
            asked: &asked,
            walked: 0,
        };
        if let Some((what, loss)) = at.stage(stage) {
            let target = corral_line::display_argv(&stage.checked_argv());
            let why = match (loss.held(refs_recorded).why(), unrecorded) {
                // Said once: a `what` that names the record says why already.
                (Some(_), _) if builtin && what.contains("undo record") => format!(
                    "{what}, so `corral undo` cannot put it back: a built-in question, so a \
                     person decides whether it runs"
                ),
                (Some(beyond), _) if builtin => format!(
                    "{what}, which `corral undo` cannot put back ({beyond}): a built-in \
                     question, so a person decides whether it runs"
                ),
                (_, Some(why)) => format!(
                    "{what}, and {why}, so it could not be undone: a person decides whether \
                     it runs"
                ),
                (_, None) => unreachable!("asked only where undo cannot put it back"),
            };
            checks.push(own_question(i, target, why, lift::UNRECORDED, mode));
        }
    }
    checks
}

/// What a command destroys, in words, and whether undo puts it back.
type Found = (String, Loss);

/// Where commands are judged: the workspace, its ignore rules once read, and which
/// losses are asked about.
struct At<'a> {
    workspace: &'a Path,
    rules: &'a mut Option<Rules>,
    asked: &'a dyn Fn(Loss) -> bool,
    /// Entries walked so far (see `removal::WALK`).
    walked: usize,
}

impl At<'_> {
    /// The first thing `stage` would destroy that is asked about.
    fn stage(&mut self, stage: &Stage) -> Option<Found> {
        let Some(host) = &stage.host else {
            return self.command(&stage.argv, &stage.env, std::slice::from_ref(&stage.cwd), 0);
        };
        if let Some(word) = host.extracted.computed.first() {
            return self.found(
                format!(
                    "its command word `{word}` is computed when the line runs, so what it runs \
                     cannot be told"
                ),
                Loss::Unrecorded,
            );
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

    /// `(what, loss)` when `loss` is asked about.
    fn found(&self, what: String, loss: Loss) -> Option<Found> {
        (self.asked)(loss).then_some((what, loss))
    }

    /// The first thing `argv`, or a command it runs, would destroy that is asked about.
    fn command(
        &mut self,
        argv: &[String],
        env: &[(String, String)],
        cwds: &[PathBuf],
        depth: usize,
    ) -> Option<Found> {
        let reached = corral_policy::reached(argv);
        // What a removing `find` hands to `rm` (its starting points for `-delete`, `{}`
        // for `-exec rm`) is judged with the `find`, by what its tests select.
        let mut handed: Vec<String> = Vec::new();
        for argv in &reached.commands {
            let Some((program, args)) = argv.split_first() else {
                continue;
            };
            let name = program.rsplit('/').next().unwrap_or(program);
            if name == "find" && removal::find_removes(args) {
                handed.extend(removal::find_starts(args).iter().map(|s| s.to_string()));
                handed.push("{}".to_string());
            } else if matches!(name, "rm" | "unlink" | "shred")
                && !handed.is_empty()
                && removal::operands(args)
                    .iter()
                    .all(|t| handed.iter().any(|h| h == t) || t.contains(UNKNOWN_WORD))
            {
                continue;
            }
            if let Some(found) = self.simple(argv, env, cwds, depth) {
                return Some(found);
            }
        }
        None
    }

    /// What one simple command would destroy, when it is asked about.
    fn simple(
        &mut self,
        argv: &[String],
        env: &[(String, String)],
        cwds: &[PathBuf],
        depth: usize,
    ) -> Option<Found> {
        let (program, args) = argv.split_first()?;
        let name = program.rsplit('/').next().unwrap_or(program);
        match name {
            "git" => cwds
                .iter()
                .find_map(|cwd| match git_effect::effect(argv, env, cwd) {
                    GitEffect::Destroys(what, loss) => self.found(what, loss),
                    GitEffect::Line(line) if depth < DEPTH => {
                        let Ok(parsed) = corral_line::parse(&line) else {
                            return self.found(
                                format!(
                                    "`{program} {}` runs the alias `!{line}`, which corral cannot read",
                                    args.join(" ")
                                ),
                                Loss::Unrecorded,
                            );
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
                let targets = removal::operands(args);
                if targets.is_empty() {
                    // Given its paths when it runs (`xargs rm`): they could be any.
                    return self.found(
                        format!(
                            "`{name}` removes paths it is given when it runs, which could be any"
                        ),
                        Loss::Unrecorded,
                    );
                }
                self.removes(name, &targets, cwds)
            }
            "find" if removal::find_removes(args) => self.find(args, cwds),
            _ => None,
        }
    }

    /// The first removal of `targets` (as written, from each of `cwds`) that is asked
    /// about.
    fn removes(&mut self, how: &str, targets: &[&str], cwds: &[PathBuf]) -> Option<Found> {
        for target in targets {
            if target.contains(['$', '`']) || target.contains(UNKNOWN_WORD) {
                let what = format!(
                    "`{how}` removes a path computed when the line runs, which could be any"
                );
                if let Some(found) = self.found(what, Loss::Unrecorded) {
                    return Some(found);
                }
                continue;
            }
            for cwd in cwds {
                for path in removal::resolve(target, cwd) {
                    if let Some((what, loss)) = self.removal(&path)
                        && let Some(found) =
                            self.found(format!("`{how} {target}` removes {what}"), loss)
                    {
                        return Some(found);
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workspace: `src/` (recorded), `target/debug` (ignored build output), `.env`
    /// (ignored), `notes.txt`, `lib/` holding an ignored `lib/secret.key`, and `.git`.
    fn workspace() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        for d in ["src", "target/debug", "lib", ".git/refs/tags"] {
            std::fs::create_dir_all(ws.join(d)).unwrap();
        }
        for (f, text) in [
            ("src/a.rs", "x"),
            ("notes.txt", "x"),
            (".env", "KEY=1"),
            ("lib/secret.key", "k"),
            ("lib/mod.rs", "m"),
            (".gitignore", "/target\n.env\n*.key\n"),
        ] {
            std::fs::write(ws.join(f), text).unwrap();
        }
        (dir, ws)
    }

    /// What `line` (split on spaces) loses in `ws`, asked about or not.
    fn loss(ws: &Path, line: &str) -> Option<Loss> {
        let mut rules = None;
        let mut at = At {
            workspace: ws,
            rules: &mut rules,
            asked: &|_| true,
            walked: 0,
        };
        let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        at.command(&words, &[], &[ws.to_path_buf()], 0)
            .map(|(_, loss)| loss)
    }

    #[test]
    fn removals_are_resolved_and_classed_by_what_undo_can_put_back() {
        let (_dir, ws) = workspace();
        for line in [
            "rm src -rf",
            "rm -rf ./src/../src",
            "rm -rf -- src/",
            "rm notes.txt",
            "find src -delete",
            "find src -name *.rs -delete",
            "find src -type f -exec rm {} +",
            "env rm -rf src",
            "sudo -n rm -r -- src",
            "find src -name x -o -name y -delete",
            "git clean -fd",
            "git checkout -- .",
            "git restore .",
        ] {
            assert_eq!(loss(&ws, line), Some(Loss::Recorded), "{line}");
        }
        for line in [
            "git reset --hard",
            "git --git-dir=.git --work-tree=. branch -D topic",
        ] {
            assert_eq!(loss(&ws, line), Some(Loss::Refs), "{line}");
        }
        for line in [
            "rm -rf .",
            "rm -rf ..",
            "rm -rf /",
            "rm .env",
            "rm -rf lib",
            "rm -rf .git",
            "rm -rf ./*",
            "find -delete",
            "find . -type d -empty -delete",
            "xargs rm -rf",
            "rm -rf $dir",
            "git -c x=y clean -fdx",
            "git gc --prune=now",
            "git reflog expire --expire=now --all",
        ] {
            assert_eq!(loss(&ws, line), Some(Loss::Unrecorded), "{line}");
        }
        for line in [
            "git push --force origin main",
            "git -C src push origin +main",
            "git push origin :topic",
        ] {
            assert_eq!(loss(&ws, line), Some(Loss::Remote), "{line}");
        }
        for line in [
            "rm -rf target",
            "rm -rf target/debug",
            "rm -f missing.txt",
            "find src -name x",
            "find src -name *.py -delete",
            "rm -rf /tmp/elsewhere",
            "git push origin main",
            "git clean -n -x",
        ] {
            assert_eq!(loss(&ws, line), None, "{line}");
        }
    }

    #[test]
    fn git_s_refs_are_recorded_only_where_git_may_write_its_data() {
        // With git_write the record holds them: not asked while it works.
        assert!(!Loss::Refs.held(true).asked(true, true));
        assert!(Loss::Refs.held(true).asked(true, false));
        // Without it they are state the record leaves out: asked on a model's surface.
        assert!(Loss::Refs.held(false).asked(true, true));
        assert!(Loss::Refs.held(false).why().is_some());
    }

    #[test]
    fn what_is_asked_depends_on_the_surface_and_the_record() {
        use Loss::*;
        // (loss, built-in asks, record works) -> asked
        for (loss, builtin, recorded, asked) in [
            (Recorded, true, true, false),
            (Recorded, true, false, true),
            (Recorded, false, false, true),
            (Unrecorded, true, true, true),
            (Unrecorded, false, true, false),
            (Unrecorded, false, false, true),
            (Remote, true, true, true),
            (Remote, false, false, false),
        ] {
            assert_eq!(
                loss.asked(builtin, recorded),
                asked,
                "{loss:?} {builtin} {recorded}"
            );
        }
    }
}
