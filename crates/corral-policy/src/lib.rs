//! corral's policy: what may **start**, decided before anything runs.
//!
//! The library plans a line — every stage's argv, the program each resolves
//! to, every redirect's resolved path — and asks this crate about each
//! piece. This crate is pure: no processes, no filesystem, no environment.
//! It only reads configuration text it is handed.
//!
//! ```
//! use corral_policy::{Act, Effect, Policy};
//!
//! let policy = Policy::permissive()
//!     .layer("ops")
//!     .allow_exec("cargo*")
//!     .deny_exec("cargo publish*");
//!
//! assert_eq!(policy.check(Act::Exec, "cargo test").effect, Effect::Allow);
//! assert_eq!(policy.check(Act::Exec, "cargo publish --token x").effect, Effect::Deny);
//! ```
//!
//! # The model
//!
//! - An [`Act`] is what is asked for: [`Act::Exec`] (start a program),
//!   [`Act::Read`] and [`Act::Write`] (open a redirect target), [`Act::Env`]
//!   (assign a variable for a command: `NAME=value cmd`).
//! - An [`Effect`] is the answer: `Allow`, `Ask` (an approver decides, see
//!   [`ApprovalMode`]) or `Deny`.
//! - A [`Policy`] is a [`Tier`] plus a stack of named [`Layer`]s
//!   (`operator`, `user`, `project`, `session`, `cli`, ...), each an ordered
//!   list of [`Rule`]s. A rule is an act, a pattern, an effect, and an
//!   [`Origin`] (file and line, a flag, `builtin` or `library`).
//!
//! # How an exec pattern matches
//!
//! A command is checked on its **program** and on its **whole argv joined
//! by single spaces**. The joined argv is tried as given and, when `argv[0]`
//! is a path, again with `argv[0]` shortened to its basename, so
//! `deny "cargo publish*"` also holds for `/usr/bin/cargo publish`. The
//! program is `argv[0]` and, when the caller resolved it, the absolute
//! program path; either one matching is a match.
//!
//! | the pattern | is matched against | example pattern | matches | does not match |
//! |---|---|---|---|---|
//! | one word, no glob characters, no `/` | the program's basename, exactly | `rm` | `rm -rf x`, `/bin/rm x` | `rmdir x`, `echo rm` |
//! | one word, no glob characters, with `/` | the program's path, exactly | `/usr/bin/rm` | `/usr/bin/rm x`, `rm x` resolved to `/usr/bin/rm` | `/bin/rm x` |
//! | one word with glob characters (`*?[{`), no `/` | the basename, **or** the joined argv | `rm*` | `rm x`, `rmdir x`, `/bin/rm x` | `echo rm` |
//! | | | `cargo*` | `cargo test`, `cargo-clippy` | `xcargo` |
//! | one word with glob characters and a `/` | the full program path, **or** the joined argv | `/opt/tools/*` | `/opt/tools/bin/x -v` | `x -v` (unresolved) |
//! | anything with whitespace | a glob over the joined argv | `cargo test*` | `cargo test`, `cargo test -p foo` | `cargo build` |
//! | | | `git push*` | `git push --force`, `/usr/bin/git push` | `git -C x push` |
//! | | | `git status` | `git status` | `git status -s` |
//!
//! Globs are [`globset`] globs with `literal_separator(false)` for exec, so
//! `*` also crosses `/` (`cargo test*` matches `cargo test ./a/b`). A glob
//! must match the whole text: append `*` to allow trailing arguments.
//!
//! # How a path pattern matches
//!
//! Read and write patterns match the resolved absolute path, with
//! `literal_separator(true)`: `*` stays within one component and `**`
//! crosses any number. `/work/**/secrets/*` matches
//! `/work/a/b/secrets/key`. A pattern without `/` matches a basename
//! anywhere (`.env` is `**/.env`), and a relative pattern matches at any
//! depth (`secrets/*` is `**/secrets/*`).
//!
//! # Precedence
//!
//! **deny > ask > allow > the default**, across all layers. A deny in any
//! layer beats an allow in any other, whatever the order of the layers, so
//! an operator base cannot be taken back by what a project stacks on top.
//! When several rules of the winning effect match, the first in stack order
//! (bottom layer first, then file order) is the one reported. When none
//! matches, the default decides: [`Tier::Permissive`] allows,
//! [`Tier::Default`] asks, [`Tier::Strict`] denies, unless
//! [`Policy::default_effect`] set a default for that act.
//!
//! # How an env pattern matches
//!
//! An env pattern is a glob over the variable's name (`LD_*`), or over
//! `NAME=value` when it has a `=` (`RUST_LOG=debug`). Assignments are found
//! wherever a command line is read: in front of a stage, after `env`,
//! `sudo`, `strace -E`, `systemd-run -E`, `firejail --env=`, and in every
//! stage of an inner `sh -c` line. A name of [`envvars`] with no rule gets
//! the built-in default `ask` (the tier's default when stricter); other
//! names get a decision only when a rule names them or `[defaults] env` is
//! set. [`Policy::check_simple`] takes the assignments a caller parsed
//! itself (corral's grammar, a bash parser) beside the argv.
//!
//! # Program identity
//!
//! A rule on a program is a rule on its file. The caller (the library, while
//! planning) resolves every program a command reaches and compares its
//! device and inode with those of the programs ask and deny rules name
//! ([`Policy::ruled_programs`]); a match is handed in as a [`SameFile`] and
//! the rule applies, the decision naming the file ([`Why::SameFile`]).
//! Multi-call binaries are left to their name.
//!
//! # Commands that run commands
//!
//! [`Policy::check_command`] checks the command **and every command it would
//! run**; the [`Verdict`] is the strictest of all its decisions. Matching is
//! by the basename of `argv[0]` here too (`/usr/bin/env rm x`). Unwrapped:
//!
//! - `env [-i] [-u NAME] [-C DIR] [NAME=VAL]... [--] cmd` (`env -S STRING`
//!   is split on whitespace and read again), `nice [-n N|-N] cmd`,
//!   `nohup cmd`, `timeout [opts] DURATION cmd`, `stdbuf -oL cmd`,
//!   `setsid cmd`, `time cmd` (the program), `command [-p] cmd` (not `-v`/
//!   `-V`), `exec cmd`, `chroot [opts] DIR cmd`, `ionice`, `taskset`,
//!   `chrt`, `unbuffer`, `flock FILE cmd` / `flock FILE -c LINE`;
//! - `xargs [opts] cmd...`: `cmd` with the arguments known (stdin adds
//!   more), `echo` without one;
//! - `sudo [opts] [NAME=VAL] cmd`, `doas cmd`, `su ... -c LINE`;
//! - `busybox APPLET args`, `toybox APPLET args`;
//! - `strace`/`ltrace cmd`, `script -c LINE`, `runuser`, `systemd-run`,
//!   `pkexec`, `firejail`, `setpriv`, `unshare`, `nsenter`, `prlimit`,
//!   `fakeroot`, `valgrind`, `capsh -- -c`, `sg -c`, `gdb --args`, `xterm
//!   -e`, `noglob`/`nocorrect`/`builtin` and more (where options are not
//!   modelled one by one, every plausible start of the command among the
//!   first operands is checked);
//! - commands given in options: `tar --to-command/-I/--checkpoint-action`,
//!   `rsync -e`, `ssh -o ProxyCommand=/LocalCommand=`, `git -c KEY=VALUE`
//!   (any key that can name a program), `git rebase --exec`, `grep -O`,
//!   `submodule foreach`, `bisect run`, `sed` `e`, `vim -c`/`+cmd`, `emacs
//!   --eval`, `man -P`, `zip -TT`, `npx -c`, `npm exec --`;
//! - what cannot be seen into is decided like an unparsable inner line
//!   (and denied when a word names a denied program): `fish`, `csh`,
//!   `tcsh`, `nu`, `elvish`, `xonsh` lines, `parallel` without a command,
//!   `expect -c`, `envdir`, `tmux`/`screen` commands, `at`, `batch`,
//!   `crontab`, and any launcher that would run the words it reads at run
//!   time (`xargs sh -c`, `xargs env`, `find -exec sh -c {}`);
//! - `find ... -exec|-execdir|-ok|-okdir cmd ... ;|+`, every clause. `find
//!   ... -delete` is checked as the `find` command it is **and** as if
//!   `rm START...` were run, so `deny rm` holds for it;
//! - `sh|bash|zsh|dash|ksh|mksh|ash|rbash|yash|posh [opts] -c LINE` (zsh's
//!   `=name` is read as the program `name`)
//!   (`-lc`, `-ec`, `-o pipefail -c`, ...), and `watch [opts] cmd...` (which
//!   joins its arguments into a shell line; `watch -x` runs them directly):
//!   the line is parsed with [`corral_line::parse`] and every stage is
//!   checked, as is every redirect target in it (as written: relative to a
//!   working directory this crate does not know). A line the grammar
//!   refuses is decided by the `unparsable_inner_line` setting (default
//!   `Ask`), and the decision quotes the refusal; if a word of such a line
//!   names a program an exec rule denies, it is denied instead;
//! - interpreter one-liners — `python -c`, `node -e/--eval/-p`, `bun -e`,
//!   `perl -e/-E` (any cluster with `e`), `ruby -e`, `php -r`, `deno eval`,
//!   `osascript -e`, `Rscript -e`, `lua -e`, `pwsh -c`/`powershell
//!   -Command` (any prefix), and `awk` programs containing `system` or `|`
//!   — cannot be checked inside: the `interpreter_one_liner` setting
//!   decides (default `Ask`), and one whose words name a denied program is
//!   denied;
//! - a script file (`bash script.sh`, `sh -s`, `bash` reading stdin,
//!   `python x.py`, `python -m mod`): the `script_file` setting decides if
//!   set; by default it is unset and only the rule or default for the
//!   interpreter itself applies.
//!
//! Nesting is limited to [`MAX_DEPTH`] levels; deeper is decided as an
//! unparsable line.
//!
//! # The boundary, stated plainly
//!
//! The policy decides what may **start**. It does not decide what a started
//! process then does: a started `python script.py` can delete anything,
//! `make` runs whatever its Makefile says, `npm test` whatever
//! `package.json` says, `git` whatever the repository's hooks and
//! configuration name. Unwrapping covers the launchers and the
//! command-taking options listed above so a rule like `deny rm` means
//! something; a program that deletes files itself, a copy of `rm` under
//! another name, or code in a script file is not seen. The sandbox bounds
//! the rest.
//!
//! # Trust in a policy file
//!
//! A [`PolicyFile`] marked [`PolicyFile::untrusted`] (a workspace file
//! nobody trusted in this content) only tightens: see
//! [`Policy::push_file`] and [`Policy::notices`].
//!
//! # Other pieces
//!
//! - [`safe::is_known_safe`]: a table of read-only commands, for
//!   [`ApprovalMode::UnlessTrusted`], each reviewed for flags and
//!   configuration that run code; [`safe::why_not_safe`] says what keeps a
//!   command off it.
//! - [`envvars::risk`]: the variables that make programs run other code.
//! - [`interactive::needs_terminal`]: programs that need a terminal.
//! - [`approval::resolve`]: what an effect turns into under an approval mode.
//! - [`config::parse`]: policy files.
//! - [`snippet::Snippet`]: the TOML a hint gives a person to add to a policy file.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod approval;
pub mod config;
mod decision;
pub mod envvars;
pub mod interactive;
pub mod limits;
mod model;
mod pattern;
mod policy;
pub mod safe;
mod sed;
pub mod snippet;
pub mod stdin_script;
mod unwrap;

pub use approval::{ApprovalMode, Resolution, resolve};
pub use config::{ConfigError, ConfigErrorKind, PolicyFile};
pub use decision::{Decision, MatchedRule, SameFile, Terminal, Verdict, Why};
pub use model::{Act, Effect, Origin, Tier};
pub use pattern::{PatternError, Rule};
pub use policy::{ADDED_WORDS, CommandCheck, Effects, Layer, Policy, SimpleCommand};
pub use unwrap::{MAX_DEPTH, Reached, UNKNOWN_WORD, reached};
