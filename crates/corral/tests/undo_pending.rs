//! What a call changed is recorded after its result, on a thread of its own: the step is
//! marked pending until its rows are written, the run's end waits for them, and an undo
//! of a step that a corral left pending (it ended while recording) is refused, naming
//! why, and changes nothing.

use crate::common;

use common::Fixture;
use corral::ShellRequest;
use corral::undo::{UndoTarget, plan};

#[test]
fn a_closed_run_has_every_calls_files_and_a_step_left_pending_is_refused() {
    let fx = Fixture::new();
    std::fs::write(fx.workspace().join("a.txt"), "mine\n").unwrap();
    let run = fx.run();
    let outcome = run.shell(&ShellRequest::new("echo agent > a.txt")).unwrap();
    assert!(outcome.status.success(), "{}", outcome.observation);
    let (run_id, step) = (run.id().to_string(), outcome.step.id);
    run.close().unwrap();

    let store = corral::trace::Store::open_existing(&fx.store()).unwrap();
    let dir = corral::undo::store_dir(&fx.store());
    // Closed, so recorded whole: the step's rows are there, with no mark.
    let files = store.step_files(step).unwrap();
    let changes: Vec<&str> = files.iter().map(|f| f.change.as_str()).collect();
    assert_eq!(changes, ["modified"]);

    // As a corral that ended while recording would leave it.
    store.mark_step_files_pending(&run_id, step).unwrap();
    let err = plan(&store, &dir, &UndoTarget::Step(step)).unwrap_err();
    assert!(err.to_string().contains("not recorded whole"), "{err}");
    assert_eq!(
        std::fs::read_to_string(fx.workspace().join("a.txt")).unwrap(),
        "agent\n"
    );
}
