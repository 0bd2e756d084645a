//! The built-in table of read-only commands.

use corral_policy::safe::is_known_safe;

const SAFE: &[&[&str]] = &[
    &["ls", "-la"],
    &["/bin/ls"],
    &["/usr/bin/cat", "a"],
    &["cat", "Cargo.toml"],
    &["head", "-n", "5", "x"],
    &["tail", "-f", "log"],
    &["grep", "-rn", "fn main", "src"],
    &["rg", "-n", "todo"],
    &["rg", "--pre-glob", "*.gz", "x"],
    &["wc", "-l"],
    &["echo", "hi"],
    &["pwd"],
    &["date"],
    &["hostname"],
    &["sort", "-u", "f"],
    &["uniq", "-c", "f"],
    &["env"],
    &["jq", ".a", "f.json"],
    &["find", ".", "-name", "*.rs"],
    &["sed", "-n", "1,20p", "f"],
    &["sed", "s/foo/bar/g", "f"],
    &["sed", "-e", "/^#/d", "-e", "s|a|b|", "f"],
    &["git", "branch"],
    &["git", "branch", "-a", "-v"],
    &["git", "branch", "--list", "feat/*"],
    &["git", "tag", "-l", "v1*"],
    &["git", "remote", "-v"],
    &["git", "rev-parse", "HEAD"],
    &["git", "-C", "sub", "ls-tree", "HEAD"],
    &["python3", "--version"],
    &["node", "--version"],
    &["env", "nice", "ls"],
    &["timeout", "5", "cat", "x"],
    &["command", "-v", "cargo"],
    &["bash", "-c", "ls | wc -l"],
    &["bash", "-lc", "cd src && grep -rn x . | head"],
    &["sh", "-c", "cat < in.txt"],
];

const NOT_SAFE: &[&[&str]] = &[
    &["rm", "x"],
    &["./ls"],
    &["/tmp/ls"],
    &["find", ".", "-delete"],
    &["find", ".", "-exec", "rm", "{}", ";"],
    &["find", ".", "-fprint", "out"],
    &["sed", "-i", "s/a/b/", "f"],
    &["sed", "-ni", "p", "f"],
    &["sed", "--in-place=.bak", "s/a/b/", "f"],
    &["sed", "s/a/b/w out", "f"],
    &["sed", "1e id", "f"],
    &["sed", "-f", "script.sed", "f"],
    &["git", "-c", "core.pager=sh", "log"],
    &["git", "--exec-path=/tmp", "status"],
    &["git", "diff", "--output=/tmp/x"],
    &["git", "diff", "--ext-diff"],
    &["git", "grep", "-O", "x"],
    &["git", "branch", "new-branch"],
    &["git", "branch", "-D", "main"],
    &["git", "tag", "v1"],
    &["git", "push"],
    &["git", "commit", "-m", "x"],
    &["sort", "-o", "f", "f"],
    &["uniq", "in", "out"],
    &["rg", "--pre", "sh", "x"],
    &["date", "-s", "2020-01-01"],
    &["hostname", "evil"],
    &["tree", "-o", "out"],
    &["env", "LD_PRELOAD=x.so", "ls"],
    &["env", "PATH=/tmp", "ls"],
    &["env", "FOO=1", "rm", "x"],
    &["xargs", "cat"],
    &["sudo", "ls"],
    &["bash", "-c", "ls > out"],
    &["bash", "-c", "ls | tee out"],
    &["bash", "-c", "ls $HOME"],
    &["bash", "script.sh"],
    &["cargo", "build"],
    &["git", "status"],
    &["git", "--no-pager", "log", "--oneline", "-5"],
    &["git", "-C", "sub", "diff", "--stat"],
    &["cargo", "--version"],
    &["rustc", "--version"],
    &["npm", "--version", "x"],
    &["unknown-tool"],
    &[],
];

#[test]
fn the_safe_table() {
    for argv in SAFE {
        assert!(is_known_safe(argv), "should be safe: {argv:?}");
    }
}

#[test]
fn the_unsafe_table() {
    for argv in NOT_SAFE {
        assert!(!is_known_safe(argv), "should not be safe: {argv:?}");
    }
}
