//! An argv is handed to the program as an array: shell metacharacters are plain bytes.

use crate::common;

use common::{Fixture, testbin};
use corral::{ExecRequest, Status};

#[test]
fn metacharacters_arrive_literally() {
    let fx = Fixture::new();
    let run = fx.run();
    let args = [
        "a;b && c", "$(id)", "`id`", "x | y", "> out", "'q'", "\"dq\"", "*", "~", "$HOME", "",
    ];
    let mut argv = vec![testbin(), "argv".to_string()];
    argv.extend(args.iter().map(|s| s.to_string()));
    let outcome = run.exec(&ExecRequest::new(argv)).unwrap();
    assert_eq!(outcome.status, Status::Exited { code: 0 });
    assert_eq!(outcome.stdout.window.head, format!("{args:?}\n"));
    assert!(
        !fx.workspace().join("out").exists(),
        "a `>` in an argument must not create a file"
    );
}
