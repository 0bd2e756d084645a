//! `corral shell --tty` on a terminal: what is typed reaches the program, what it prints
//! comes back as printed, and a resize of corral's window reaches the program's. What a
//! person types is counted in the trace, never kept, and questions to the terminal are
//! left to the person's terminal.

use crate::common;

use std::io::{Read, Write};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::Scratch;

/// Everything corral printed on its terminal so far.
#[derive(Clone, Default)]
struct Screen(Arc<Mutex<String>>);

impl Screen {
    fn text(&self) -> String {
        self.0.lock().unwrap().clone()
    }

    /// Type `keys` every half second until the screen shows `want` (after `from` bytes).
    fn type_until(&self, term: &mut std::fs::File, keys: &str, from: usize, want: &str) {
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            term.write_all(keys.as_bytes()).unwrap();
            let next = Instant::now() + Duration::from_millis(500);
            while Instant::now() < next {
                if self.text()[from..].contains(want) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        panic!("never saw {want:?}; the screen:\n{}", self.text());
    }
}

/// Start `cmd` on a terminal of its own, leading a session on it as it does when a person
/// runs it: corral, the terminal's master, what it shows, and the thread reading it
/// (which ends with EIO once nothing holds the terminal open).
fn on_a_terminal(
    mut cmd: std::process::Command,
) -> (
    std::process::Child,
    std::fs::File,
    Screen,
    std::thread::JoinHandle<()>,
) {
    let pty = corral_sys::pty::open(24, 80).unwrap();
    cmd.stdin(Stdio::from(pty.slave.try_clone().unwrap()))
        .stdout(Stdio::from(pty.slave.try_clone().unwrap()))
        .stderr(Stdio::from(pty.slave));
    corral_sys::pty::controlling_terminal_before_exec(&mut cmd);
    let corral = cmd.spawn().unwrap();
    drop(cmd);
    let term = std::fs::File::from(pty.master);
    let screen = Screen::default();
    let reader = {
        let (mut term, screen) = (term.try_clone().unwrap(), screen.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = term.read(&mut buf) {
                if n == 0 {
                    break;
                }
                screen
                    .0
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    (corral, term, screen, reader)
}

#[test]
fn typed_keys_and_a_resize_reach_the_program() {
    let s = Scratch::new();
    let (mut corral, mut term, screen, reader) =
        on_a_terminal(s.corral(&["shell", "--yes", "--tty", "bash --norc --noprofile"]));

    screen.type_until(&mut term, "stty size\r", 0, "24 80");
    let before = screen.text().len();
    corral_sys::pty::set_size(&term, 40, 100).unwrap();
    screen.type_until(&mut term, "stty size\r", before, "40 100");
    // A question to the terminal is the person's terminal's to answer (this one does
    // not): corral's own emulated terminal stays silent.
    let before = screen.text().len();
    term.write_all(b"printf '\\033[6n'; IFS= read -rs -t 1 -d R pos; echo \"pos=${pos#*[}.\"\r")
        .unwrap();
    screen.type_until(&mut term, "", before, "pos=.");
    term.write_all(b"exit 7\r").unwrap();

    let until = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = corral.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < until,
            "corral did not exit: {}",
            screen.text()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(7), "{}", screen.text());
    drop(term);
    let _ = reader.join();

    let store = corral::trace::Store::open_existing(&s.store()).unwrap();
    let writes: Vec<String> = store
        .steps(None, 1000)
        .unwrap()
        .into_iter()
        .filter(|step| step.tool == "shell_write")
        .map(|step| step.call_json)
        .collect();
    assert!(!writes.is_empty());
    for call in &writes {
        assert!(call.contains("typed_bytes"), "{call}");
        assert!(!call.contains("stty") && !call.contains("exit"), "{call}");
    }
}

/// What is typed while the program prints takes none of its output: every line arrives,
/// in order, however the keystrokes and the output interleave.
#[test]
fn typing_while_the_program_prints_loses_no_output() {
    let s = Scratch::new();
    let mut child = s
        .corral(&[
            "shell",
            "--tty",
            "--yes",
            "sh -c 'stty -echo; i=0; while [ $i -lt 400 ]; do i=$((i+1)); echo line$i; sleep 0.002; done'",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let typist = std::thread::spawn(move || {
        // Keys the program never reads, each passed on as it is typed.
        for _ in 0..200 {
            if stdin.write_all(b"x").and_then(|()| stdin.flush()).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(3));
        }
    });
    let out = child.wait_with_output().unwrap();
    typist.join().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    // Keys typed before `stty -echo` took effect are echoed in front of the first line.
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.trim_start_matches('x'))
        .filter(|l| l.starts_with("line"))
        .collect();
    let want: Vec<String> = (1..=400).map(|i| format!("line{i}")).collect();
    assert_eq!(lines, want, "{}", String::from_utf8_lossy(&out.stderr));
}

/// Headless (stdin from /dev/null, no terminal) a terminal session ends, and the trace
/// has no step left `running`: the end of input passed on to the program is a step that
/// answered.
#[test]
fn a_headless_terminal_session_leaves_no_step_running() {
    let s = Scratch::new();
    let out = s
        .corral(&["shell", "--tty", "--yes", "echo hi"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("hi"));
    let db = rusqlite::Connection::open(s.store()).unwrap();
    let open: Vec<(String, Option<String>)> = db
        .prepare("SELECT tool, outcome FROM steps WHERE outcome IS NULL OR outcome = 'running'")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(open.is_empty(), "steps left running: {open:?}");
}

/// `q` at an approval question of `corral run` ends the run as the person asked: exit 1,
/// the verdict and the run id on the last line, not a failure of corral's.
#[test]
fn q_at_a_question_ends_a_run_with_its_verdict() {
    let s = Scratch::new();
    let script = s.dir.path().join("script.jsonl");
    std::fs::write(
        &script,
        // A built-in ask (it destroys work) stays a question in every posture.
        r#"{"tool_calls":[{"name":"exec","arguments":{"argv":["git","push","--force"]}}]}"#,
    )
    .unwrap();
    let model = format!("script:{}", script.display());
    let (mut corral, mut term, screen, reader) =
        on_a_terminal(s.corral(&["run", "say hi", "--verify", "true", "--model", &model]));
    screen.type_until(&mut term, "", 0, "Allow");
    term.write_all(b"q\r").unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = corral.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < until,
            "corral did not exit: {}",
            screen.text()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(term);
    let _ = reader.join();
    let text = screen.text();
    assert_eq!(status.code(), Some(1), "{text}");
    let last = text.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.contains("not verified") && last.contains("run r"),
        "{text}"
    );
}

/// What a command printed, read back on a person's terminal, does not drive it: the
/// escapes a model's command wrote (a clipboard write, a carriage return that hides text)
/// are shown as `\xHH`, and the same bytes reach a pipe unchanged.
#[test]
fn the_trace_shows_a_commands_escapes_on_a_terminal_instead_of_obeying_them() {
    let s = Scratch::new();
    let out = s.output(&[
        "exec",
        "--json",
        "--",
        "printf",
        "safe\\rHIDDEN \\033]52;c;cm0gLXJmIH4=\\007 \\033[2J\\n",
    ]);
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let step = outcome["step"]["id"].as_i64().unwrap().to_string();
    let piped = s.output(&["trace", "output", &step]);
    assert!(
        common::text(&piped.stdout).contains("\x1b]52;c;"),
        "{}",
        common::text(&piped.stdout)
    );

    let (mut corral, _term, screen, reader) = on_a_terminal(s.corral(&["trace", "output", &step]));
    let status = corral.wait().unwrap();
    assert!(status.success());
    drop(corral);
    let _ = reader.join();
    let shown = screen.text();
    assert!(
        shown.contains("safe\\x0dHIDDEN \\x1b]52;c;cm0gLXJmIH4=\\x07 \\x1b[2J"),
        "{shown:?}"
    );
    assert!(!shown.contains('\x1b'), "{shown:?}");
}
