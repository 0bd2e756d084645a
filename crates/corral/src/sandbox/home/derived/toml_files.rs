//! TOML configuration (cargo's `config.toml`, uv's `uv.toml`, rye's `config.toml`): the
//! tables as they are, less every key whose name says it is a secret (`token`,
//! `credential-provider`, `password`…), every string with a URL's userinfo, and cargo's
//! `[registry]`/`[registries.*]` credentials by name.

use super::{DeriveError, has_userinfo, secret_name};

/// Keys that authenticate though their names do not say so (cargo's).
const AUTH_KEYS: &[&str] = &["credential-provider", "global-credential-providers"];

/// The derived text of a TOML file.
pub(super) fn derive(text: &str) -> Result<String, DeriveError> {
    let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e
            .span()
            .map_or(0, |s| text[..s.start].matches('\n').count() + 1);
        DeriveError::Parse {
            line,
            what: e.message().to_string(),
        }
    })?;
    filter_table(&mut table);
    toml::to_string(&table).map_err(|e| DeriveError::Parse {
        line: 0,
        what: e.to_string(),
    })
}

fn filter_table(table: &mut toml::Table) {
    table.retain(|key, value| {
        if secret_name(key) || AUTH_KEYS.contains(&key) {
            return false;
        }
        keep(value)
    });
}

/// Filter `value` in place; whether it stays.
fn keep(value: &mut toml::Value) -> bool {
    match value {
        toml::Value::String(s) => !has_userinfo(s),
        toml::Value::Table(t) => {
            filter_table(t);
            true
        }
        toml::Value::Array(items) => {
            items.retain_mut(keep);
            true
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(text: &str) -> String {
        derive(text).unwrap()
    }

    #[test]
    fn build_settings_stay() {
        let t =
            kept("[build]\ntarget-dir = \"/tmp/t\"\njobs = 2\n[net]\ngit-fetch-with-cli = true\n");
        assert!(
            t.contains("target-dir = \"/tmp/t\"") && t.contains("jobs = 2"),
            "{t}"
        );
        assert!(t.contains("git-fetch-with-cli"), "{t}");
    }

    #[test]
    fn cargo_registry_token_goes() {
        let t = kept("[registry]\ndefault = \"x\"\ntoken = \"SECRET\"\n");
        assert!(!t.contains("SECRET") && t.contains("default"), "{t}");
    }

    #[test]
    fn cargo_registries_token_goes() {
        let t = kept("[registries.corp]\nindex = \"https://i/\"\ntoken = \"SECRET\"\n");
        assert!(!t.contains("SECRET") && t.contains("https://i/"), "{t}");
    }

    #[test]
    fn cargo_credential_provider_goes() {
        let t = kept(
            "[registry]\ncredential-provider = \"SECRET-helper\"\n\
             global-credential-providers = [\"SECRET\"]\n\
             [registries.corp]\ncredential-provider = [\"SECRET\"]\n",
        );
        assert!(!t.contains("SECRET"), "{t}");
    }

    #[test]
    fn an_index_with_userinfo_goes() {
        let t = kept(
            "[[index]]\nname = \"corp\"\nurl = \"https://me:SECRET@pypi.corp/simple\"\n\
             [pip]\nextra-index-url = [\"https://SECRET@x/\", \"https://pypi.org/simple\"]\n",
        );
        assert!(!t.contains("SECRET") && t.contains("pypi.org"), "{t}");
    }

    #[test]
    fn rye_source_password_goes() {
        let t = kept(
            "[[sources]]\nname = \"corp\"\nurl = \"https://pypi.corp/\"\n\
             username = \"SECRET-me\"\npassword = \"SECRET\"\n",
        );
        assert!(!t.contains("SECRET") && t.contains("pypi.corp"), "{t}");
    }

    #[test]
    fn an_env_secret_goes() {
        let t = kept("[env]\nGITHUB_TOKEN = \"SECRET\"\nRUST_LOG = \"info\"\n");
        assert!(!t.contains("SECRET") && t.contains("RUST_LOG"), "{t}");
    }

    #[test]
    fn a_file_that_does_not_parse_is_an_error() {
        assert!(matches!(
            derive("[build\n"),
            Err(DeriveError::Parse { line: 1, .. })
        ));
    }
}
