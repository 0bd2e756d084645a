//! `corral shell`: behaves like `bash -c 'LINE'` for every line corral admits.

use std::path::PathBuf;

use corral::ShellRequest;

use crate::args::ShellArgs;
use crate::exec::call;
use crate::exit::{Done, remember_line};

pub fn run(store: Option<PathBuf>, args: ShellArgs) -> anyhow::Result<Done> {
    remember_line(&args.line);
    let mut request = ShellRequest::new(args.line);
    request.cwd = args.cwd;
    request.timeout = args.timeout;
    call(
        store,
        args.workspace,
        &args.policy,
        args.json,
        |run, options| run.shell_with(&request, options),
    )
}
