//! The environment a command sees.
//!
//! Built in four steps, each later one winning (the first three once, when the run
//! opens: a change to corral's own environment after that is not seen by commands):
//! 1. the base: corral's own environment (inherited, names and values as bytes, whether
//!    UTF-8 or not), or an explicit map that replaces it;
//! 2. names matching a denied pattern are removed from the base (a name that is not UTF-8
//!    is matched in its escaped and its lossy form, see [`crate::os_text::OsText`], and removed if
//!    either matches); by default these are names that look like secrets and the model
//!    providers' credentials, because a command the model wrote should not read the
//!    operator's keys unless the configuration says so;
//! 3. non-interactive defaults (`NO_COLOR`, `TERM=dumb`, pagers set to `cat`, a UTF-8
//!    locale), so a program neither colours its output nor waits in a pager;
//! 4. the configuration's own `set` values, then the call's overrides.
//!
//! A call may not override `PATH` or a loader variable (`LD_*`, `DYLD_*`): the first
//! changes which program a checked name runs, the second injects code into any program.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::os_text::{OsText, escape};

mod deny;

pub use deny::DEFAULT_DENIED;
use deny::DenyPatterns;

/// One environment entry as the program receives it: bytes, which need not be UTF-8.
pub(crate) type Var = (OsString, OsString);

/// Set in every command's environment unless `non_interactive` is off.
pub const NON_INTERACTIVE: &[(&str, &str)] = &[
    ("NO_COLOR", "1"),
    ("TERM", "dumb"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GH_PAGER", "cat"),
];

/// What a background handle's environment adds, unless the call set it: output a poll can
/// see as it is printed. Python block-buffers stdout into a pipe, so a server's "Serving on
/// …" line would wait in its buffer; Node, Go, Rust, Java and .NET write through already.
/// A C program's stdio has no such switch (`stdbuf` works through `LD_PRELOAD`, which a
/// call may not set): give it a terminal (`tty: true`), where it buffers by line.
pub const UNBUFFERED: &[(&str, &str)] = &[("PYTHONUNBUFFERED", "1")];

/// Add [`UNBUFFERED`] to `env` where it does not say otherwise.
pub(crate) fn unbuffered(env: &mut Vec<Var>) {
    for (name, value) in UNBUFFERED {
        if !env.iter().any(|(n, _)| n == *name) {
            env.push((name.into(), value.into()));
        }
    }
}

/// How a command's environment is built. See the module docs for the order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EnvPolicy {
    /// Start from corral's own environment. Ignored when `explicit` is set.
    pub inherit: bool,
    /// A complete environment that replaces inheritance (supply `PATH` yourself).
    pub explicit: Option<BTreeMap<String, String>>,
    /// Glob patterns of names removed from the base (case-insensitive).
    pub deny: Vec<String>,
    /// Inject the non-interactive defaults and a UTF-8 locale.
    pub non_interactive: bool,
    /// Values set for every command (after the defaults; may set `PATH`).
    pub set: BTreeMap<String, String>,
}

impl Default for EnvPolicy {
    fn default() -> Self {
        Self {
            inherit: true,
            explicit: None,
            deny: DEFAULT_DENIED.iter().map(|s| s.to_string()).collect(),
            non_interactive: true,
            set: BTreeMap::new(),
        }
    }
}

/// An [`EnvPolicy`] made ready to apply: the base environment is built once, when the
/// run opens, so each call only applies its own overrides.
#[derive(Debug, Clone)]
pub(crate) struct EnvBuilder {
    base: BTreeMap<OsString, OsString>,
}

impl EnvBuilder {
    pub(crate) fn new(policy: &EnvPolicy) -> Result<Self> {
        let deny = DenyPatterns::new(&policy.deny)?;

        let mut base: BTreeMap<OsString, OsString> = match &policy.explicit {
            Some(explicit) => explicit.iter().map(|(k, v)| (k.into(), v.into())).collect(),
            // Names and values that are not UTF-8 are passed on as they are; a name is
            // matched against the deny patterns in both its escaped and its lossy form.
            None if policy.inherit => std::env::vars_os().collect(),
            None => BTreeMap::new(),
        };
        base.retain(|name, value| !denied(&deny, name) && !holds_a_password(value));
        if policy.non_interactive {
            for (name, value) in NON_INTERACTIVE {
                base.insert(name.into(), value.into());
            }
            ensure_utf8_locale(&mut base);
        }
        base.extend(policy.set.iter().map(|(k, v)| (k.into(), v.into())));
        Ok(Self { base })
    }

    /// The environment for one command, given the call's overrides.
    pub(crate) fn build(&self, overrides: &BTreeMap<String, String>) -> Result<Vec<Var>> {
        check_overrides(overrides)?;
        if overrides.is_empty() {
            return Ok(self
                .base
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect());
        }
        let mut env = self.base.clone();
        env.extend(overrides.iter().map(|(k, v)| (k.into(), v.into())));
        Ok(env.into_iter().collect())
    }
}

/// Whether an inherited value is, or holds, an address with a password in it
/// (`postgres://app:pw@db/x`, `http://user:pw@proxy:3128`): whatever its name, it is a
/// secret. A value set by [`EnvPolicy::set`] or by a call (`--env`) is passed as given.
fn holds_a_password(value: &OsStr) -> bool {
    let value = value.as_encoded_bytes();
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(&value[from..], b"://") {
        let rest = &value[from + at + 3..];
        let authority = rest
            .iter()
            .position(|b| matches!(b, b'/' | b'?' | b'#' | b' ' | b',' | b';'))
            .map_or(rest, |end| &rest[..end]);
        if let Some(userinfo_end) = memchr::memrchr(b'@', authority)
            && let Some(colon) = memchr::memchr(b':', &authority[..userinfo_end])
            && colon + 1 < userinfo_end
        {
            return true;
        }
        from += at + 3;
    }
    false
}

/// The `PATH` of an environment built here: where a stage's program is looked up.
/// A `PATH` that is not UTF-8 is searched as its escaped form, and so finds nothing
/// where an entry is not UTF-8.
pub(crate) fn path_of(env: &[Var]) -> Option<std::borrow::Cow<'_, str>> {
    env.iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| escape(v))
}

/// Whether `name` matches a deny pattern in its escaped or its lossy form, so a byte that
/// is not UTF-8 cannot hide a name a pattern would remove. A name that is UTF-8 has one
/// form, matched once.
fn denied(deny: &DenyPatterns, name: &OsStr) -> bool {
    match name.to_str() {
        Some(text) => deny.is_match(text),
        None => deny.is_match(&escape(name)) || deny.is_match(&name.to_string_lossy()),
    }
}

/// A value of [`check_overrides`]: text or bytes.
pub(crate) trait Value {
    /// Whether the value holds a NUL byte.
    fn has_nul(&self) -> bool;
}

impl Value for String {
    fn has_nul(&self) -> bool {
        self.contains('\0')
    }
}

impl Value for OsText {
    fn has_nul(&self) -> bool {
        self.contains_byte(0)
    }
}

/// Refuse the overrides a call may not make, and names no environment can hold.
pub(crate) fn check_overrides<V: Value>(overrides: &BTreeMap<String, V>) -> Result<()> {
    for (name, value) in overrides {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(Error::invalid(format!(
                "environment name {name:?} is not valid: a name is non-empty and has no `=` or NUL byte"
            )));
        }
        if value.has_nul() {
            return Err(Error::invalid(format!(
                "the value of environment variable {name} contains a NUL byte, which no environment can hold"
            )));
        }
        if name == "PATH" {
            return Err(Error::invalid(
                "overriding PATH per call is refused: it changes which program a checked name runs. \
                 Name the program by its absolute path instead, or set PATH in corral's configuration",
            ));
        }
        if name.starts_with("LD_") || name.starts_with("DYLD_") {
            return Err(Error::invalid(format!(
                "overriding the loader variable {name} is refused: it injects code into whatever runs. \
                 Run the program without it, or have the operator configure it"
            )));
        }
    }
    Ok(())
}

/// Make sure the locale is a UTF-8 one, leaving a UTF-8 choice the caller made alone.
fn ensure_utf8_locale(env: &mut BTreeMap<OsString, OsString>) {
    let is_utf8 = |v: &OsString| {
        let v = v.to_string_lossy().to_ascii_lowercase();
        v.contains("utf-8") || v.contains("utf8")
    };
    // LC_ALL overrides the rest, so it decides when it is set.
    if let Some(all) = env.get(OsStr::new("LC_ALL")).filter(|v| !v.is_empty()) {
        if !is_utf8(all) {
            env.insert("LC_ALL".into(), "C.UTF-8".into());
        }
        return;
    }
    if !env.get(OsStr::new("LANG")).is_some_and(is_utf8) {
        env.insert("LANG".into(), "C.UTF-8".into());
    }
    if env.get(OsStr::new("LC_CTYPE")).is_some_and(|v| !is_utf8(v)) {
        env.insert("LC_CTYPE".into(), "C.UTF-8".into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explicit(pairs: &[(&str, &str)]) -> EnvPolicy {
        EnvPolicy {
            explicit: Some(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..EnvPolicy::default()
        }
    }

    #[test]
    fn secrets_are_stripped_case_insensitively() {
        let b = EnvBuilder::new(&explicit(&[
            ("GITHUB_TOKEN", "x"),
            ("openai_api_key", "x"),
            ("ANTHROPIC_BASE_URL", "x"),
            ("HOME", "/root"),
        ]))
        .unwrap();
        let env = b.build(&BTreeMap::new()).unwrap();
        let names: Vec<_> = env.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert!(names.contains(&"HOME"));
        assert!(
            !names
                .iter()
                .any(|n| n.contains("TOKEN") || n.contains("api") || n.contains("ANTHROPIC"))
        );
    }

    #[test]
    fn an_address_with_a_password_is_a_secret_whatever_its_name() {
        for value in [
            "postgres://app:s3cret@db.internal:5432/ledger",
            "http://user:pw@proxy:3128",
            "mysql://root:x@localhost/db?ssl=1",
            "redis://:hunter2@cache:6379",
            "first=https://a.example,second=https://u:p@b.example/x",
        ] {
            assert!(holds_a_password(OsStr::new(value)), "{value}");
        }
        for value in [
            "sqlite:///tmp/x.db",
            "https://example.com/a:b@c",
            "http://proxy:3128",
            "ssh://git@github.com/org/repo.git",
            "https://user@example.com",
            "/usr/local/bin:/usr/bin",
            "user:pw@host",
        ] {
            assert!(!holds_a_password(OsStr::new(value)), "{value}");
        }
    }

    #[test]
    fn call_overrides_win_over_defaults() {
        let b = EnvBuilder::new(&explicit(&[])).unwrap();
        let env = b
            .build(&[("TERM".to_string(), "xterm".to_string())].into())
            .unwrap();
        assert!(env.contains(&("TERM".into(), "xterm".into())));
        assert!(env.contains(&("NO_COLOR".into(), "1".into())));
    }

    #[test]
    fn a_non_utf8_locale_is_replaced() {
        let b = EnvBuilder::new(&explicit(&[("LANG", "C")])).unwrap();
        let env = b.build(&BTreeMap::new()).unwrap();
        assert!(env.contains(&("LANG".into(), "C.UTF-8".into())));
        let b = EnvBuilder::new(&explicit(&[("LANG", "de_DE.UTF-8")])).unwrap();
        assert!(
            b.build(&BTreeMap::new())
                .unwrap()
                .contains(&("LANG".into(), "de_DE.UTF-8".into()))
        );
    }

    #[test]
    fn path_and_loader_overrides_are_refused() {
        for name in [
            "PATH",
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "DYLD_INSERT_LIBRARIES",
        ] {
            let err = check_overrides(&[(name.to_string(), "x".to_string())].into()).unwrap_err();
            assert!(err.to_string().contains(name), "{err}");
        }
    }
}
