//! The project's Python virtual environment, `.venv`, activated for the gate as
//! `source .venv/bin/activate` would: its `bin` first on `PATH`, `VIRTUAL_ENV` set,
//! `PYTHONHOME` unset. A project whose pytest is installed only there then passes its
//! gate (`python3 -m pytest`, `pytest`) as it does in the person's activated shell.
//!
//! What runs from there runs in the gate's box, as any program of the workspace does.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::env::Var;

/// `root`'s `.venv`, when it is a virtual environment (it has `bin/python`, as
/// `python3 -m venv`, uv and poetry's in-project setting make it).
pub fn find(root: &Path) -> Option<PathBuf> {
    let venv = root.join(".venv");
    venv.join("bin").join("python").exists().then_some(venv)
}

/// `env` as `venv/bin/activate` leaves it.
pub(crate) fn activate(env: &mut Vec<Var>, venv: &Path) {
    let mut path = OsString::from(venv.join("bin"));
    if let Some((_, old)) = env.iter().find(|(name, _)| name == "PATH") {
        path.push(":");
        path.push(old);
    }
    env.retain(|(name, _)| name != "PATH" && name != "VIRTUAL_ENV" && name != "PYTHONHOME");
    env.push(("PATH".into(), path));
    env.push(("VIRTUAL_ENV".into(), venv.into()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activation_puts_its_bin_first_and_names_it() {
        let mut env: Vec<Var> = vec![
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("PYTHONHOME".into(), "/opt/py".into()),
            ("HOME".into(), "/home/u".into()),
        ];
        activate(&mut env, Path::new("/ws/.venv"));
        let get = |n: &str| env.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        assert_eq!(get("PATH"), Some("/ws/.venv/bin:/usr/bin:/bin".into()));
        assert_eq!(get("VIRTUAL_ENV"), Some("/ws/.venv".into()));
        assert_eq!(get("PYTHONHOME"), None);
        assert_eq!(get("HOME"), Some("/home/u".into()));
    }
}
