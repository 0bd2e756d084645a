//! Requests as a caller sends them: validated, never trusted.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::os_text::OsText;

/// Run one program with its arguments. No shell is involved: `;`, `&&`, `$( )`, a
/// backtick, `|` and `>` are ordinary bytes of whichever argument holds them.
///
/// Arguments, the working directory and environment values are [`OsText`]: bytes, passed
/// to the program unchanged whether or not they are UTF-8 (give an `OsString` or a
/// `Vec<u8>`); in JSON each is a string.
///
/// ```
/// # use corral::ExecRequest;
/// // One argument with an odd name; not two commands.
/// let req = ExecRequest::new(["rustc", "a;b && c $(id).rs"]).timeout(std::time::Duration::from_secs(3));
/// assert_eq!(req.argv.len(), 2);
///
/// // A file name that is not UTF-8 reaches the program as the same bytes.
/// use std::os::unix::ffi::OsStringExt;
/// let name = std::ffi::OsString::from_vec(b"caf\xe9.txt".to_vec());
/// let req = ExecRequest::new([std::ffi::OsString::from("cat"), name]);
/// assert_eq!(req.argv[1].escaped(), "caf\\xe9.txt");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecRequest {
    /// Program, then arguments.
    pub argv: Vec<OsText>,
    /// Relative to the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<OsText>,
    /// Extra environment (not PATH, LD_*, DYLD_*).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, OsText>,
    /// Time limit: 30s, 2m (default 15m).
    #[serde(
        default,
        with = "humantime_serde::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub timeout: Option<Duration>,
    /// After this many ms, return a handle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yield_ms: Option<u64>,
}

impl ExecRequest {
    /// A request for `argv`, with every option at its default.
    pub fn new<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsText>,
    {
        Self {
            argv: argv.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// Run in `dir`, relative to the workspace root.
    pub fn cwd(mut self, dir: impl Into<OsText>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Set one environment variable for this call.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<OsText>) -> Self {
        self.env.insert(name.into(), value.into());
        self
    }

    /// Become a background handle if still running after `ms` milliseconds.
    pub fn yield_after(mut self, ms: u64) -> Self {
        self.yield_ms = Some(ms);
        self
    }

    /// Limit this call to `timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Check the parts that need no file system: a program is named, no argument holds a
    /// NUL byte, the timeout is positive.
    pub(crate) fn validate(&self) -> Result<()> {
        let Some(program) = self.argv.first() else {
            return Err(Error::invalid(
                "argv is empty: name the program to run as its first element, e.g. [\"ls\", \"-l\"]",
            ));
        };
        if program.as_os_str().is_empty() {
            return Err(Error::invalid("argv[0] is empty: name the program to run"));
        }
        if let Some(i) = self.argv.iter().position(|a| a.contains_byte(0)) {
            return Err(Error::invalid(format!(
                "argv[{i}] contains a NUL byte, which no program can receive: remove it"
            )));
        }
        if self.timeout == Some(Duration::ZERO) {
            return Err(Error::invalid(
                "timeout must be greater than zero, e.g. 500ms, 3s or 2m",
            ));
        }
        Ok(())
    }
}

/// Parse a duration as a person writes it: `500ms`, `3s`, `2m`, `1h30m`.
pub fn parse_duration(text: &str) -> Result<Duration> {
    let d = humantime::parse_duration(text.trim()).map_err(|e| {
        Error::invalid(format!(
            "malformed duration {text:?} ({e}): write a number with a unit, e.g. 500ms, 3s, 2m or 1h"
        ))
    })?;
    if d.is_zero() {
        return Err(Error::invalid(format!(
            "duration {text:?} is zero: a timeout must be greater than zero, e.g. 500ms or 3s"
        )));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_the_units_people_write() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("3s").unwrap(), Duration::from_secs(3));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        for bad in ["", "3", "three seconds", "3x", "0s", "-1s"] {
            let err = parse_duration(bad).unwrap_err();
            assert!(err.to_string().contains("e.g."), "{bad:?}: {err}");
        }
    }

    #[test]
    fn empty_and_nul_argv_are_refused_with_a_fix() {
        assert!(
            ExecRequest::new(Vec::<String>::new())
                .validate()
                .unwrap_err()
                .to_string()
                .contains("first element")
        );
        assert!(
            ExecRequest::new(["a\0b"])
                .validate()
                .unwrap_err()
                .to_string()
                .contains("NUL")
        );
    }
}
