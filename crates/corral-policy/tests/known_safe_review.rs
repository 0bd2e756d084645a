//! Every program on the known-safe list, reviewed for a way to run a
//! program or write a file through its own flags or configuration: one test
//! per program, naming what was checked. A command kept off the list says
//! why (`why_not_safe`).

use corral_policy::safe::{is_known_safe, why_not_safe};

fn safe(argv: &[&str]) {
    assert!(
        is_known_safe(argv),
        "should be known-safe: {argv:?} ({:?})",
        why_not_safe(argv)
    );
}

fn not_safe(argv: &[&str], because: &str) {
    let why = why_not_safe(argv).unwrap_or_else(|| panic!("should not be known-safe: {argv:?}"));
    assert!(
        why.contains(because),
        "{argv:?}: {why:?} should mention {because:?}"
    );
}

macro_rules! review {
    ($name:ident, $checked:literal, safe: [$($s:expr),* $(,)?], not: [$(($n:expr, $why:literal)),* $(,)?]) => {
        #[doc = $checked]
        #[test]
        fn $name() {
            $(safe($s);)*
            $(not_safe($n, $why);)*
        }
    };
}

review!(ls, "no option runs a program or writes (`--color`, `-R` only print)",
    safe: [&["ls", "-laR", "--color=always"]], not: []);
review!(cat_head_tail_wc, "read and print only; `tail -f` never ends but only reads; `wc --files0-from` reads",
    safe: [&["cat", "-A", "f"], &["head", "-c", "5", "f"], &["tail", "-F", "log"], &["wc", "--files0-from=list"]], not: []);
review!(grep_egrep_fgrep, "no option runs a program (no `--pre`); egrep/fgrep exec grep",
    safe: [&["grep", "-rnE", "x", "."], &["egrep", "x", "f"], &["fgrep", "-r", "x"]], not: []);
review!(echo_printf_pwd_true_false_seq, "print only; `printf -v` is a shell builtin, not this program",
    safe: [&["echo", "-e", "a"], &["printf", "%s\\n", "a"], &["pwd", "-P"], &["true"], &["false"], &["seq", "3"]], not: []);
review!(which_whoami_id_uname, "print only",
    safe: [&["which", "-a", "ls"], &["whoami"], &["id", "-u"], &["uname", "-a"]], not: []);
review!(stat_du_df, "print only; `du --files0-from` reads",
    safe: [&["stat", "-c", "%s", "f"], &["du", "-sh", "."], &["df", "-h"]], not: []);
review!(cmp_cut_tr_nl, "read and print only",
    safe: [&["cmp", "a", "b"], &["cut", "-d:", "-f1", "f"], &["tr", "a-z", "A-Z"], &["nl", "f"]], not: []);
review!(basename_dirname_realpath_readlink_printenv, "print only",
    safe: [&["basename", "/a/b"], &["dirname", "/a/b"], &["realpath", "x"], &["readlink", "-f", "x"], &["printenv", "HOME"]], not: []);
review!(jq, "no option runs a program or writes; `-L` and `import` load jq code only",
    safe: [&["jq", "-r", ".a", "f.json"], &["jq", "-L", "lib", ".", "f"]], not: []);
review!(diff, "`-l`/`--paginate` runs `pr`",
    safe: [&["diff", "-u", "a", "b"]],
    not: [(&["diff", "-l", "a", "b"], "runs `pr`"), (&["diff", "--pag", "a", "b"], "runs `pr`")]);
review!(ag, "`--pager` runs a program",
    safe: [&["ag", "x"]], not: [(&["ag", "--pager=sh", "x"], "runs a program")]);
review!(rg, "`--pre` and `--hostname-bin` run programs; `-z` runs decompressors found on PATH; abbreviations count",
safe: [&["rg", "-n", "x"], &["rg", "--pre-glob", "*.gz", "x"], &["rg", "-e", "z", "x"]],
not: [
    (&["rg", "--pre", "sh", "x"], "runs a program on every file"),
    (&["rg", "--pre=./x", "x"], "runs a program on every file"),
    (&["rg", "--hostname-bin=./x", "x"], "runs a program"),
    (&["rg", "-z", "x"], "decompression"),
    (&["rg", "-iz", "x"], "decompression"),
    (&["rg", "--search-zip", "x"], "decompression"),
]);
review!(date, "`-s`/`--set` (and its abbreviation `--s`) sets the clock",
    safe: [&["date"], &["date", "-Iseconds"], &["date", "+%s"], &["date", "-d", "yesterday"]],
    not: [(&["date", "-s", "2020-01-01"], "sets the clock"), (&["date", "--s=2020-01-01"], "sets the clock"), (&["date", "-us", "x"], "sets the clock")]);
review!(hostname, "any argument but the printing flags sets the host name",
    safe: [&["hostname"], &["hostname", "-f"]],
    not: [(&["hostname", "evil"], "sets the host name"), (&["hostname", "-F", "f"], "sets the host name")]);
review!(file, "`-C` writes a magic file; `-z`/`-Z` run decompressors found on PATH",
    safe: [&["file", "-b", "x"], &["file", "-m", "magic", "x"]],
    not: [(&["file", "-C"], "writes a magic file"), (&["file", "--comp"], "writes a magic file"), (&["file", "-z", "x.gz"], "decompression"), (&["file", "-bZ", "x"], "decompression")]);
review!(tree, "`-o` writes a file, also inside a cluster",
    safe: [&["tree", "-a", "-L", "2"]],
    not: [(&["tree", "-o", "out"], "writes a file"), (&["tree", "-ao", "out"], "writes a file")]);
review!(sort, "`-o`/`--output` write; `--compress-program` runs a program; GNU abbreviations count",
safe: [&["sort", "-u", "-k2,2", "f"], &["sort", "-T", "/tmp", "f"]],
not: [
    (&["sort", "-o", "f", "f"], "writes a file"),
    (&["sort", "-uo", "f", "f"], "writes a file"),
    (&["sort", "--out=f", "f"], "writes a file"),
    (&["sort", "--compress-program=sh", "f"], "runs a program"),
    (&["sort", "--compress=sh", "f"], "runs a program"),
]);
review!(uniq, "a second operand is the output file",
    safe: [&["uniq", "-c", "f"]], not: [(&["uniq", "in", "out"], "written")]);
review!(env, "prints without arguments; with a command, the command decides and no risky variable is assigned; `-S` splits a string",
safe: [&["env"], &["env", "FOO=1", "ls"], &["env", "-i", "ls"]],
not: [
    (&["env", "PATH=.", "ls"], "assigns PATH"),
    (&["env", "LD_PRELOAD=x.so", "ls"], "assigns LD_PRELOAD"),
    (&["env", "-S", "ls"], "splits"),
    (&["env", "--split-string=ls"], "splits"),
]);
review!(nice_timeout_stdbuf_command, "safe when what they run is",
    safe: [&["nice", "ls"], &["timeout", "5", "cat", "x"], &["stdbuf", "-oL", "ls"], &["command", "-v", "ls"]],
    not: [(&["timeout", "5", "rm", "x"], "rm")]);
review!(find, "`-exec`/`-execdir`/`-ok`/`-okdir` run, `-delete` deletes, `-fprint*`/`-fls` write",
safe: [&["find", ".", "-name", "*.rs", "-print"]],
not: [
    (&["find", ".", "-exec", "id", ";"], "-exec"),
    (&["find", ".", "-execdir", "id", ";"], "-execdir"),
    (&["find", ".", "-ok", "id", ";"], "-ok"),
    (&["find", ".", "-delete"], "-delete"),
    (&["find", ".", "-fprint", "out"], "-fprint"),
    (&["find", ".", "-fls", "out"], "-fls"),
]);
review!(sed, "`e` runs, `w`/`W` write, `r`/`R` read other files, `-i` writes, `-f` reads a script; an unsplittable script is refused",
safe: [&["sed", "-n", "1,5p", "f"], &["sed", "s/a/b/g", "f"], &["sed", "-E", "/x/d;s|a|b|2", "f"]],
not: [
    (&["sed", "1e id", "f"], "runs"),
    (&["sed", "s/a/id/e", "f"], "runs"),
    (&["sed", "s/a/b/w out", "f"], "writes"),
    (&["sed", "w out", "f"], "writes"),
    (&["sed", "-i", "s/a/b/", "f"], "writes"),
    (&["sed", "--in=x", "s/a/b/", "f"], "writes"),
    (&["sed", "-f", "s.sed", "f"], "script"),
]);
review!(git, "reads that run programs the repository's configuration names (fsmonitor, hooks, diff drivers, textconv, filters, gpg) are off the list; global options that change what runs are refused",
safe: [&["git", "--version"], &["git", "rev-parse", "HEAD"], &["git", "ls-tree", "HEAD"], &["git", "merge-base", "a", "b"],
       &["git", "cat-file", "-p", "HEAD"], &["git", "branch", "-a"], &["git", "tag", "-l", "v*"], &["git", "remote", "-v"],
       &["git", "config", "--get", "user.name"], &["git", "-C", "sub", "config", "--list"]],
not: [
    (&["git", "status"], "fsmonitor"),
    (&["git", "diff"], "diff drivers"),
    (&["git", "log", "-p"], "textconv"),
    (&["git", "show"], "gpg"),
    (&["git", "blame", "f"], "textconv"),
    (&["git", "grep", "x"], "textconv"),
    (&["git", "describe", "--dirty"], "hooks"),
    (&["git", "ls-files", "-m"], "fsmonitor"),
    (&["git", "stash", "list"], "gpg"),
    (&["git", "cat-file", "--textconv", "HEAD:f"], "textconv"),
    (&["git", "cat-file", "--batch"], "filters"),
    (&["git", "-c", "core.pager=sh", "log"], "global option"),
    (&["git", "--exec-path=/tmp", "rev-parse"], "global option"),
    (&["git", "branch", "--format=%(refname)"], "--format"),
    (&["git", "tag", "-l", "--format=%(refname)"], "formats"),
    (&["git", "tag", "-v", "v1"], "verifies"),
    (&["git", "config", "user.name", "x"], "writes"),
    (&["git", "config", "--get", "a", "--edit"], "not a reading option"),
]);
review!(version_queries, "`--version` of tools that read no project file; rustup proxies read `rust-toolchain.toml` (a toolchain `path`), yarn reads `yarnPath`, go reads `toolchain`",
safe: [&["python3", "--version"], &["node", "--version"], &["make", "--version"], &["git", "--version"]],
not: [
    (&["cargo", "--version"], "not on the list"),
    (&["rustc", "--version"], "not on the list"),
    (&["rustup", "--version"], "not on the list"),
    (&["yarn", "--version"], "not on the list"),
    (&["pnpm", "--version"], "not on the list"),
    (&["go", "version"], "not on the list"),
]);
review!(shells, "a `-c` line is safe when every stage is, assigns no risky variable and writes through no redirect; zsh `=name` is a program path",
safe: [&["bash", "-c", "ls | wc -l"], &["sh", "-c", "FOO=1 cat < f"], &["zsh", "-c", "ls"]],
not: [
    (&["bash", "-c", "ls > out"], "writes"),
    (&["bash", "-c", "PATH=. ls"], "assigns PATH"),
    (&["zsh", "-c", "=ls"], "zsh expands"),
    (&["bash", "script.sh"], "script"),
    (&["fish", "-c", "ls"], "not on the list"),
]);
review!(never_on_the_list, "pagers, man, awk, tar, xargs, sudo and unknown programs run programs through their arguments or configuration",
safe: [],
not: [
    (&["less", "f"], "not on the list"),
    (&["more", "f"], "not on the list"),
    (&["man", "ls"], "not on the list"),
    (&["awk", "{print}", "f"], "not on the list"),
    (&["tar", "tf", "x.tar"], "not on the list"),
    (&["xargs", "cat"], "not on the list"),
    (&["sudo", "ls"], "not on the list"),
    (&["./ls"], "not a program in a system directory"),
    (&["/tmp/ls"], "not a program in a system directory"),
]);
