//! The environment's deny patterns, matched case-insensitively as `globset` matches them.
//!
//! A run checks every inherited name against them once, when it opens. Compiling the
//! patterns into `globset`'s regular expressions costs a few hundred microseconds, more
//! than the rest of a command-line call's start, for patterns that are nearly always
//! literal text and `*` (`*TOKEN*`, `OPENAI_*`). Those are matched here piece by piece;
//! any other pattern (`?`, a class, alternatives, an escape) goes to `globset`, and so
//! does a name that is not ASCII, whose case folding only the regular expression knows
//! (`K`, the Kelvin sign, folds to `k`).

use std::cell::OnceCell;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{Error, Result};

/// Names stripped from the inherited environment unless the configuration says otherwise.
/// Matched case-insensitively.
pub const DEFAULT_DENIED: &[&str] = &[
    "*KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASSWORD*",
    "*PASSWD*",
    "*CREDENTIAL*",
    "*PASSPHRASE*",
    // A word of its own: `DB_PASS`, `MYSQL_PWD`, `GITHUB_PAT`, `NPM_CONFIG__AUTH`, not
    // `PATH`, `PWD`, `OLDPWD` or `GIT_AUTHOR_NAME`.
    "*_PASS",
    "*_PWD",
    "*_PAT",
    "*_PAT_*",
    "*_AUTH",
    "*_AUTH_CONFIG",
    "*AUTHORIZATION*",
    "*JWT*",
    "*COOKIE*",
    "*WEBHOOK*",
    "*_DSN",
    "OP_SESSION_*",
    "ANTHROPIC_*",
    "OPENAI_*",
    "OPENROUTER_*",
    "GEMINI_*",
    "GOOGLE_API_*",
    "GOOGLE_GENAI_*",
    "MISTRAL_*",
    "GROQ_*",
    "COHERE_*",
    "DEEPSEEK_*",
    "XAI_*",
    "TOGETHER_*",
    "FIREWORKS_*",
    "PERPLEXITY_*",
    "AZURE_OPENAI_*",
    "PYDANTIC_AI_GATEWAY_*",
];

/// Compiled deny patterns.
#[derive(Debug)]
pub(crate) struct DenyPatterns {
    /// The patterns of literal ASCII text and single `*`s, as lowercase pieces.
    simple: Vec<Wildcard>,
    /// The other patterns, when there are any.
    other: Option<GlobSet>,
    /// Every pattern, built the first time a name that is not ASCII is checked.
    all: OnceCell<GlobSet>,
    patterns: Vec<String>,
}

impl DenyPatterns {
    /// Compile `patterns`; an empty or malformed one is an error that names it. A pattern
    /// of text and single `*`s cannot be malformed, so only the others are built as globs
    /// here (building each costs a few microseconds, and a run checks two dozen).
    pub(crate) fn new(patterns: &[String]) -> Result<Self> {
        let mut simple = Vec::new();
        let mut other = GlobSetBuilder::new();
        let mut has_other = false;
        for pattern in patterns {
            if pattern.is_empty() {
                return Err(Error::invalid(
                    "an empty environment deny pattern matches nothing: remove it or write a glob such as `*TOKEN*`",
                ));
            }
            match Wildcard::parse(pattern) {
                Some(w) => simple.push(w),
                None => {
                    other.add(glob(pattern)?);
                    has_other = true;
                }
            }
        }
        let other = if has_other { Some(set(other)?) } else { None };
        Ok(Self {
            simple,
            other,
            all: OnceCell::new(),
            patterns: patterns.to_vec(),
        })
    }

    /// Whether `name` matches any pattern.
    pub(crate) fn is_match(&self, name: &str) -> bool {
        if !name.is_ascii() {
            return self.all().is_some_and(|all| all.is_match(name));
        }
        let lower = name.to_ascii_lowercase();
        self.simple.iter().any(|w| w.matches(&lower))
            || self.other.as_ref().is_some_and(|o| o.is_match(name))
    }

    fn all(&self) -> Option<&GlobSet> {
        if self.all.get().is_none() {
            let mut builder = GlobSetBuilder::new();
            for pattern in &self.patterns {
                // Each was built, or is of a form that always builds, in `new`.
                builder.add(glob(pattern).ok()?);
            }
            let _ = self.all.set(set(builder).ok()?);
        }
        self.all.get()
    }
}

/// `pattern` as `globset` reads it, case-insensitive.
fn glob(pattern: &str) -> Result<Glob> {
    GlobBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .map_err(|e| {
            Error::invalid(format!(
                "environment deny pattern `{pattern}` is not a valid glob: {e}"
            ))
        })
}

fn set(builder: GlobSetBuilder) -> Result<GlobSet> {
    builder
        .build()
        .map_err(|e| Error::invalid(format!("environment deny patterns: {e}")))
}

/// A pattern of ASCII text and single `*`s: the pieces between the stars, lowercase. A
/// leading or trailing `*` leaves an empty first or last piece, which matches anywhere.
#[derive(Debug)]
struct Wildcard {
    pieces: Vec<String>,
}

impl Wildcard {
    /// `None` for a pattern with anything `globset` gives meaning to beyond a single `*`.
    fn parse(pattern: &str) -> Option<Self> {
        let plain = pattern.is_ascii()
            && !pattern.contains("**")
            && !pattern.contains(['?', '[', ']', '{', '}', '\\']);
        plain.then(|| Self {
            pieces: pattern
                .to_ascii_lowercase()
                .split('*')
                .map(str::to_owned)
                .collect(),
        })
    }

    /// Whether `name` (lowercase ASCII) matches: the first piece a prefix, the last a
    /// suffix, the ones between found in order, none overlapping.
    fn matches(&self, name: &str) -> bool {
        let Some((first, rest)) = self.pieces.split_first() else {
            return false;
        };
        if rest.is_empty() {
            return name == first;
        }
        let Some(mut left) = name.strip_prefix(first.as_str()) else {
            return false;
        };
        let (middle, last) = rest.split_at(rest.len() - 1);
        let last = &last[0];
        for piece in middle {
            match left.find(piece.as_str()) {
                Some(at) => left = &left[at + piece.len()..],
                None => return false,
            }
        }
        left.ends_with(last.as_str())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn globset(patterns: &[String]) -> GlobSet {
        let mut b = GlobSetBuilder::new();
        for p in patterns {
            b.add(GlobBuilder::new(p).case_insensitive(true).build().unwrap());
        }
        b.build().unwrap()
    }

    #[test]
    fn the_default_patterns_match_as_globset_does() {
        let patterns: Vec<String> = DEFAULT_DENIED.iter().map(|s| s.to_string()).collect();
        let ours = DenyPatterns::new(&patterns).unwrap();
        let theirs = globset(&patterns);
        for name in [
            "PATH",
            "HOME",
            "GITHUB_TOKEN",
            "github_token",
            "MY_SECRET_THING",
            "OPENAI_API_KEY",
            "openai_",
            "KEYS",
            "MONKEY",
            "AZURE_OPENAI_ENDPOINT",
            "SSH_AUTH_SOCK",
            "TOKE",
            "PATH",
            "PWD",
            "OLDPWD",
            "GIT_AUTHOR_NAME",
            "XAUTHORITY",
            "DB_PASS",
            "MYSQL_PWD",
            "GITHUB_PAT",
            "NPM_CONFIG__AUTH",
            "DOCKER_AUTH_CONFIG",
            "CI_JOB_JWT",
            "OP_SESSION_my",
            "SLACK_WEBHOOK_URL",
            "SENTRY_DSN",
            "PASSTHROUGH",
            "XAI",
            "\u{212A}EYRING",
            "MY_\u{212A}EY",
        ] {
            assert_eq!(ours.is_match(name), theirs.is_match(name), "{name}");
        }
    }

    #[test]
    fn the_defaults_take_credentials_and_leave_what_programs_need() {
        let patterns: Vec<String> = DEFAULT_DENIED.iter().map(|s| s.to_string()).collect();
        let deny = DenyPatterns::new(&patterns).unwrap();
        for name in [
            "GITHUB_PAT",
            "AZURE_DEVOPS_PAT_TOKEN",
            "DB_PASS",
            "MYSQL_PWD",
            "PGPASSWORD",
            "NPM_CONFIG__AUTH",
            "DOCKER_AUTH_CONFIG",
            "HTTP_AUTHORIZATION",
            "CI_JOB_JWT",
            "OP_SESSION_my",
            "SLACK_WEBHOOK_URL",
            "SENTRY_DSN",
            "SESSION_COOKIE",
            "GPG_PASSPHRASE",
        ] {
            assert!(deny.is_match(name), "{name} is passed on");
        }
        for name in [
            "PATH",
            "PWD",
            "OLDPWD",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "XAUTHORITY",
            "SSH_AUTH_SOCK",
            "HOME",
            "LANG",
            "PAGER",
        ] {
            assert!(!deny.is_match(name), "{name} is taken");
        }
    }

    #[test]
    fn a_pattern_with_a_class_or_a_question_mark_still_works() {
        let patterns = vec!["AWS_[AS]*".to_string(), "DB?PASS".to_string()];
        let ours = DenyPatterns::new(&patterns).unwrap();
        assert!(ours.is_match("aws_secret"));
        assert!(ours.is_match("DB_PASS"));
        assert!(!ours.is_match("AWS_REGION"));
    }

    #[test]
    fn an_empty_or_malformed_pattern_is_named() {
        let err = DenyPatterns::new(&[String::new()]).unwrap_err();
        assert!(err.to_string().contains("empty"), "{err}");
        let err = DenyPatterns::new(&["A[".to_string()]).unwrap_err();
        assert!(err.to_string().contains("`A[`"), "{err}");
    }

    proptest! {
        #[test]
        fn text_and_stars_match_as_globset_does(
            pattern in "[A-Za-z_*]{0,8}",
            name in "[A-Za-z_]{0,10}",
        ) {
            prop_assume!(!pattern.is_empty() && !pattern.contains("**"));
            let patterns = vec![pattern];
            let ours = DenyPatterns::new(&patterns).unwrap();
            prop_assert_eq!(ours.is_match(&name), globset(&patterns).is_match(&name));
        }
    }
}
