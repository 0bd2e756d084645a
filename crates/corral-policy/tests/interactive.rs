//! Programs that need a terminal.

use corral_policy::interactive::needs_terminal;
use corral_policy::{CommandCheck, Policy};

const NEEDS: &[&[&str]] = &[
    &["vim", "x"],
    &["nvim"],
    &["nano", "x"],
    &["emacs", "x"],
    &["less", "x"],
    &["more", "x"],
    &["man", "ls"],
    &["top"],
    &["htop"],
    &["watch", "ls"],
    &["ssh", "host"],
    &["sudo", "ls"],
    &["su"],
    &["passwd"],
    &["psql"],
    &["mysql", "-u", "root"],
    &["sqlite3", "db.sqlite"],
    &["redis-cli", "-h", "localhost"],
    &["python3"],
    &["python", "-i", "x.py"],
    &["node"],
    &["irb"],
    &["ghci"],
    &["git", "rebase", "-i", "HEAD~3"],
    &["git", "add", "-p"],
    &["git", "stash", "-p"],
    &["git", "stash", "push", "--patch"],
    &["git", "commit"],
    &["git", "commit", "-a"],
    &["git", "commit", "-m", "x", "-e"],
    &["git", "-C", "x", "commit", "--amend"],
    &["crontab", "-e"],
    &["visudo"],
    &["tmux"],
    &["tmux", "attach"],
    &["screen"],
    &["env", "vim", "x"],
    &["bash", "-c", "git log | less"],
    &["find", ".", "-ok", "rm", "{}", ";"],
];

const DOES_NOT: &[&[&str]] = &[
    &["ls"],
    &["vim", "-es", "-c", "wq", "x"],
    &["emacs", "--batch", "-l", "x.el"],
    &["man", "-k", "printf"],
    &["top", "-b", "-n", "1"],
    &["sudo", "-n", "ls"],
    &["psql", "-c", "select 1"],
    &["mysql", "-e", "select 1"],
    &["sqlite3", "db.sqlite", "select 1"],
    &["redis-cli", "ping"],
    &["python3", "x.py"],
    &["python3", "-c", "x"],
    &["node", "x.js"],
    &["git", "rebase", "main"],
    &["git", "add", "."],
    &["git", "stash", "show", "-p"],
    &["git", "stash", "show", "-p", "stash@{1}"],
    &["git", "commit", "-m", "x"],
    &["git", "commit", "-am", "x"],
    &["git", "commit", "--amend", "--no-edit"],
    &["git", "commit", "-F", "msg.txt"],
    &["crontab", "-l"],
    &["tmux", "new", "-d", "-s", "x"],
    &["tmux", "send-keys", "-t", "x", "ls", "Enter"],
    &["git", "status"],
];

#[test]
fn built_in_list() {
    for argv in NEEDS {
        assert!(needs_terminal(argv).is_some(), "{argv:?}");
    }
    for argv in DOES_NOT {
        assert_eq!(needs_terminal(argv), None, "{argv:?}");
    }
    assert_eq!(
        needs_terminal(&["sudo", "ls"]),
        Some("sudo may prompt for a password (use sudo -n)")
    );
}

#[test]
fn the_policy_can_add_and_remove() {
    let p = Policy::permissive()
        .interactive_programs(["my-tui"])
        .allow_interactive(["less"]);
    let argv = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(p.needs_terminal(&argv(&["my-tui"])).is_some());
    assert!(p.needs_terminal(&argv(&["env", "my-tui"])).is_some());
    assert!(p.needs_terminal(&argv(&["less", "x"])).is_none());
    assert!(p.needs_terminal(&argv(&["vim", "x"])).is_some());
}

#[test]
fn the_verdict_carries_it() {
    let argv: Vec<String> = ["nohup", "vim", "x"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let v = Policy::permissive().check_command(&CommandCheck {
        argv: &argv,
        program_path: None,
    });
    let t = v.needs_terminal.unwrap();
    assert_eq!(t.command, "vim x");
    assert_eq!(t.reason, "a full-screen editor");
}

/// An interactive rebase or a commit whose editor is given as a program that needs no
/// terminal runs without one (issue 64); an editor that needs one, or none, still does.
#[test]
fn an_editor_given_that_needs_no_terminal() {
    const NEEDS: &[&[&str]] = &[
        &[
            "env",
            "GIT_SEQUENCE_EDITOR=vim",
            "git",
            "rebase",
            "-i",
            "HEAD~2",
        ],
        &["env", "GIT_EDITOR=nano", "git", "commit"],
        // The sequence editor comes before the message editor.
        &[
            "env",
            "GIT_SEQUENCE_EDITOR=vi",
            "GIT_EDITOR=true",
            "git",
            "rebase",
            "-i",
            "x",
        ],
        &["git", "-c", "sequence.editor=vim", "rebase", "-i", "x"],
        &["env", "GIT_SEQUENCE_EDITOR=", "git", "rebase", "-i", "x"],
        &["bash", "-c", "GIT_SEQUENCE_EDITOR='vim -O' git rebase -i x"],
    ];
    const DOES_NOT: &[&[&str]] = &[
        &[
            "env",
            "GIT_SEQUENCE_EDITOR=sed -i 2s/^pick/fixup/",
            "git",
            "rebase",
            "-i",
            "HEAD~2",
        ],
        &[
            "env",
            "GIT_EDITOR=true",
            "git",
            "rebase",
            "--interactive",
            "x",
        ],
        &["env", "EDITOR=:", "git", "rebase", "-i", "x"],
        &["env", "VISUAL=cat", "git", "commit", "-a"],
        &["env", "GIT_EDITOR=true", "git", "tag", "-a", "v1"],
        &["git", "-c", "sequence.editor=true", "rebase", "-i", "x"],
        &["git", "-c", "core.editor=true", "commit"],
        &[
            "bash",
            "-c",
            "GIT_SEQUENCE_EDITOR='sed -i 2d' git rebase -i x",
        ],
        &[
            "env",
            "GIT_SEQUENCE_EDITOR=true",
            "sh",
            "-c",
            "git rebase -i x",
        ],
    ];
    for argv in NEEDS {
        assert!(needs_terminal(argv).is_some(), "{argv:?}");
    }
    for argv in DOES_NOT {
        assert_eq!(needs_terminal(argv), None, "{argv:?}");
    }
    // Assignments written in front of the command, as a stage has them.
    let argv = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let rebase = argv(&["git", "rebase", "-i", "HEAD~2"]);
    let check = |env: &[(String, String)]| {
        Policy::permissive()
            .check_simple(&corral_policy::SimpleCommand {
                env,
                argv: &rebase,
                ..Default::default()
            })
            .needs_terminal
    };
    assert!(check(&[]).is_some());
    assert!(check(&[("GIT_SEQUENCE_EDITOR".into(), "sed -i 2d".into())]).is_none());
    assert!(check(&[("GIT_SEQUENCE_EDITOR".into(), "vim".into())]).is_some());
}
