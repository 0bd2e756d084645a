//! Opening a store that does not exist for reading says so and creates
//! nothing.

use crate::common;

use corral_trace::{Store, TraceErrorKind};

#[test]
fn open_existing_on_missing_path_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corral/trace.db");

    let err = Store::open_existing(&path).unwrap_err();
    assert_eq!(err.kind(), TraceErrorKind::NotFound, "{err}");
    common::assert_names_path(&err, &path);
    let msg = err.to_string();
    assert!(msg.contains("$XDG_STATE_HOME/corral/trace.db"), "{msg}");
    assert!(msg.contains("CORRAL_STORE"), "{msg}");
    assert!(!path.exists());
    assert!(!path.parent().unwrap().exists());
}
