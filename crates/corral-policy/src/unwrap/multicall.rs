//! Multi-call binaries: `busybox APPLET args...`, `toybox APPLET args...`.

use super::step::{Inner, Step, owned};

pub(super) fn multicall(name: &str, args: &[String]) -> Option<Vec<Step>> {
    let applet = args.first()?;
    if applet.starts_with('-') {
        // `--list`, `--help`, `--install`: no applet runs.
        return None;
    }
    Some(vec![Step::new(name, Inner::Argv(owned(args)))])
}
