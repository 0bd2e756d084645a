//! The network allow-list: which names the sandbox's proxy lets a command reach.
//!
//! An entry is a host name (`registry.npmjs.org`), a wildcard for the names beneath a
//! domain (`*.npmjs.org`: `a.npmjs.org`, `a.b.npmjs.org`, not `npmjs.org` itself), an IP
//! address (the only way an address is ever allowed), or a preset ([`PRESETS`]). A
//! request matches on the host it names, lowercased and without a trailing dot; nothing
//! is looked up in reverse.

use std::net::IpAddr;

/// The package registries' names, by preset.
pub const PRESETS: &[(&str, &[&str])] = &[
    ("npm", &["registry.npmjs.org"]),
    ("pypi", &["pypi.org", "files.pythonhosted.org"]),
    (
        "crates",
        &["crates.io", "index.crates.io", "static.crates.io"],
    ),
    ("go", &["proxy.golang.org", "sum.golang.org"]),
    (
        "github",
        &[
            "github.com",
            "api.github.com",
            "codeload.github.com",
            "objects.githubusercontent.com",
            "raw.githubusercontent.com",
        ],
    ),
];

/// What `--network allow=` takes to open `host`: the preset that lists it (`npm` for
/// `registry.npmjs.org`), else the host itself.
pub fn allow_word(host: &str) -> String {
    let host = normalize_host(host);
    PRESETS
        .iter()
        .find(|(_, names)| names.contains(&host.as_str()))
        .map(|(preset, _)| preset.to_string())
        .unwrap_or(host)
}

/// The names a proxy allows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    names: Vec<String>,
}

/// A host as requested, made comparable: lowercase, no trailing dot, no IPv6 brackets.
pub fn normalize_host(host: &str) -> String {
    let h = host.trim().trim_end_matches('.').to_ascii_lowercase();
    h.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .map(str::to_string)
        .unwrap_or(h)
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

impl AllowList {
    /// Parse entries (names, wildcards, addresses, presets). Errors say what to write
    /// instead.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<AllowList, String> {
        let mut list = AllowList::default();
        for entry in entries {
            list.add_entry(entry.as_ref())?;
        }
        Ok(list)
    }

    /// Add one entry (see [`AllowList::parse`]).
    pub fn add_entry(&mut self, entry: &str) -> Result<(), String> {
        let entry = entry.trim();
        if let Some((_, names)) = PRESETS.iter().find(|(p, _)| *p == entry) {
            for n in *names {
                self.push(n.to_string());
            }
            return Ok(());
        }
        let name = normalize_host(entry);
        if name.parse::<IpAddr>().is_ok() {
            self.push(name);
            return Ok(());
        }
        let presets: Vec<&str> = PRESETS.iter().map(|(p, _)| *p).collect();
        let bare = name.strip_prefix("*.").unwrap_or(&name);
        if !valid_name(bare) {
            return Err(format!(
                "network allow {entry:?}: not a host name; give a name (registry.npmjs.org), \
                 a wildcard for the names beneath a domain (*.npmjs.org), an IP address, or a \
                 preset ({})",
                presets.join(", ")
            ));
        }
        if name.starts_with("*.") && !bare.contains('.') {
            return Err(format!(
                "network allow {entry:?}: a wildcard over a whole top-level domain allows too \
                 much; name the domain (*.example.{bare})"
            ));
        }
        self.push(name);
        Ok(())
    }

    fn push(&mut self, name: String) {
        if !self.names.contains(&name) {
            self.names.push(name);
        }
    }

    /// Whether `host` (as requested) is allowed.
    pub fn allows(&self, host: &str) -> bool {
        let host = normalize_host(host);
        let literal = host.parse::<IpAddr>().is_ok();
        self.names.iter().any(|n| match n.strip_prefix("*.") {
            Some(suffix) if !literal => {
                host.len() > suffix.len() + 1
                    && host.ends_with(suffix)
                    && host.as_bytes()[host.len() - suffix.len() - 1] == b'.'
            }
            Some(_) => false,
            None => *n == host,
        })
    }

    /// The names, presets expanded, in the order given.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_wildcards_and_presets() {
        let list = AllowList::parse(&["npm", "*.example.org", "Api.Test."]).unwrap();
        assert!(list.allows("registry.npmjs.org"));
        assert!(list.allows("REGISTRY.npmjs.org."));
        assert!(!list.allows("npmjs.org"));
        assert!(list.allows("a.example.org") && list.allows("a.b.example.org"));
        assert!(!list.allows("example.org") && !list.allows("badexample.org"));
        assert!(list.allows("api.test"));
        assert!(!list.allows("evil.com"));
    }

    #[test]
    fn addresses_only_when_listed() {
        let list = AllowList::parse(&["*.example.org", "10.0.0.1", "[::1]"]).unwrap();
        assert!(!list.allows("127.0.0.1"));
        assert!(list.allows("10.0.0.1"));
        assert!(list.allows("[::1]") && list.allows("::1"));
        assert!(
            !AllowList::parse(&["*.example.org"])
                .unwrap()
                .allows("1.2.3.4")
        );
    }

    #[test]
    fn bad_entries_say_what_to_write() {
        for bad in ["*", "*.com", "exa mple.org", "", "http://x.org"] {
            let e = AllowList::parse(&[bad]).unwrap_err();
            assert!(e.contains("network allow"), "{bad}: {e}");
        }
    }
}
