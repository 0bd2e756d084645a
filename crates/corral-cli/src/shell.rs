//! `corral shell`: behaves like `bash -c 'LINE'` for every line corral admits.

use std::path::PathBuf;

use corral::ShellRequest;

use crate::args::ShellArgs;
use crate::exec::call;
use crate::exit::{Done, remember_line};

pub fn run(store: Option<PathBuf>, args: ShellArgs) -> anyhow::Result<Done> {
    remember_line(&args.line);
    if args.tty {
        return run_tty(store, args);
    }
    let mut request = ShellRequest::new(args.line);
    request.cwd = args.cwd;
    request.timeout = args.timeout;
    call(
        store,
        args.workspace,
        &args.policy,
        &args.sandbox,
        Some(&args.host_shell),
        args.json,
        |run, options| run.shell_with(&request, options),
    )
}

/// `corral shell --tty`: the command on a pseudo-terminal. When corral's own stdin is a
/// terminal it is put in raw mode (restored on the way out) and the session is attached:
/// every byte typed goes to the program, every byte it prints comes back as printed. The
/// window size is taken from corral's terminal when the command starts, and a later resize
/// of that window (`SIGWINCH`) is passed on. Without a terminal, stdin is copied to the
/// program as it comes, and the output is passed through.
fn run_tty(store: Option<PathBuf>, args: ShellArgs) -> anyhow::Result<Done> {
    use std::io::{IsTerminal, Read, Write};
    use std::time::Duration;

    use anyhow::Context;
    use corral::{HandleState, PollRequest, ResizeRequest, StartRequest, WriteRequest};

    let run = crate::exec::open_run(
        store,
        args.workspace,
        &args.policy,
        &args.sandbox,
        Some(&args.host_shell),
    )?;

    let stdin = std::io::stdin();
    let attached = stdin.is_terminal();
    let (rows, cols) = corral_sys::pty::size(std::io::stdout())
        .ok()
        .filter(|(r, c)| *r > 0 && *c > 0)
        .unwrap_or((24, 80));
    let mut request = StartRequest::new(args.line).on_tty().size(rows, cols);
    if attached {
        request = request.attached();
    }
    request.cwd = args.cwd;
    let handle = match run.shell_start(&request) {
        Ok(started) => started.handle,
        Err(e) => {
            run.close()?;
            return Err(e.into());
        }
    };
    // Set by SIGWINCH; the output loop passes the new size on.
    let resized = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    if attached {
        signal_hook::flag::register(signal_hook::consts::SIGWINCH, resized.clone())
            .context("installing the window-size handler")?;
    }
    let raw = if attached {
        Some(
            corral_sys::pty::Raw::enter(std::io::stdin())
                .context("putting the terminal in raw mode")?,
        )
    } else {
        None
    };
    let done = std::sync::atomic::AtomicBool::new(false);
    let state = std::thread::scope(|scope| -> anyhow::Result<HandleState> {
        // Keys in: read what is there, pass it on at once.
        scope.spawn(|| {
            let mut input = std::io::stdin();
            let mut buf = [0u8; 4096];
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                match corral_sys::pty::wait_readable(&input, Duration::from_millis(100)) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(_) => break,
                }
                let n = match input.read(&mut buf) {
                    Ok(n) if n > 0 => n,
                    // The end of corral's stdin is the end of the program's: C-d.
                    _ => {
                        let _ = run.shell_type(&WriteRequest {
                            handle,
                            yield_ms: Some(0),
                            eof: true,
                            ..WriteRequest::default()
                        });
                        break;
                    }
                };
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                let write = WriteRequest {
                    handle,
                    text,
                    yield_ms: Some(0),
                    ..WriteRequest::default()
                };
                if run.shell_type(&write).is_err() {
                    break;
                }
            }
        });
        // Output out, as printed, until the program ends.
        let result = (|| {
            let mut out = std::io::stdout().lock();
            loop {
                if resized.swap(false, std::sync::atomic::Ordering::AcqRel)
                    && let Ok((rows, cols)) = corral_sys::pty::size(std::io::stdout())
                    && rows > 0
                    && cols > 0
                {
                    run.shell_resize(&ResizeRequest { handle, rows, cols })?;
                }
                let poll = run.shell_poll(&PollRequest {
                    handle,
                    wait_ms: Some(100),
                    strip_ansi: Some(false),
                })?;
                out.write_all(poll.output.as_bytes())?;
                out.flush()?;
                if poll.state != HandleState::Running {
                    return Ok(poll.state);
                }
            }
        })();
        done.store(true, std::sync::atomic::Ordering::Release);
        result
    });
    drop(raw);
    run.close()?;
    let code = match state? {
        HandleState::Exited { status } => status.cli_exit_code(),
        _ => 1,
    };
    Ok(Done::Status(code))
}
