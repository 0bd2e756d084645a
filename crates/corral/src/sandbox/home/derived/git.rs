//! git's configuration (`~/.gitconfig`, `~/.config/git/config`): a reader of git's INI
//! dialect that keeps what builds read and drops what authenticates.
//!
//! Kept: the sections of [`SECTIONS`] (what git reads to commit, diff, merge, fetch and
//! check out: `user`, `core`, `init`, `safe`, `alias`…), less every key whose name says it
//! is a secret (`http.extraHeader`, `http.cookieFile`; `super::secret_name`), `core`'s
//! `sshCommand` and `askPass` (programs that authenticate), and every entry or section
//! whose value or subsection holds a URL's userinfo (`url."https://TOKEN@host/".insteadOf`).
//! Everything else goes: `credential.*`, `sendemail.*`, and a section no build reads.
//!
//! `include.path` files are read, filtered the same way and inlined; an `includeIf`'s file
//! is derived beside the copy and its condition kept. An include outside the home, one
//! that loops, or deeper than git's own bound of 10 is left out and reported.

use std::path::{Path, PathBuf};

use super::{DeriveError, has_userinfo, secret_name};

/// The sections a build reads, from git-config(1): what commits, diffs, merges, fetches,
/// checks out and shows use. A section not here is dropped, so a credential under a key
/// no reader knows does not ride along.
const SECTIONS: &[&str] = &[
    "user",
    "author",
    "committer",
    "core",
    "init",
    "safe",
    "alias",
    "color",
    "advice",
    "diff",
    "merge",
    "pull",
    "push",
    "fetch",
    "rebase",
    "status",
    "log",
    "format",
    "commit",
    "tag",
    "branch",
    "submodule",
    "protocol",
    "gc",
    "rerere",
    "filter",
    "lfs",
    "http",
    "url",
    "pack",
    "index",
    "feature",
    "grep",
    "help",
    "column",
    "blame",
    "transfer",
    "checkout",
    "clone",
    "am",
    "apply",
    "i18n",
    "pager",
    "maintenance",
    "uploadpack",
    "receive",
];

/// `core`'s keys that name a program that authenticates.
const AUTH_PROGRAMS: &[&str] = &["sshcommand", "askpass"];

/// git's bound on nested includes.
const DEPTH: usize = 10;

/// Where an `includeIf`'s derived file goes, below the box's home.
const INCLUDED: &str = ".config/git/derived-includes";

/// The derived text of the git configuration `from` (its text `text`), with the includes
/// left out. `home` is the person's home, `into` the box's home as the host keeps it.
pub(super) fn derive(
    from: &Path,
    text: &str,
    home: &Path,
    into: Option<&Path>,
) -> Result<(String, Vec<String>), DeriveError> {
    let mut cx = Context {
        home: home.canonicalize().unwrap_or_else(|_| home.to_path_buf()),
        into: into.map(Path::to_path_buf),
        stack: vec![from.canonicalize().unwrap_or_else(|_| from.to_path_buf())],
        left: Vec::new(),
        made: 0,
    };
    let out = cx.filter(from, text)?;
    Ok((out, cx.left))
}

struct Context {
    /// The home, canonical: where the box sees it too.
    home: PathBuf,
    /// Where an `includeIf`'s file is written; none when only looking.
    into: Option<PathBuf>,
    /// The files being read, outermost first: an include of one of them is a loop.
    stack: Vec<PathBuf>,
    left: Vec<String>,
    made: usize,
}

/// The section a line is in.
#[derive(Default)]
struct Section {
    name: String,
    sub: Option<String>,
    header: String,
    written: bool,
}

impl Context {
    fn filter(&mut self, from: &Path, text: &str) -> Result<String, DeriveError> {
        let mut out = String::new();
        let mut section: Option<Section> = None;
        let mut lines = text.lines().enumerate();
        while let Some((n, line)) = lines.next() {
            let mut rest = line.trim_start();
            if rest.starts_with('[') {
                let (s, after) = header(rest).ok_or_else(|| DeriveError::Parse {
                    line: n + 1,
                    what: "a section header that does not close".into(),
                })?;
                section = Some(s);
                rest = after.trim_start();
            }
            if rest.is_empty() || rest.starts_with(['#', ';']) {
                continue;
            }
            // An entry, continued while a line ends in `\`.
            let mut entry = rest.to_string();
            while entry.ends_with('\\') && !entry.ends_with("\\\\") {
                let Some((_, next)) = lines.next() else { break };
                entry.push('\n');
                entry.push_str(next);
            }
            let key: String = entry
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            let after_key = entry[key.len()..].trim_start();
            let valid = key.starts_with(|c: char| c.is_ascii_alphabetic())
                && (after_key.is_empty() || after_key.starts_with(['=', '#', ';']));
            let Some(s) = section.as_mut().filter(|_| valid) else {
                return Err(DeriveError::Parse {
                    line: n + 1,
                    what: "neither a section nor `key = value`".into(),
                });
            };
            let key = key.to_ascii_lowercase();
            let value = after_key.strip_prefix('=').unwrap_or("").trim();
            if (s.name == "include" || s.name == "includeif") && key == "path" {
                self.include(&mut out, s, from, value)?;
                continue;
            }
            if !keeps(s, &key, &entry) {
                continue;
            }
            if !s.written {
                out.push_str(&s.header);
                out.push('\n');
                s.written = true;
            }
            out.push('\t');
            out.push_str(&entry);
            out.push('\n');
        }
        Ok(out)
    }

    /// An include's `path = value` in section `s` of `from`: inlined (`include`) or derived
    /// beside the copy (`includeIf`), or left out and reported.
    fn include(
        &mut self,
        out: &mut String,
        s: &mut Section,
        from: &Path,
        value: &str,
    ) -> Result<(), DeriveError> {
        let named = value.trim_matches('"');
        let path = match named.strip_prefix("~/") {
            Some(rest) => self.home.join(rest),
            None => from.parent().unwrap_or(Path::new("/")).join(named),
        };
        let Some(found) = path.canonicalize().ok().filter(|p| p.is_file()) else {
            // git skips an include that is not there; so does the copy.
            return Ok(());
        };
        let why = if !found.starts_with(&self.home) {
            Some("outside the home")
        } else if self.stack.contains(&found) {
            Some("an include loop")
        } else if self.stack.len() > DEPTH {
            Some("nested deeper than git's bound")
        } else {
            None
        };
        if let Some(why) = why {
            self.left.push(format!("{named} ({why})"));
            return Ok(());
        }
        let text = match super::read(&found) {
            Ok(t) => t,
            Err(e) => {
                self.left.push(format!("{named} ({e})"));
                return Ok(());
            }
        };
        self.stack.push(found.clone());
        let derived = self.filter(&found, &text);
        self.stack.pop();
        let derived = match derived {
            Ok(d) => d,
            Err(e) => {
                self.left.push(format!("{named} (does not parse: {e})"));
                return Ok(());
            }
        };
        if s.name == "include" {
            out.push_str(&derived);
            // What follows in this section needs its header again.
            s.written = false;
            return Ok(());
        }
        self.made += 1;
        let rel = format!("{INCLUDED}/{}.gitconfig", self.made);
        let written = self.into.as_ref().map_or(Ok(()), |into| {
            let to = into.join(&rel);
            to.parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&to, derived))
        });
        if let Err(e) = written {
            self.left.push(format!("{named} ({e})"));
            return Ok(());
        }
        out.push_str(&s.header);
        out.push_str(&format!("\n\tpath = {}\n", self.home.join(rel).display()));
        s.written = false;
        Ok(())
    }
}

/// Whether the entry `key` (lowercase; `entry` its whole text) of section `s` stays.
fn keeps(s: &Section, key: &str, entry: &str) -> bool {
    let subsection_auth = s.sub.as_deref().is_some_and(has_userinfo);
    SECTIONS.contains(&s.name.as_str())
        && !secret_name(key)
        && (s.name != "core" || !AUTH_PROGRAMS.contains(&key))
        && !subsection_auth
        && !has_userinfo(entry)
}

/// A section header at the start of `line`: the section, and the rest of the line.
fn header(line: &str) -> Option<(Section, &str)> {
    let body = &line[1..];
    let mut in_quotes = false;
    let mut escaped = false;
    let mut end = None;
    for (at, c) in body.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_quotes => escaped = true,
            '"' => in_quotes = !in_quotes,
            ']' if !in_quotes => {
                end = Some(at);
                break;
            }
            _ => {}
        }
    }
    let end = end?;
    let inner = body[..end].trim();
    let (name, sub) = match inner.split_once(|c: char| c.is_whitespace()) {
        Some((name, sub)) => {
            let sub = sub.trim();
            let sub = sub.strip_prefix('"')?.strip_suffix('"')?;
            (name, Some(sub.replace("\\\"", "\"").replace("\\\\", "\\")))
        }
        None => match inner.split_once('.') {
            Some((name, sub)) => (name, Some(sub.to_string())),
            None => (inner, None),
        },
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return None;
    }
    let section = Section {
        name: name.to_ascii_lowercase(),
        sub,
        header: format!("[{inner}]"),
        written: false,
    };
    Some((section, &body[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(text: &str) -> String {
        let home = tempfile::tempdir().unwrap();
        let into = tempfile::tempdir().unwrap();
        let file = home.path().join(".gitconfig");
        std::fs::write(&file, text).unwrap();
        derive(&file, text, home.path(), Some(into.path()))
            .unwrap()
            .0
    }

    #[test]
    fn user_and_core_stay() {
        let t =
            kept("[user]\n\tname = Ada Lovelace\n\temail = ada@x\n[core]\n\tautocrlf = input\n");
        assert!(
            t.contains("name = Ada Lovelace") && t.contains("autocrlf"),
            "{t}"
        );
        assert!(t.contains("[user]") && t.contains("[core]"), "{t}");
    }

    #[test]
    fn credential_helper_goes() {
        let t = kept(
            "[credential]\n\thelper = store SECRET\n[credential \"https://x\"]\n\tusername = SECRET\n[user]\n\tname = A\n",
        );
        assert!(!t.contains("SECRET") && t.contains("name = A"), "{t}");
    }

    #[test]
    fn url_insteadof_with_userinfo_goes() {
        let t = kept(
            "[url \"https://SECRET@github.com/\"]\n\tinsteadOf = https://github.com/\n\
             [url \"https://github.com/\"]\n\tinsteadOf = https://me:SECRET@github.com/\n\
             [url \"git@github.com:\"]\n\tinsteadOf = gh:\n",
        );
        assert!(
            !t.contains("SECRET") && t.contains("insteadOf = gh:"),
            "{t}"
        );
    }

    #[test]
    fn http_extraheader_goes() {
        let t = kept(
            "[http]\n\textraheader = AUTHORIZATION: bearer SECRET\n\tsslVerify = true\n\
             [http \"https://github.com/\"]\n\textraHeader = Authorization: SECRET\n",
        );
        assert!(!t.contains("SECRET") && t.contains("sslVerify"), "{t}");
    }

    #[test]
    fn core_ssh_command_and_askpass_go() {
        let t = kept("[core]\n\tsshCommand = ssh -i SECRET\n\taskPass = SECRET\n\teditor = vi\n");
        assert!(!t.contains("SECRET") && t.contains("editor = vi"), "{t}");
    }

    #[test]
    fn a_cookie_file_and_a_proxy_with_userinfo_go() {
        let t = kept("[http]\n\tcookieFile = SECRET\n\tproxy = http://me:SECRET@proxy:3128\n");
        assert!(!t.contains("SECRET"), "{t}");
    }

    #[test]
    fn an_unknown_section_goes() {
        let t = kept("[sendemail]\n\tsmtpPass = SECRET\n[hub]\n\toauthtoken = SECRET\n");
        assert!(!t.contains("SECRET"), "{t}");
    }

    #[test]
    fn a_continued_secret_goes_whole() {
        let t = kept("[http]\n\textraHeader = Authorization: \\\n SECRET\n[user]\n\tname = A\n");
        assert!(!t.contains("SECRET") && t.contains("name = A"), "{t}");
    }

    #[test]
    fn includes_are_inlined_filtered_and_loops_left_out() {
        let home = tempfile::tempdir().unwrap();
        let into = tempfile::tempdir().unwrap();
        let h = home.path();
        std::fs::write(
            h.join(".gitconfig"),
            "[include]\n\tpath = ~/.gitconfig.local\n[includeIf \"gitdir:~/work/\"]\n\tpath = .work\n\
             [include]\n\tpath = /etc/passwd\n",
        )
        .unwrap();
        std::fs::write(
            h.join(".gitconfig.local"),
            "[user]\n\tname = Ada\n[credential]\n\thelper = SECRET\n[include]\n\tpath = ~/.gitconfig\n",
        )
        .unwrap();
        std::fs::write(
            h.join(".work"),
            "[user]\n\temail = ada@work\n[http]\n\textraHeader = SECRET\n",
        )
        .unwrap();
        let file = h.join(".gitconfig");
        let text = std::fs::read_to_string(&file).unwrap();
        let (t, left) = derive(&file, &text, h, Some(into.path())).unwrap();
        assert!(t.contains("name = Ada") && !t.contains("SECRET"), "{t}");
        assert!(t.contains("[includeIf \"gitdir:~/work/\"]"), "{t}");
        let work = std::fs::read_to_string(into.path().join(INCLUDED).join("1.gitconfig")).unwrap();
        assert!(
            work.contains("ada@work") && !work.contains("SECRET"),
            "{work}"
        );
        assert_eq!(left.len(), 2, "{left:?}");
        assert!(left.iter().any(|l| l.contains("loop")), "{left:?}");
        assert!(
            left.iter().any(|l| l.contains("outside the home")),
            "{left:?}"
        );
    }

    #[test]
    fn a_file_that_does_not_parse_is_an_error() {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join(".gitconfig");
        assert!(derive(&file, "[user\n", home.path(), None).is_err());
        assert!(derive(&file, "name = before any section\n", home.path(), None).is_err());
    }
}
