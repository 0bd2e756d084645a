//! Git's configuration in the box's environment: what keeps git from leaving helpers
//! running after a call.
//!
//! A `git commit` may start `git maintenance run --auto` (or `gc --auto`) detached, which
//! outlives the call: corral would kill it at the call's end and report "a process the
//! command left running". Git tolerates the kill (a later `gc` finishes the work), but the
//! report is noise, so the box turns the automatic helpers off: `maintenance.auto=false`
//! and `gc.auto=0`, passed as `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`
//! after whatever the caller's environment already passes that way. The person's own
//! `git` on the host still runs them.

/// What git's configuration the box sets, key and value.
pub(crate) const SETTINGS: &[(&str, &str)] = &[("maintenance.auto", "false"), ("gc.auto", "0")];

/// The variables that add [`SETTINGS`] to what `env` passes through `GIT_CONFIG_COUNT`.
pub(crate) fn variables(env: &[crate::env::Var]) -> Vec<(String, String)> {
    let given = env
        .iter()
        .find(|(k, _)| k == "GIT_CONFIG_COUNT")
        .and_then(|(_, v)| v.to_str()?.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut out = Vec::new();
    for (i, (key, value)) in SETTINGS.iter().enumerate() {
        let n = given + i;
        out.push((format!("GIT_CONFIG_KEY_{n}"), (*key).to_string()));
        out.push((format!("GIT_CONFIG_VALUE_{n}"), (*value).to_string()));
    }
    out.push((
        "GIT_CONFIG_COUNT".to_string(),
        (given + SETTINGS.len()).to_string(),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_follow_what_the_caller_passes() {
        let env: Vec<crate::env::Var> = vec![
            ("GIT_CONFIG_COUNT".into(), "1".into()),
            ("GIT_CONFIG_KEY_0".into(), "user.name".into()),
        ];
        let vars = variables(&env);
        assert!(vars.contains(&("GIT_CONFIG_KEY_1".into(), "maintenance.auto".into())));
        assert!(vars.contains(&("GIT_CONFIG_VALUE_2".into(), "0".into())));
        assert!(vars.contains(&("GIT_CONFIG_COUNT".into(), "3".into())));
        let fresh = variables(&[]);
        assert!(fresh.contains(&("GIT_CONFIG_KEY_0".into(), "maintenance.auto".into())));
    }
}
