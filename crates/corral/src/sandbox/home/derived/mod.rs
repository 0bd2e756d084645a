//! The person's configuration as the box gets it: derived copies that keep what builds
//! read and drop what authenticates.
//!
//! The box's home is a directory of the run's own (`super::home`), and the toolchains are
//! put back into it read-only by role: their install (binaries, libraries, the package
//! cache they read), never their user configuration. The configuration files are the rows
//! of [`CONFIGS`], each with what becomes of it:
//!
//! - [`Fate::Derived`]: read with the one parser of its format, filtered, and written into
//!   the box's home at its path at the run's open (`~/.gitconfig` keeps `user.*`, not
//!   `credential.*`). A file that does not parse is not put back, and the report says so;
//!   it is never put back whole.
//! - [`Fate::Withheld`]: not put back at all: a credential store, a script a tool runs
//!   with the person's secrets, or a format corral does not read.
//!
//! The rows are data in one place: each is a file a toolchain's documentation names as
//! its user configuration or its credential store, and each has a test. A directory put
//! back that holds a row is put back without it ([`is_row`], `super::home::put_back`).

mod git;
mod lines;
mod toml_files;

use std::path::Path;

/// Why a file could not be derived.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum DeriveError {
    /// It does not parse as its format.
    #[error("line {line}: {what}")]
    Parse { line: usize, what: String },
    /// It could not be read.
    #[error("{0}")]
    Read(String),
}

/// The formats corral reads, one parser each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// git's configuration (`git config`'s INI dialect, its includes inlined).
    GitConfig,
    /// TOML (cargo, uv, rye).
    Toml,
    /// INI (`pip.conf`, `.npmrc`).
    Ini,
    /// Java properties (`gradle.properties`).
    Properties,
    /// cabal's `field: value` configuration.
    Cabal,
}

/// What becomes of a configuration file in the box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// A derived copy, by its format's parser.
    Derived(Format),
    /// Not put back; the reason, reported where it may matter to a build.
    Withheld(&'static str),
}

/// A configuration file (or directory) of the home: its path below the home, and its fate.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Config {
    pub path: &'static str,
    pub fate: Fate,
}

const fn derived(path: &'static str, format: Format) -> Config {
    Config {
        path,
        fate: Fate::Derived(format),
    }
}

const fn withheld(path: &'static str, why: &'static str) -> Config {
    Config {
        path,
        fate: Fate::Withheld(why),
    }
}

const CREDENTIALS: &str = "a credential store";
const NO_XML: &str = "XML, which corral does not read: put back whole it would bring its \
    passwords (a build that needs its mirrors names them in the project)";
const NO_YAML: &str = "YAML, which corral does not read";
const SCRIPTS: &str = "scripts Gradle runs with the person's credentials";

/// The user configuration and credential stores of the toolchains `super::home` puts
/// back, from each tool's documentation of where it keeps them.
pub(crate) const CONFIGS: &[Config] = &[
    derived(".gitconfig", Format::GitConfig),
    derived(".config/git/config", Format::GitConfig),
    withheld(".config/git/credentials", CREDENTIALS),
    derived(".cargo/config.toml", Format::Toml),
    derived(".cargo/config", Format::Toml),
    withheld(".cargo/credentials.toml", CREDENTIALS),
    withheld(".cargo/credentials", CREDENTIALS),
    derived(".npmrc", Format::Ini),
    derived(".config/pip/pip.conf", Format::Ini),
    derived(".pip/pip.conf", Format::Ini),
    derived(".config/uv/uv.toml", Format::Toml),
    withheld(".local/share/uv/credentials", CREDENTIALS),
    derived(".gradle/gradle.properties", Format::Properties),
    withheld(".gradle/init.gradle", SCRIPTS),
    withheld(".gradle/init.gradle.kts", SCRIPTS),
    withheld(".gradle/init.d", SCRIPTS),
    withheld(".m2/settings.xml", NO_XML),
    withheld(".m2/settings-security.xml", CREDENTIALS),
    withheld(".nuget/NuGet/NuGet.Config", NO_XML),
    derived(".cabal/config", Format::Cabal),
    withheld(".stack/config.yaml", NO_YAML),
    withheld(".stack/upload", CREDENTIALS),
    derived(".rye/config.toml", Format::Toml),
    withheld(".rye/credentials", CREDENTIALS),
    withheld(".julia/servers", CREDENTIALS),
    withheld(".pub-cache/credentials.json", CREDENTIALS),
];

/// Whether `rel` (a path below the home) is a row of [`CONFIGS`].
pub(crate) fn is_row(rel: &Path) -> bool {
    CONFIGS.iter().any(|c| Path::new(c.path) == rel)
}

/// Whether a row of [`CONFIGS`] lies strictly below `rel`.
pub(crate) fn holds_row(rel: &Path) -> bool {
    CONFIGS
        .iter()
        .any(|c| Path::new(c.path).starts_with(rel) && Path::new(c.path) != rel)
}

/// What was made of the home's configuration for the box.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Derived {
    /// The derived copies, by their path below the home.
    pub written: Vec<String>,
    /// Files that did not parse (not put back): path below the home, and why.
    pub unparsed: Vec<(String, String)>,
    /// Files not put back that a build may miss (not the credential stores): path, why.
    pub withheld: Vec<(String, &'static str)>,
    /// Includes left out (a loop, outside the home, unreadable): the include, and why.
    pub includes_left: Vec<String>,
}

/// Read the configuration of `home` and write its derived copies into `into` (the box's
/// home as the host keeps it); with no `into`, only say what would be made.
pub(crate) fn write(home: &Path, into: Option<&Path>) -> Derived {
    let mut out = Derived::default();
    for config in CONFIGS {
        let from = home.join(config.path);
        if std::fs::symlink_metadata(&from).is_err() {
            continue;
        }
        let format = match config.fate {
            Fate::Derived(format) => format,
            Fate::Withheld(why) => {
                if why != CREDENTIALS {
                    out.withheld.push((config.path.to_string(), why));
                }
                continue;
            }
        };
        match derive(format, &from, home, into) {
            Ok((text, left)) => {
                out.includes_left.extend(left);
                let made = into.map_or(Ok(()), |into| {
                    let to = into.join(config.path);
                    to.parent()
                        .map_or(Ok(()), std::fs::create_dir_all)
                        .and_then(|()| std::fs::write(&to, text))
                });
                match made {
                    Ok(()) => out.written.push(config.path.to_string()),
                    Err(e) => out.unparsed.push((config.path.to_string(), e.to_string())),
                }
            }
            Err(e) => out.unparsed.push((config.path.to_string(), e.to_string())),
        }
    }
    out
}

impl Derived {
    /// What the box gets, in a line: the copies, and what a build may miss.
    pub(crate) fn line(&self) -> String {
        let tilde = |p: &str| format!("~/{p}");
        let mut parts = Vec::new();
        if !self.written.is_empty() {
            let names: Vec<String> = self.written.iter().map(|p| tilde(p)).collect();
            parts.push(format!(
                "configuration as derived copies without credentials: {}",
                names.join(", ")
            ));
        }
        for (path, why) in &self.unparsed {
            parts.push(format!(
                "{} not put back: it does not parse ({why})",
                tilde(path)
            ));
        }
        for (path, why) in &self.withheld {
            parts.push(format!("{} not put back: {why}", tilde(path)));
        }
        for include in &self.includes_left {
            parts.push(format!("git include {include} left out"));
        }
        parts.join("; ")
    }
}

/// The largest configuration file read.
const MOST_BYTES: u64 = 1 << 20;

/// Read `path` as text, up to [`MOST_BYTES`].
pub(crate) fn read(path: &Path) -> Result<String, DeriveError> {
    let meta = std::fs::metadata(path).map_err(|e| DeriveError::Read(e.to_string()))?;
    if !meta.is_file() || meta.len() > MOST_BYTES {
        return Err(DeriveError::Read(format!(
            "not a file of at most {MOST_BYTES} bytes"
        )));
    }
    std::fs::read_to_string(path).map_err(|e| DeriveError::Read(e.to_string()))
}

/// The derived text of `from` in `format`, and the includes left out.
fn derive(
    format: Format,
    from: &Path,
    home: &Path,
    into: Option<&Path>,
) -> Result<(String, Vec<String>), DeriveError> {
    let text = read(from)?;
    match format {
        Format::GitConfig => git::derive(from, &text, home, into),
        Format::Toml => toml_files::derive(&text).map(|t| (t, Vec::new())),
        Format::Ini => lines::ini(&text).map(|t| (t, Vec::new())),
        Format::Properties => lines::properties(&text).map(|t| (t, Vec::new())),
        Format::Cabal => lines::cabal(&text).map(|t| (t, Vec::new())),
    }
}

/// Whether a key's name says it holds a secret, in any format: the last part of a
/// dotted, scoped or sectioned name, case folded, holds one of these words. A credential
/// under a key no parser knows by name still goes when its name says what it is.
pub(crate) fn secret_name(name: &str) -> bool {
    const WORDS: &[&str] = &[
        "token",
        "password",
        "passwd",
        "secret",
        "credential",
        "_auth",
        "apikey",
        "api_key",
        "api-key",
        "extraheader",
        "username",
        "privatekey",
        "private-key",
        "private_key",
        "cookie",
    ];
    let name = name.to_ascii_lowercase();
    name == "auth" || name == "pass" || WORDS.iter().any(|w| name.contains(w))
}

/// Whether `text` holds a URL with a userinfo (`https://user:token@host`), the way a
/// credential rides in an index or a remote.
pub(crate) fn has_userinfo(text: &str) -> bool {
    text.match_indices("://").any(|(at, _)| {
        let rest = &text[at + 3..];
        let authority = rest
            .split(|c: char| c == '/' || c == '?' || c == '#' || c.is_whitespace() || c == '"')
            .next()
            .unwrap_or("");
        authority.contains('@')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_below_the_home_and_once() {
        for (n, c) in CONFIGS.iter().enumerate() {
            assert!(
                !c.path.starts_with('/') && !c.path.contains(".."),
                "{}",
                c.path
            );
            assert!(
                !CONFIGS[..n].iter().any(|o| o.path == c.path),
                "{} twice",
                c.path
            );
        }
    }

    #[test]
    fn secret_names_and_userinfo_are_known() {
        for name in [
            "_authToken",
            "//registry.npmjs.org/:_authToken",
            "_auth",
            "_password",
            "password",
            "systemProp.http.proxyPassword",
            "token",
            "signing.secretKeyRingFile",
            "extraHeader",
            "username",
        ] {
            assert!(secret_name(name), "{name}");
        }
        for name in [
            "name",
            "email",
            "target-dir",
            "registry",
            "jvmargs",
            "author",
        ] {
            assert!(!secret_name(name), "{name}");
        }
        assert!(has_userinfo("https://me:tok@example.com/simple"));
        assert!(has_userinfo("https://tok@github.com/"));
        assert!(!has_userinfo("https://pypi.org/simple?a=b@c"));
        assert!(!has_userinfo("git@github.com:me/x"));
    }

    #[test]
    fn each_file_is_derived_or_withheld_and_a_bad_one_is_not_put_back() {
        let home = tempfile::tempdir().unwrap();
        let into = tempfile::tempdir().unwrap();
        let h = home.path();
        std::fs::create_dir_all(h.join(".cargo")).unwrap();
        std::fs::write(
            h.join(".cargo/config.toml"),
            "[build]\ntarget-dir = \"/tmp/t\"\n[registry]\ntoken = \"CARGO-SECRET\"\n",
        )
        .unwrap();
        std::fs::write(h.join(".cargo/credentials.toml"), "token = \"X\"\n").unwrap();
        std::fs::create_dir_all(h.join(".m2")).unwrap();
        std::fs::write(h.join(".m2/settings.xml"), "<settings/>").unwrap();
        std::fs::write(h.join(".npmrc"), "= = =\n[unclosed\n").unwrap();
        let d = write(h, Some(into.path()));
        assert_eq!(d.written, [".cargo/config.toml"]);
        let text = std::fs::read_to_string(into.path().join(".cargo/config.toml")).unwrap();
        assert!(
            text.contains("target-dir") && !text.contains("SECRET"),
            "{text}"
        );
        assert!(!into.path().join(".cargo/credentials.toml").exists());
        assert!(!into.path().join(".npmrc").exists());
        assert_eq!(d.unparsed.len(), 1, "{d:?}");
        assert_eq!(d.withheld, [(".m2/settings.xml".to_string(), NO_XML)]);
    }
}
