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
    /// In the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<OsText>,
    /// Extra variables (not PATH, LD_*).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, OsText>,
    /// 30s, 2m (default 15m).
    #[serde(
        default,
        with = "crate::request::timeout_arg",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub timeout: Option<Duration>,
    /// After this many ms, return a handle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yield_ms: Option<u64>,
    /// Bytes of output text the result shows (default: the run's
    /// [`Config::output_budget`](crate::Config), 12 KiB), from 1024 to 65536.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output: Option<usize>,
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

    /// Show at most `bytes` of output text in the result: from 1024 to 65536, else the call
    /// is refused with what to ask for instead.
    pub fn max_output(mut self, bytes: usize) -> Self {
        self.max_output = Some(bytes);
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
        check_max_output(self.max_output)
    }
}

/// The most text one observation shows the model: its streams, split between them and
/// kept head and tail, and the frame around them (status, sandbox line, labels).
///
/// 12 KiB: the lines of the omitted middle that say why a command failed are shown
/// beside it (see `capture::failures`), so head and tail need only show how the output
/// starts and ends. `[output] budget` in a configuration file, or a call's `max_output`,
/// sets another, up to [`MAX_OUTPUT_BUDGET`].
pub const DEFAULT_OUTPUT_BUDGET: usize = 12 * 1024;

/// The most output text a call's `max_output` or `[output] budget` may ask for.
pub const MAX_OUTPUT_BUDGET: usize = corral_policy::config::OUTPUT_BUDGET_MAX;

/// The least they may ask for.
pub const MIN_OUTPUT_BUDGET: usize = corral_policy::config::OUTPUT_BUDGET_MIN;

/// A call's `max_output` must be from [`MIN_OUTPUT_BUDGET`] to [`MAX_OUTPUT_BUDGET`]
/// bytes: the error says what to ask for instead.
pub(crate) fn check_max_output(bytes: Option<usize>) -> Result<()> {
    match bytes {
        None => Ok(()),
        Some(n) if (MIN_OUTPUT_BUDGET..=MAX_OUTPUT_BUDGET).contains(&n) => Ok(()),
        Some(0) => Err(Error::invalid(format!(
            "max_output is 0, which would show nothing: leave it out for the default \
             ({DEFAULT_OUTPUT_BUDGET} bytes) or give at least {MIN_OUTPUT_BUDGET}"
        ))),
        Some(n) if n < MIN_OUTPUT_BUDGET => Err(Error::invalid(format!(
            "max_output {n} is too small to show how an output starts and ends: give at least \
             {MIN_OUTPUT_BUDGET}, or leave it out for the default ({DEFAULT_OUTPUT_BUDGET} bytes)"
        ))),
        Some(n) => Err(Error::invalid(format!(
            "max_output {n} is more than one result shows ({MAX_OUTPUT_BUDGET} bytes at most): \
             ask for {MAX_OUTPUT_BUDGET} or less, and read the rest with the output tool \
             (lines, grep) as the result's marker says"
        ))),
    }
}

/// A `timeout` argument: written as [`parse_duration`] reads it, so a model that sends
/// `"abc"` or `"-1s"` is told the form to use (`e.g. 500ms, 3s, 2m`), not only that a
/// string did not parse.
pub(crate) mod timeout_arg {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        humantime_serde::option::serialize(d, s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|text| {
                super::parse_duration(&text)
                    .map_err(|e| serde::de::Error::custom(format!("timeout: {e}")))
            })
            .transpose()
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
    fn a_max_output_out_of_range_says_what_to_ask_for() {
        for (bytes, says) in [
            (0, "leave it out"),
            (100, "at least 1024"),
            (65537, "65536 or less"),
        ] {
            let err = ExecRequest::new(["ls"])
                .max_output(bytes)
                .validate()
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{bytes}: {err}");
        }
        for bytes in [1024, 12 * 1024, 65536] {
            ExecRequest::new(["ls"])
                .max_output(bytes)
                .validate()
                .unwrap();
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
