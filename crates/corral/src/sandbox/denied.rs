//! What the sandbox denied, from evidence: a write redirect outside the box's writable
//! roots (certain), or a path a failed command's stderr names beside a permission error
//! (inferred, and labelled so).
//!
//! A sandboxed stage opens its redirects itself, inside the box, so the box refuses what
//! it does not allow either way (see `corral_sys::box_redirects`). A write redirect outside
//! the writable roots is also refused here, before anything starts: the refusal can then
//! name the path and offer the rerun that would allow it.

use std::path::{Path, PathBuf};

use crate::plan::{Plan, PlannedOp};

/// How sure corral is about a denial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Evidence {
    /// corral refused to open a redirect outside the writable roots.
    Redirect,
    /// A failed command's stderr names the path beside a permission error.
    Stderr,
}

/// A write the sandbox denied (or, from stderr, very likely denied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeniedWrite {
    /// The path that was to be written.
    pub path: PathBuf,
    /// The existing path a rerun would make writable: `path` itself when it exists, else
    /// its nearest existing parent (Landlock grants access to what exists).
    pub grant: PathBuf,
    pub evidence: Evidence,
    /// The stderr line it came from.
    pub line: Option<String>,
}

impl DeniedWrite {
    fn new(path: PathBuf, evidence: Evidence, line: Option<String>) -> Self {
        let grant = path
            .ancestors()
            .find(|p| p.exists())
            .unwrap_or(Path::new("/"))
            .to_path_buf();
        Self {
            path,
            grant,
            evidence,
            line,
        }
    }

    /// One sentence: what was denied and how corral knows.
    pub fn describe(&self) -> String {
        self.described(true)
    }

    /// [`DeniedWrite::describe`] for a result whose text is `shown`: the stderr line it
    /// came from is quoted only where `shown` does not hold it already.
    pub fn describe_beside(&self, shown: &str) -> String {
        self.described(self.line.as_deref().is_none_or(|l| !shown.contains(l)))
    }

    fn described(&self, quote_line: bool) -> String {
        let how = match (self.evidence, &self.line) {
            (Evidence::Redirect, _) => {
                "corral did not open the redirect: it is outside what the sandbox lets commands write"
                    .to_string()
            }
            (Evidence::Stderr, Some(line)) if quote_line => {
                format!("inferred from stderr, not reported by the kernel: {line}")
            }
            (Evidence::Stderr, _) => {
                "inferred from its stderr, not reported by the kernel".to_string()
            }
        };
        format!("a write to {} ({how})", self.path.display())
    }

    /// What a rerun would add, in words: `/tmp/x` or `/tmp (to create /tmp/x)`.
    pub fn grant_words(&self) -> String {
        if self.grant == self.path {
            self.grant.display().to_string()
        } else {
            format!(
                "{} (the nearest existing directory, to create {})",
                self.grant.display(),
                self.path.display()
            )
        }
    }
}

/// Whether `path` may be written in the box: beneath a writable root and not beneath a
/// protected path.
pub(crate) fn writable(path: &Path, roots: &[PathBuf], protected: &[PathBuf]) -> bool {
    roots.iter().any(|r| path.starts_with(r)) && !protected.iter().any(|p| path.starts_with(p))
}

/// The first write redirect of `plan` the box would not allow.
///
/// `own` are the box's own directories among `roots` (`/tmp`, the runtime directory,
/// the home): a redirect below one to a place the host has there (`/tmp/build/out.log`
/// where the host has `/tmp/build`) would land in the box's directory, not the host's
/// file the line names, so it is held as outside too.
pub(crate) fn redirect_outside(
    plan: &Plan,
    roots: &[PathBuf],
    protected: &[PathBuf],
    own: &[PathBuf],
) -> Option<DeniedWrite> {
    let kept: Vec<PathBuf> = roots.iter().filter(|r| !own.contains(r)).cloned().collect();
    plan.stages()
        .flat_map(|s| s.redirects.iter())
        .find_map(|r| match &r.op {
            PlannedOp::Write(p) | PlannedOp::Append(p)
                if !is_device(p)
                    && (!writable(p, roots, protected) || covered_on_the_host(p, own, &kept)) =>
            {
                Some(DeniedWrite::new(p.clone(), Evidence::Redirect, None))
            }
            _ => None,
        })
}

/// Files every sandboxed command may write (see `prepare`'s `writable_files`).
fn is_device(path: &Path) -> bool {
    ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"]
        .iter()
        .any(|d| path == Path::new(d))
}

/// Error texts of a refused write (`EACCES`, `EPERM`, `EROFS`), lowercased.
const WRITE_ERRORS: &[&str] = &[
    "read-only file system",
    "permission denied",
    "operation not permitted",
    "errno 13",
    "errno 30",
    "eacces",
    "erofs",
];

/// Error texts of a path that is not there (`ENOENT`), lowercased.
const MISSING_ERRORS: &[&str] = &[
    "no such file or directory",
    "directory nonexistent",
    "errno 2]",
    "enoent",
];

/// Whether `path` lies below one of the box's own directories (`own`), not in one the
/// box keeps from the host there (`kept`), and the host has a directory on its way below
/// that own one: the host's, which the box cannot see.
fn covered_on_the_host(path: &Path, own: &[PathBuf], kept: &[PathBuf]) -> bool {
    let Some(dir) = own.iter().find(|d| path.starts_with(d)) else {
        return false;
    };
    if kept.iter().any(|k| path.starts_with(k)) {
        return false;
    }
    path.ancestors()
        .skip(1)
        .take_while(|a| a != dir)
        .any(|a| a.is_dir())
}

/// A path outside the writable roots that a failed command's stderr names beside a
/// permission error: `touch: cannot touch '/x/y': Permission denied`,
/// `PermissionError: [Errno 13] Permission denied: '/x/y'`, `open /x/y: read-only file
/// system`. Only absolute paths count; the first such line wins.
/// `home` is the person's home directory, whose own files are never offered.
///
/// A path below one of `own` (the box's own `/tmp` and runtime directory) whose line says
/// it is not there (`No such file or directory`) counts too where the host has it: the
/// box's directory covers the host's, and letting the box write that path is what puts
/// it back in the box.
pub(crate) fn from_stderr(
    stderr: &str,
    roots: &[PathBuf],
    protected: &[PathBuf],
    own: &[PathBuf],
    home: Option<&Path>,
) -> Option<DeniedWrite> {
    let kept: Vec<PathBuf> = roots.iter().filter(|r| !own.contains(r)).cloned().collect();
    stderr.lines().find_map(|line| {
        let lower = line.to_ascii_lowercase();
        let refused = WRITE_ERRORS.iter().any(|e| lower.contains(e));
        let missing = MISSING_ERRORS.iter().any(|e| lower.contains(e));
        if !refused && !missing {
            return None;
        }
        absolute_paths(line)
            .into_iter()
            .find(|p| {
                if is_device(p) {
                    false
                } else if refused && !writable(p, roots, protected) {
                    true
                } else {
                    (refused || missing) && covered_on_the_host(p, own, &kept)
                }
            })
            .filter(|p| offerable(p, home))
            .map(|p| {
                let mut text = line.trim().to_string();
                if text.chars().count() > 200 {
                    text = text.chars().take(199).collect::<String>() + "…";
                }
                DeniedWrite::new(p, Evidence::Stderr, Some(text))
            })
    })
}

/// What a shell or a session under the home runs on its own, each with what runs it. A
/// row holds a file or a directory below the home; a grant that is the row, holds it or
/// lies in it is never offered. Derived from the start-up files each program documents
/// (bash's INVOCATION, zsh's STARTUP/SHUTDOWN FILES, fish's configuration, the XDG
/// autostart and systemd user unit search paths, OpenSSH's `sshd(8)` FILES, git's
/// `git-config(1)` FILES): a list because no interface names them all; a test per row.
pub(crate) const RUN_AT_START: &[(&str, &str)] = &[
    (".bashrc", "bash runs it at every interactive start"),
    (".bash_profile", "bash runs it at a login"),
    (".bash_login", "bash runs it at a login"),
    (".bash_logout", "bash runs it at a logout"),
    (
        ".inputrc",
        "readline reads it at every start of bash: its macros type what they hold",
    ),
    (".profile", "sh and bash run it at a login"),
    (".zshenv", "zsh runs it at every start"),
    (".zprofile", "zsh runs it at a login"),
    (".zshrc", "zsh runs it at every interactive start"),
    (".zlogin", "zsh runs it at a login"),
    (".zlogout", "zsh runs it at a logout"),
    (
        ".config/fish",
        "fish runs its config.fish and conf.d at every start",
    ),
    (".xprofile", "the display manager runs it at a login"),
    (".xsessionrc", "the X session runs it at a login"),
    (
        ".config/autostart",
        "the desktop session starts what it names at a login",
    ),
    (
        ".config/systemd/user",
        "systemd's user manager starts its units",
    ),
    (
        ".config/environment.d",
        "systemd's user manager sets every service's environment from it",
    ),
    (
        ".ssh",
        "sshd reads authorized_keys and runs rc at a login; ssh runs its config's commands",
    ),
    (
        ".gitconfig",
        "git runs the programs it names (core.pager, core.fsmonitor, aliases)",
    ),
    (
        ".config/git",
        "git runs the programs its config names (core.pager, core.fsmonitor, aliases)",
    ),
];

/// Whether a path a command's stderr names may be offered as a rerun's writable path.
/// The text is the command's own, so it may be a lie written to get a path granted:
/// never a shell start-up file, a credential store, the home itself or anything above
/// it (what a rerun would grant is the nearest existing directory), nor a kernel file
/// (`/proc`, `/sys`: a failed read there is not a denied write).
fn offerable(path: &Path, home: Option<&Path>) -> bool {
    if path.starts_with("/proc") || path.starts_with("/sys") || path.starts_with("/dev") {
        return false;
    }
    let grant = path
        .ancestors()
        .find(|p| p.exists())
        .unwrap_or(Path::new("/"));
    if grant == Path::new("/") {
        return false;
    }
    let Some(home) = home else { return true };
    if home.starts_with(grant) {
        return false;
    }
    let Ok(rel) = path.strip_prefix(home) else {
        return true;
    };
    let at_start = RUN_AT_START.iter().any(|(f, _)| rel.starts_with(f));
    let stores: Vec<&str> = super::reach::DEFAULT_DENY_READ
        .iter()
        .filter_map(|p| p.strip_prefix("~/"))
        .map(|p| p.trim_end_matches('*'))
        .collect();
    let in_store = stores.iter().any(|s| rel.to_string_lossy().starts_with(s));
    !at_start && !in_store
}

/// Absolute paths in a line: words that start with `/` once quotes are taken off, with
/// trailing punctuation dropped.
pub(crate) fn absolute_paths(line: &str) -> Vec<PathBuf> {
    const QUOTES: &[char] = &['\'', '"', '`', '‘', '’', '“', '”', '(', ')', '[', ']'];
    line.split(|c: char| c.is_whitespace() || QUOTES.contains(&c))
        .map(|w| w.trim_end_matches([':', ',', ';', '.']))
        .filter(|w| w.starts_with('/') && w.len() > 1)
        .map(PathBuf::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots() -> Vec<PathBuf> {
        vec![PathBuf::from("/ws"), PathBuf::from("/tmp/corral-sandbox-1")]
    }

    #[test]
    fn paths_are_found_in_the_usual_error_shapes() {
        for (line, path) in [
            (
                "touch: cannot touch '/root/x': Permission denied",
                "/root/x",
            ),
            ("bash: /etc/x: Read-only file system", "/etc/x"),
            (
                "PermissionError: [Errno 13] Permission denied: '/home/me/.x'",
                "/home/me/.x",
            ),
            (
                "mkdir: cannot create directory ‘/var/cache/app’: Permission denied",
                "/var/cache/app",
            ),
            (
                "open /root/.cache/go-build/ab: read-only file system",
                "/root/.cache/go-build/ab",
            ),
        ] {
            let d = from_stderr(line, &roots(), &[], &[], None).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(d.path, PathBuf::from(path), "{line}");
            assert_eq!(d.evidence, Evidence::Stderr);
        }
    }

    #[test]
    fn a_claimed_denial_never_offers_a_start_up_file_a_store_or_the_home() {
        let home = std::env::temp_dir().join(format!("corral-denied-{}", std::process::id()));
        std::fs::create_dir_all(home.join(".cache")).unwrap();
        for rel in [
            ".bashrc",
            ".profile",
            ".ssh/authorized_keys",
            ".npmrc",
            "new-dir/x",
        ] {
            assert!(!offerable(&home.join(rel), Some(&home)), "{rel}");
        }
        assert!(!offerable(&home, Some(&home)));
        assert!(!offerable(Path::new("/proc/1/environ"), Some(&home)));
        // A printed claim about the home is not taken up.
        let line = format!("bash: {}/.bashrc: Permission denied", home.display());
        assert!(from_stderr(&line, &roots(), &[], &[], Some(&home)).is_none());
        assert!(offerable(&home.join(".cache/tool/x"), Some(&home)));
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn a_path_inside_the_box_or_without_an_error_is_not_a_denial() {
        assert!(from_stderr("cat: /ws/a: Permission denied", &roots(), &[], &[], None).is_none());
        assert!(from_stderr("wrote /root/x", &roots(), &[], &[], None).is_none());
        assert!(
            from_stderr(
                "rm: cannot remove 'x': Permission denied",
                &roots(),
                &[],
                &[],
                None
            )
            .is_none()
        );
    }

    #[test]
    fn a_host_path_under_the_boxs_own_tmp_is_a_denial_where_the_host_has_it() {
        let host = tempfile::tempdir().unwrap();
        let own = [host.path().to_path_buf()];
        std::fs::create_dir(host.path().join("build")).unwrap();
        let roots = vec![own[0].clone(), PathBuf::from("/ws")];
        let there = host.path().join("build/out.log");
        let line = format!(
            "sh: 1: cannot create {}: Directory nonexistent",
            there.display()
        );
        let d = from_stderr(&line, &roots, &[], &own, None).expect("the host has build/");
        assert_eq!(d.path, there);
        // Scratch at the top of the box's own directory, or a directory the host lacks:
        // the box's own business.
        for path in [
            host.path().join("scratch.txt"),
            host.path().join("nowhere/x"),
        ] {
            let line = format!("cat: {}: No such file or directory", path.display());
            assert!(
                from_stderr(&line, &roots, &[], &own, None).is_none(),
                "{line}"
            );
        }
    }

    #[test]
    fn a_protected_path_is_not_writable() {
        let protected = [PathBuf::from("/ws/.git/hooks")];
        assert!(!writable(
            Path::new("/ws/.git/hooks/pre-commit"),
            &roots(),
            &protected
        ));
        assert!(writable(Path::new("/ws/src/a.rs"), &roots(), &protected));
    }

    #[test]
    fn the_grant_is_the_nearest_existing_directory() {
        let d = DeniedWrite::new(
            PathBuf::from("/definitely/not/here"),
            Evidence::Stderr,
            None,
        );
        assert_eq!(d.grant, PathBuf::from("/"));
        assert!(d.grant_words().contains("to create /definitely/not/here"));
    }
}
