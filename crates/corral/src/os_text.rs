//! Arguments, paths and environment values as the kernel holds them: bytes.
//!
//! On Linux an argument, a file name or an environment value is any run of bytes without
//! a NUL. Most are UTF-8; some are not (a file name from an old archive, a value in
//! Latin-1). [`OsText`] holds the bytes unchanged, so they reach the program as given.
//! Where text is needed, one of two forms is used:
//!
//! - **Escaped** ([`OsText::escaped`]): text that is UTF-8 is itself. Otherwise each byte
//!   that is not part of valid UTF-8 is written `\xHH` (two lowercase hex digits) and each
//!   backslash is doubled, so `a\xffb` is the bytes `a`, 0xff, `b`, and `\xfe\\xff` is
//!   the byte 0xfe followed by the four characters `\xff`. The trace, error messages and
//!   JSON show this form. (A UTF-8 argument that itself holds `\xff` reads the same: only
//!   values that are not UTF-8 are ever escaped.)
//! - **Lossy** ([`OsText::lossy`]): each invalid sequence becomes U+FFFD, as most tools
//!   print it.
//!
//! The policy checks a command with bytes that are not UTF-8 in both forms and keeps the
//! stricter verdict, so a rule that would refuse either form refuses the bytes; the
//! program's identity checks use the file the bytes name.
//!
//! In JSON an [`OsText`] is a string: written in the escaped form, read as the string's
//! own characters (so JSON, and MCP, can only give UTF-8; give bytes through the library).

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Bytes as an argument, path or environment value holds them; see the module docs.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OsText(OsString);

impl OsText {
    /// The bytes.
    pub fn as_os_str(&self) -> &OsStr {
        &self.0
    }

    /// The bytes, as a path.
    pub fn as_path(&self) -> &Path {
        Path::new(&self.0)
    }

    /// The text, when the bytes are UTF-8.
    pub fn to_str(&self) -> Option<&str> {
        self.0.to_str()
    }

    /// Whether the bytes are UTF-8.
    pub fn is_utf8(&self) -> bool {
        self.0.to_str().is_some()
    }

    /// The escaped form: itself when UTF-8, else `\xHH` for each invalid byte and `\\` for
    /// each backslash.
    pub fn escaped(&self) -> Cow<'_, str> {
        escape(&self.0)
    }

    /// The lossy form: U+FFFD for each invalid sequence.
    pub fn lossy(&self) -> Cow<'_, str> {
        self.0.to_string_lossy()
    }

    /// Whether the bytes hold `byte` (a NUL, a `/`).
    pub(crate) fn contains_byte(&self, byte: u8) -> bool {
        self.0.as_bytes().contains(&byte)
    }

    /// The bytes, taken out.
    pub fn into_os_string(self) -> OsString {
        self.0
    }
}

/// The escaped form of `bytes`; see the module docs.
pub fn escape(bytes: &OsStr) -> Cow<'_, str> {
    if let Some(text) = bytes.to_str() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.as_bytes().utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\\' {
                out.push_str("\\\\");
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    Cow::Owned(out)
}

/// The escaped form of a path; see the module docs.
pub fn escape_path(path: &Path) -> Cow<'_, str> {
    escape(path.as_os_str())
}

impl fmt::Display for OsText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.escaped())
    }
}

impl From<&str> for OsText {
    fn from(s: &str) -> Self {
        Self(s.into())
    }
}

impl From<String> for OsText {
    fn from(s: String) -> Self {
        Self(s.into())
    }
}

impl From<&String> for OsText {
    fn from(s: &String) -> Self {
        Self(s.into())
    }
}

impl From<OsString> for OsText {
    fn from(s: OsString) -> Self {
        Self(s)
    }
}

impl From<&OsStr> for OsText {
    fn from(s: &OsStr) -> Self {
        Self(s.to_owned())
    }
}

impl From<PathBuf> for OsText {
    fn from(p: PathBuf) -> Self {
        Self(p.into_os_string())
    }
}

impl From<&Path> for OsText {
    fn from(p: &Path) -> Self {
        Self(p.as_os_str().to_owned())
    }
}

impl From<Vec<u8>> for OsText {
    fn from(bytes: Vec<u8>) -> Self {
        Self(OsString::from_vec(bytes))
    }
}

impl From<&[u8]> for OsText {
    fn from(bytes: &[u8]) -> Self {
        Self(OsStr::from_bytes(bytes).to_owned())
    }
}

impl AsRef<OsStr> for OsText {
    fn as_ref(&self) -> &OsStr {
        &self.0
    }
}

impl PartialEq<str> for OsText {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for OsText {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl Serialize for OsText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.escaped())
    }
}

impl<'de> Deserialize<'de> for OsText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Self::from)
    }
}

impl schemars::JsonSchema for OsText {
    fn schema_name() -> Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }

    fn inline_schema() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_bytes_are_hex_and_backslashes_doubled_only_when_not_utf8() {
        assert_eq!(OsText::from("a\\xffb").escaped(), "a\\xffb");
        assert_eq!(OsText::from(b"a\xffb".as_slice()).escaped(), "a\\xffb");
        assert_eq!(OsText::from(b"a\\\xff".as_slice()).escaped(), "a\\\\\\xff");
        assert_eq!(OsText::from(b"\xe2\x82".as_slice()).escaped(), "\\xe2\\x82");
        assert_eq!(
            OsText::from(b"\xff\xc3\xa9".as_slice()).escaped(),
            "\\xff\u{e9}"
        );
        assert_eq!(OsText::from(b"a\xffb".as_slice()).lossy(), "a\u{fffd}b");
    }

    #[test]
    fn json_is_a_string_both_ways() {
        let t = OsText::from(b"x\xff".as_slice());
        assert_eq!(serde_json::to_string(&t).unwrap(), r#""x\\xff""#);
        let back: OsText = serde_json::from_str(r#""x\\xff""#).unwrap();
        assert_eq!(back, "x\\xff");
    }
}
