//! Both output streams are drained at once: a command filling both pipes with 100 MB
//! each neither deadlocks nor loses a byte.

use crate::common;

use std::time::Duration;

use common::{Fixture, testbin};
use corral::ExecRequest;

#[test]
fn a_hundred_megabytes_on_each_stream() {
    const N: u64 = 100 * 1000 * 1000;
    let fx = Fixture::new();
    let run = fx.run();
    let outcome = run
        .exec(
            &ExecRequest::new([testbin(), "spew".into(), N.to_string(), N.to_string()])
                .timeout(Duration::from_secs(120)),
        )
        .unwrap();
    assert!(outcome.status.success(), "{}", outcome.observation);
    for stream in [&outcome.stdout, &outcome.stderr] {
        assert_eq!(stream.bytes, N);
        assert_eq!(stream.lines, N.div_ceil(64));
        let capture = stream.capture.as_ref().expect("a capture file");
        assert_eq!(std::fs::metadata(capture).unwrap().len(), N);
        // What the model sees stays within the budget.
        assert!(stream.window.head.len() + stream.window.tail.len() <= 16 * 1024);
        assert_eq!(
            stream.window.omitted_bytes
                + (stream.window.head.len() + stream.window.tail.len()) as u64,
            N
        );
    }
}
