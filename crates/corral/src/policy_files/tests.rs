use super::*;
use crate::config::{MemoryMax, UndoBudget};

/// An operator-like file that sets every setting, under a workspace file nobody trusted
/// that tries to move each: it may lower memory and raise undo bounds only, and set the
/// output budget and `persist_cwd` as it likes.
#[test]
fn settings_read_once_agree_with_each_setting_asked_alone() {
    let dir = tempfile::tempdir().unwrap();
    let lower = dir.path().join("lower.toml");
    std::fs::write(
        &lower,
        "[shell]\npersist_cwd = true\n[output]\nbudget = 8192\n[limits]\nmemory = \"4G\"\n\
         [undo]\nmax_files = 100\nmax_mb = 50\n",
    )
    .unwrap();
    let project = dir.path().join("corral.toml");
    std::fs::write(
        &project,
        "[shell]\npersist_cwd = false\n[output]\nbudget = 4096\n[limits]\nmemory = \"8G\"\n\
         [undo]\nmax_files = 10\nmax_mb = 500\n",
    )
    .unwrap();
    let files = PolicyFiles {
        files: vec![("file:1".into(), lower), ("project".into(), project)],
    };
    let settings = files.settings().unwrap();
    assert_eq!(settings.persist_cwd, Some(false));
    assert_eq!(settings.output_budget, Some(4096));
    assert_eq!(settings.memory_max, Some(MemoryMax::Bytes(4 << 30)));
    let base = UndoBudget {
        files: 50_000,
        bytes: 200_000_000,
        store_bytes: None,
    };
    assert_eq!(
        settings.undo_budget(base),
        UndoBudget {
            files: 100,
            bytes: 500_000_000,
            store_bytes: None,
        }
    );
    assert_eq!(files.persist_cwd().unwrap(), settings.persist_cwd);
    assert_eq!(files.output_budget().unwrap(), settings.output_budget);
    assert_eq!(files.memory_max().unwrap(), settings.memory_max);
    assert_eq!(files.undo_budget(base).unwrap(), settings.undo_budget(base));
}
