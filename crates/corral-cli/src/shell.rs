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
        |run, options| {
            corral::tools::SHELL
                .call_with(run, request.clone(), options)
                .map(|answer| answer.into_outcome().expect("shell answers an outcome"))
        },
    )
}

/// `corral shell --tty`: the command on a pseudo-terminal. When corral's own stdin is a
/// terminal it is put in raw mode (restored on the way out) and the session is attached:
/// every byte typed goes to the program unchanged, every byte it prints comes back as
/// printed. The window size is taken from corral's terminal when the command starts, and a
/// later resize of that window (`SIGWINCH`) is passed on. Without a terminal, stdin is
/// copied to the program as it comes, and its end is typed as `C-d`, again whenever the
/// program goes quiet, until it ends: a REPL that missed the first (it arrived before its
/// line editor started) still sees one. `--timeout` ends the session (124); SIGINT,
/// SIGTERM and SIGHUP to corral end it too (128+N), the terminal restored and the trace
/// complete.
fn run_tty(store: Option<PathBuf>, args: ShellArgs) -> anyhow::Result<Done> {
    use std::io::{IsTerminal, Read, Write};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use anyhow::Context;
    use corral::{
        handle::HandleState, handle::KillRequest, handle::PollRequest, handle::ResizeRequest,
        handle::StartRequest,
    };

    let run = crate::exec::open_run(
        store,
        args.workspace,
        &args.policy,
        &args.sandbox,
        Some(&args.host_shell),
        crate::exec::Calls::One,
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
    // Signals that end the session, from here on: corral ends the program itself and
    // records how, instead of dying with the terminal left raw and the rows open.
    let signalled = Arc::new(AtomicUsize::new(0));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register_usize(sig, signalled.clone(), sig as usize)
            .context("installing signal handlers")?;
    }
    corral_sys::escalation::answered_here(true);
    let deadline = args.timeout.map(|t| Instant::now() + t);
    let handle = match run.shell_start(&request) {
        Ok(started) => started.handle,
        Err(e) => {
            crate::exec::close_reporting(run);
            return Err(e.into());
        }
    };
    // Set by SIGWINCH; the output loop passes the new size on.
    let resized = Arc::new(AtomicBool::new(false));
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
    let done = AtomicBool::new(false);
    let input_ended = AtomicBool::new(false);
    let outcome = std::thread::scope(|scope| -> anyhow::Result<Ended> {
        // Keys in: read what is there, pass it on at once, as bytes.
        scope.spawn(|| {
            let mut input = std::io::stdin();
            let mut buf = [0u8; 4096];
            while !done.load(Ordering::Acquire) {
                match corral_sys::pty::wait_readable(&input, Duration::from_millis(100)) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(_) => break,
                }
                let n = match input.read(&mut buf) {
                    Ok(n) if n > 0 => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    // The end of corral's stdin is the end of the program's: C-d.
                    _ => {
                        let _ = run.shell_forward_bytes(handle, &[], true);
                        input_ended.store(true, Ordering::Release);
                        break;
                    }
                };
                if run.shell_forward_bytes(handle, &buf[..n], false).is_err() {
                    break;
                }
            }
        });
        // Output out, as printed, until the program ends.
        let result = (|| {
            let mut out = std::io::stdout().lock();
            let mut quiet_since = Instant::now();
            loop {
                let sig = signalled.load(Ordering::Acquire);
                let late = deadline.is_some_and(|d| Instant::now() >= d);
                if sig != 0 || late {
                    run.shell_kill(&KillRequest { handle })?;
                    return Ok(if late {
                        Ended::TimedOut
                    } else {
                        Ended::Signalled(sig as i32)
                    });
                }
                if resized.swap(false, Ordering::AcqRel)
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
                if poll.state != HandleState::Running {
                    out.write_all(poll.output.as_bytes())?;
                    out.flush()?;
                    return Ok(Ended::Handle(poll.state));
                }
                if !poll.output.is_empty() {
                    quiet_since = Instant::now();
                    out.write_all(poll.output.as_bytes())?;
                    out.flush()?;
                } else if input_ended.load(Ordering::Acquire) && quiet_since.elapsed() >= EOF_AGAIN
                {
                    // Input is over and the program waits, still: C-d again.
                    let _ = run.shell_forward_bytes(handle, &[], true);
                    quiet_since = Instant::now();
                }
            }
        })();
        done.store(true, Ordering::Release);
        result
    });
    drop(raw);
    let outcome = match outcome {
        Ok(ended) => ended,
        Err(e) => {
            crate::exec::close_reporting(run);
            return Err(e);
        }
    };
    crate::exec::close_reporting(run);
    let code = match outcome {
        Ended::Handle(HandleState::Exited { status }) => status.cli_exit_code(),
        Ended::Handle(_) => 1,
        Ended::TimedOut => {
            eprintln!("corral: timed out; the session was ended");
            124
        }
        Ended::Signalled(sig) => 128 + sig,
    };
    Ok(Done::Status(code))
}

/// How an attached session ended.
enum Ended {
    /// The program's own way (or a kill from elsewhere).
    Handle(corral::handle::HandleState),
    /// `--timeout` passed.
    TimedOut,
    /// corral was sent this signal.
    Signalled(i32),
}

/// After the input ended, how long the program may stay silent before it is sent another
/// `C-d`.
const EOF_AGAIN: std::time::Duration = std::time::Duration::from_secs(1);
