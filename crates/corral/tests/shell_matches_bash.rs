//! Differential test: every admitted line behaves as `bash -c LINE` does.
//!
//! Each line runs twice, in two fresh, identically seeded workspaces: once through
//! corral's `shell` and once through `bash -c`, both with the same explicit environment
//! and stdin on the null device. The exit status, the stdout bytes and the whole tree of
//! files left in the workspace must be equal. stderr is not compared: messages differ.
//!
//! Two corpora: a hand-written one covering the grammar feature by feature, and a
//! deterministic generated one composing pipelines, connectors and redirects.

use crate::common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::testbin;
use corral::{Config, EnvPolicy, Run, ShellRequest};

/// No line here should take long; a runaway is cut off on both sides.
const LIMIT: Duration = Duration::from_secs(10);

/// `TB` in a line stands for the absolute path of `corral-testbin`.
const HANDWRITTEN: &[&str] = &[
    // Words and quoting.
    "echo hello world",
    "echo 'single  quoted   spaces'",
    r#"echo "double \"quoted\" \\ \$HOME \`tick\`""#,
    r#"TB argv "a\"b" "c\\d" "e\$f" "g\`h" "i\j" "k\'l""#,
    r#"TB argv a\ b \'c\' \"d\" e\\f \x \#"#,
    r#"TB argv a'b'"c"d '' "" x"#,
    r#"TB argv 'it'\''s' 'back\slash' 'dq\"'"#,
    "TB argv \"multi\nline\" 'single\nline'",
    "TB argv \"a\\\nb\" c\\\nd",
    "echo one \\\ntwo",
    "TB argv a#b c# 'x #d' \"#e\"",
    "TB argv {} '{}' \"{}\"",
    "TB argv a=b c,d e:f @g %h +i ^j -k .l /m _n",
    "TB argv -- -n --x",
    "echo -n no newline",
    "printf '%s|%s\\n' a b c",
    "printf 'x\\ty\\n'",
    "TB argv é ü 日本 'ñ ö'",
    "TB argv ''",
    "echo 'a;b' \"c|d\" 'e&&f' '$x' '*' '~' '(p)' '<r>'",
    "echo \"it's\" 'say \"hi\"'",
    "TB argv \"\" '' a''b",
    // Pipes.
    "cat a.txt | sort | uniq -c",
    "cat a.txt | grep an | wc -l",
    "sort a.txt | head -n 2 | tr a-z A-Z",
    "printf '%s\\n' c b a | sort -r",
    "seq 100000 | tail -n 2",
    "yes | head -n 3",
    "seq 10 | head -n 1",
    "false | true",
    "true | false",
    "TB exit 3 | TB exit 4",
    "nosuchprogram | wc -l",
    "nosuchprogram",
    "echo hi | nosuchprogram",
    "nosuchprogram && echo no || echo yes",
    "TB signal 15",
    "echo x | TB signal 9",
    "TB signal 13 | cat",
    "TB lines 5 | tail -n 2",
    "TB lines 3 | TB stdin-len",
    "seq 5 | sort -rn | head -n 2",
    "printf 'a,b,c\\n' | cut -d, -f2",
    "echo a |\n tr a b",
    // Connectors, precedence, short-circuit.
    "false && echo a || echo b",
    "true || echo a && echo b",
    "false || false && echo a",
    "true && false; echo after",
    "false; true",
    "true; false",
    "echo a && echo b && false && echo c || echo d",
    "false && echo a; echo b",
    "TB exit 2 || TB exit 5 && echo no",
    "true && TB exit 7 || echo recovered",
    "false || echo a | tr a b && echo c",
    "echo one\necho two\n\nfalse\n",
    "echo a;",
    "true &&\necho yes",
    "false ||\n\necho recovered",
    "echo a; echo b; echo c",
    "TB exit 1 && echo no",
    // Redirects.
    "echo hi > out.txt",
    "echo hi >out.txt; echo there >> out.txt; cat out.txt",
    "sort < a.txt",
    "<a.txt sort -r",
    ">f echo hi",
    "echo a >f b 2>g c",
    "ls a.txt nonexistent > both.txt 2>&1",
    "ls a.txt nonexistent 2>&1 > out.txt",
    "ls a.txt nonexistent 2> err.txt",
    "ls nonexistent 2>> err.txt; ls nonexistent 2>>err.txt; wc -l err.txt",
    "echo to-stderr >&2",
    "echo to-stderr 1>&2 | wc -c",
    "ls a.txt nonexistent 2>&1 | sort",
    "ls a.txt nonexistent 2>&1 >&2 | wc -l",
    "echo a > x > y",
    "cat < missing",
    "cat < missing | wc -l",
    "cat < missing; echo next",
    "cat < missing || echo recovered",
    "nosuchprogram > created.txt",
    "nosuchprogram 2> err.txt; test -s err.txt && rm err.txt",
    "echo hi 1> one.txt 2> two.txt",
    "echo hi 1>>one.txt; echo ho 1>>one.txt",
    "cat 0< a.txt",
    "echo data > 'with space.txt'; cat 'with space.txt'",
    "cat \"with space.txt\" with\\ space.txt",
    "echo hi > sub/new.txt",
    "echo x 2>&1 1>/dev/null",
    "echo hi > /dev/null",
    "echo hi > sub",
    "echo hi > sub && echo no",
    "printf 'a\\nb\\n' >> a.txt && wc -l < a.txt",
    "echo first > f; echo second > f; cat f",
    "cat a.txt > a2.txt | wc -l",
    "echo a 2>&1 >o1 | wc -c",
    // cd.
    "cd dir && ls",
    "cd dir; cat b.txt",
    "cd dir && cat ../a.txt | head -n 1",
    "cd dir; echo new > c.txt; cd ..; ls dir",
    "cd sub && touch made && ls",
    "cd \"dir\" && TB argv x",
    "cd dir/ && ls -1",
    "cd dir; cd ..; cat a.txt | wc -l",
    "cd sub; echo x > o; cat o",
    "cd sub\nls ../dir",
    "echo a > o1; cd dir; echo b > o1; cat o1 ../o1",
    // Assignments.
    "LC_ALL=C sort a.txt",
    "FOO=bar TB env | grep FOO=",
    "A=1 B='two words' TB env | grep -e ^A= -e ^B=",
    "echo a=b",
    "FOO=x printenv FOO",
    "HOME=/elsewhere printenv HOME",
    "X=1 Y=2 printenv X Y",
    // Other programs.
    "find dir -name b.txt -exec cat {} +",
    "find dir -name b.txt -exec cat {} \\;",
    "mkdir newdir && touch newdir/f && ls newdir",
    "cp a.txt copy.txt && mv copy.txt moved.txt && cat moved.txt | wc -l",
    "rm a.txt && test -e a.txt || echo gone",
    "basename /x/y/z.txt .txt; dirname /x/y/z.txt",
    "test -f a.txt && echo file; test -d sub && echo dir",
    "test 1 -eq 2",
    "grep -c apple a.txt",
    "grep nomatch a.txt",
    "sed -n 2p a.txt",
    "sed 's/a/A/g' a.txt",
    "TB lines 3 >lines.txt && wc -l lines.txt",
    "wc -c 'with space.txt'",
    "tr -d '\\n' < a.txt",
    "ls dir sub",
    "ls a.txt 'with space.txt'",
    "head -c 5 a.txt | od -c",
    "rm -r dir && ls",
    "mv a.txt sub/ && ls sub",
    "uniq < a.txt | sort | uniq -d",
    "seq 3 | tee t1 t2 | wc -l",
    // Here-documents and here-strings.
    "cat <<'EOF' > notes.txt\nhello $HOME `x` \\n \\\n\n  'q' \"d\" )\nEOF\ncat notes.txt",
    "cat <<\"EOF\"\n$PATH\nEOF",
    "cat <<\\EOF\n$PATH\nEOF",
    "cat <<EOF | wc -l\nplain text, 50% off\na\\b\nEOF",
    "cat <<-'EOF'\n\tindented\n\t\tmore\n  spaced\n\tEOF",
    "cat << 'EOF'\nspace before the delimiter\nEOF",
    "cat <<'A' && cat <<'B' | tr a-z A-Z\nfirst\nA\nsecond\nB\necho done",
    "cat <<'EOF'\nlast line is the delimiter\nEOF",
    "cat <<'EOF'\nEOF not alone: EOF\n EOF\nEOF\n",
    "wc -c <<'EOF'\nEOF",
    "cat <<'EOF' >> f\nx\nEOF\ncat <<'EOF' >> f\ny\nEOF\ncat f",
    "cat <<'EOF' < a.txt\nignored\nEOF",
    "cat < a.txt <<'EOF'\nwins\nEOF",
    "cat <<'EOF' 2>&1 | sort -r\nb\na\nEOF",
    "sh <<'EOF'\necho from sh\ntest -f a.txt && echo found\nEOF",
    "bash <<'EOF'\nfor i in 1 2 3; do echo \"n$i\"; done\nEOF",
    "cat <<'EOF' | sh\necho piped into sh\nEOF",
    "python3 - <<'PY'\nimport sys\nprint('py', len(sys.argv))\nPY",
    "grep -c x <<<'x y x'",
    "tr a-z A-Z <<< hello",
    "cat <<< \"two words\" | wc -w",
    "TB argv \"$(cat <<'EOF'\nTitle\n\nBody with 'quotes', \"double\", $x and `y`.\nEOF\n)\"",
    "printf '[%s]\\n' \"$(cat <<'EOF'\na\n\n\nEOF\n)\" x",
    "TB argv \"before $(cat <<EOF\nplain\nEOF\n) after\"",
    // Comments, `~`, and what bash leaves literal.
    "echo hi # a comment",
    "# first\necho a # trailing\n# last",
    "echo a#b '#c' #d",
    "TB argv ~ ~/x HEAD~5 x~ a~b",
    "echo saved > ~/out.txt && cat ~/out.txt",
    "TB argv stash@{0} -I{} {}x a{b c}d {x} a!b !! x! !",
    "find dir ! -name b.txt",
    "find dir -name b.txt -exec echo found {} ';'",
    // `cd` wherever it stands.
    "mkdir -p out/deep && cd out/deep && echo x > f && pwd | sed 's|.*/||'",
    "cd nodir && echo no; echo after",
    "cd nodir || echo failed; ls",
    "cd nodir",
    "false && cd dir; ls",
    "true && cd dir; ls",
    "cd dir && false || ls",
    "cd nodir; ls",
    "mkdir sub2 && cd sub2 && touch made && cd .. && ls sub2",
    "cd a.txt || echo not-a-directory",
    "cd dir && cd nodir || pwd | sed 's|.*/||'",
    "cd sub && mkdir x && cd x && cd .. && ls",
    "test -d dir && cd dir && cat b.txt",
    "cd dir\ncd nodir\ncat b.txt",
    // File-name patterns, expanded as bash expands them.
    "TB argv *.txt",
    "TB argv *",
    "TB argv dir/*.txt d*/b.* */",
    "TB argv ?.txt ??.txt",
    "TB argv [ab].txt [!a]*.txt [^w]*",
    "TB argv *.none 'x*' \"y?\" z\\*",
    "TB argv .* | tr ' ' '\\n' | grep -c .",
    "TB argv w*space* with\\ *",
    "TB argv a[1] b] [c",
    "TB argv **/*.txt",
    "cat *.txt | wc -l",
    "wc -l dir/*.txt | tail -n 1",
    "X=*.txt env | grep '^X='; TB argv X=*.txt",
    // `[ EXPR ]`, the test command.
    "[ -f a.txt ] && echo file",
    "[ -d nodir ] || echo none",
    "[ a = b ]; [ 1 -lt 2 ] && echo less",
    "TB argv [ ] '[' x",
    // Brace expansion, before every other expansion.
    "TB argv {a..c}{1..2} x{a,b{c,d}}y {a,}z {,} {-05..5..5} {5..1..2} {1..3..0} {a..e..2}",
    "TB argv {a\\,b,c} \"{\"a,b} {x} {1..a} a{}b {a..} '{a,b}' {a,'b c'} {a,''}",
    "mkdir -p src/{components,utils,hooks} && ls src",
    "TB argv {a,b}*.txt {dir,sub}/ ~/{x,y}",
    "A={x,y} env | grep ^A=",
    // `time PIPELINE`: the pipeline's status and output; the report goes to stderr.
    "time TB exit 3",
    "time echo hi | tr a-z A-Z",
    "time false && echo no || echo yes",
    "echo a; time cat a.txt | sort | uniq -c > counted; cat counted",
    "TB argv time; time=1 env | grep ^time=",
    // `&`: the pipeline starts and the line goes on with status 0. (What the background
    // job prints races with the rest in bash too; see `shell_pipelines` for the rest.)
    "TB exit 3 &",
    "TB exit 3 & TB exit 4",
    "false & echo done",
    "echo x > /dev/null & echo y; echo z",
    "true &\nfalse",
    // The directory stack and `cd -` (the workspace's path is printed as `WS` on both
    // sides).
    "pushd dir && ls && popd",
    "pushd dir; pushd ../sub; dirs; popd; popd; popd || echo empty",
    "popd || echo failed; dirs",
    "pushd nodir || echo failed; dirs",
    "mkdir -p made/deep && pushd made && pushd deep && touch f && popd && popd && ls made/deep",
    "cd dir && cd - && cd - && pwd",
    "cd - || echo no-oldpwd",
    "pushd dir && cd - && dirs && popd && pwd",
    "cd dir && pushd ../sub && popd && cat b.txt",
    "false && pushd dir; dirs",
    "printenv OLDPWD || echo unset; cd dir && printenv OLDPWD PWD; OLDPWD=x printenv OLDPWD",
];

fn main_seed(ws: &Path) {
    std::fs::write(
        ws.join("a.txt"),
        "banana\napple\ncherry\napple\nxylophone\nbandana\n",
    )
    .unwrap();
    std::fs::create_dir(ws.join("dir")).unwrap();
    std::fs::write(ws.join("dir/b.txt"), "bee\nbuzz\n").unwrap();
    std::fs::create_dir(ws.join("sub")).unwrap();
    std::fs::write(ws.join("with space.txt"), "spaced out\n").unwrap();
    std::fs::write(ws.join(".hidden.txt"), "hidden\n").unwrap();
    std::fs::write(ws.join("b.txt"), "bee\n").unwrap();
}

/// What a line left behind.
#[derive(Debug, PartialEq, Eq)]
struct Observed {
    status: i32,
    stdout: Vec<u8>,
    tree: BTreeMap<String, Entry>,
}

#[derive(Debug, PartialEq, Eq)]
enum Entry {
    Dir,
    File(Vec<u8>),
    Symlink(PathBuf),
}

fn tree(root: &Path) -> BTreeMap<String, Entry> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_symlink() {
                out.insert(rel, Entry::Symlink(std::fs::read_link(&path).unwrap()));
            } else if meta.is_dir() {
                out.insert(rel, Entry::Dir);
                walk(root, &path, out);
            } else {
                out.insert(rel, Entry::File(std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Both sides of the comparison: one corral run, one scratch directory for bash.
struct Harness {
    _dir: tempfile::TempDir,
    corral_ws: PathBuf,
    bash_ws: PathBuf,
    env: BTreeMap<String, String>,
    run: Run,
    testbin: String,
}

impl Harness {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let corral_ws = root.join("corral-ws");
        let bash_ws = root.join("bash-ws");
        let home = root.join("home");
        for d in [&corral_ws, &bash_ws, &home] {
            std::fs::create_dir(d).unwrap();
        }
        let env: BTreeMap<String, String> = [
            ("PATH", "/usr/bin:/bin".to_string()),
            ("HOME", home.display().to_string()),
            ("LANG", "C.UTF-8".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let config = Config {
            env: EnvPolicy {
                explicit: Some(env.clone()),
                non_interactive: false,
                deny: vec![],
                ..Default::default()
            },
            ..Default::default()
        };
        let run = Run::builder(&corral_ws)
            .store(root.join("state").join("trace.db"))
            .config(config)
            // What may run is not under test here: approve whatever the policy asks about.
            .approver(corral::approve::ApproveAll)
            .open()
            .unwrap();
        Self {
            _dir: dir,
            corral_ws,
            bash_ws,
            env,
            run,
            testbin: testbin(),
        }
    }

    fn reset(&self, seed: fn(&Path)) {
        for ws in [&self.corral_ws, &self.bash_ws] {
            for entry in std::fs::read_dir(ws).unwrap() {
                let path = entry.unwrap().path();
                if std::fs::symlink_metadata(&path).unwrap().is_dir() {
                    std::fs::remove_dir_all(&path).unwrap();
                } else {
                    std::fs::remove_file(&path).unwrap();
                }
            }
            seed(ws);
        }
    }

    fn expand(&self, line: &str) -> String {
        line.replace("TB", &self.testbin)
    }

    fn corral(&self, line: &str) -> Result<Observed, corral::Error> {
        let outcome = self.run.shell(&ShellRequest::new(line).timeout(LIMIT))?;
        let stdout = match &outcome.stdout.capture {
            Some(path) => std::fs::read(path).unwrap(),
            None => Vec::new(),
        };
        Ok(Observed {
            status: outcome.status.cli_exit_code(),
            stdout,
            tree: tree(&self.corral_ws),
        })
    }

    fn bash(&self, line: &str) -> Observed {
        use std::os::unix::process::{CommandExt, ExitStatusExt};
        let out_path = self.corral_ws.parent().unwrap().join("bash.stdout");
        let mut child = Command::new("bash")
            .arg("-c")
            .arg(line)
            .env_clear()
            .envs(&self.env)
            .current_dir(&self.bash_ws)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_path).unwrap())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let deadline = Instant::now() + LIMIT;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .status();
                break child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        let status = match (status.code(), status.signal()) {
            (Some(code), _) => code,
            (None, Some(sig)) => 128 + sig,
            (None, None) => unreachable!(),
        };
        Observed {
            status,
            stdout: std::fs::read(&out_path).unwrap(),
            tree: tree(&self.bash_ws),
        }
    }

    /// Run `line` both ways in freshly seeded workspaces; describe any difference.
    fn compare(&self, line: &str, seed: fn(&Path)) -> Option<String> {
        let line = self.expand(line);
        self.reset(seed);
        let corral = match self.corral(&line) {
            Ok(o) => o,
            Err(e) => return Some(format!("line {line:?}: corral did not run it: {e}")),
        };
        let mut bash = self.bash(&line);
        // What prints a directory prints the workspace's own path.
        let mut corral = corral;
        corral.stdout = replace(&corral.stdout, &self.corral_ws, "WS");
        bash.stdout = replace(&bash.stdout, &self.bash_ws, "WS");
        let mut diff = String::new();
        if corral.status != bash.status {
            let _ = writeln!(
                diff,
                "  status: corral {} / bash {}",
                corral.status, bash.status
            );
        }
        if corral.stdout != bash.stdout {
            let _ = writeln!(
                diff,
                "  stdout:\n    corral {:?}\n    bash   {:?}",
                String::from_utf8_lossy(&corral.stdout),
                String::from_utf8_lossy(&bash.stdout)
            );
        }
        if corral.tree != bash.tree {
            let keys: std::collections::BTreeSet<&String> =
                corral.tree.keys().chain(bash.tree.keys()).collect();
            for key in keys {
                let (c, b) = (corral.tree.get(key), bash.tree.get(key));
                if c != b {
                    let _ = writeln!(
                        diff,
                        "  file {key:?}:\n    corral {}\n    bash   {}",
                        show(c),
                        show(b)
                    );
                }
            }
        }
        (!diff.is_empty()).then(|| format!("line {line:?}:\n{diff}"))
    }
}

fn replace(bytes: &[u8], path: &Path, with: &str) -> Vec<u8> {
    String::from_utf8_lossy(bytes)
        .replace(&path.display().to_string(), with)
        .into_bytes()
}

fn show(entry: Option<&Entry>) -> String {
    match entry {
        None => "(absent)".into(),
        Some(Entry::Dir) => "(directory)".into(),
        Some(Entry::Symlink(t)) => format!("(symlink to {})", t.display()),
        Some(Entry::File(bytes)) => format!("{:?}", String::from_utf8_lossy(bytes)),
    }
}

fn check_all(lines: &[String]) {
    let harness = Harness::new();
    let failures: Vec<String> = lines
        .iter()
        .filter_map(|line| harness.compare(line, main_seed))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} lines differ from bash:\n{}",
        failures.len(),
        lines.len(),
        failures.join("\n")
    );
}

#[test]
fn handwritten_lines_match_bash() {
    let lines: Vec<String> = HANDWRITTEN.iter().map(|s| s.to_string()).collect();
    assert!(lines.len() >= 60);
    check_all(&lines);
}

/// A small deterministic generator: a 64-bit LCG, so the corpus is the same on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Commands that produce output whatever their stdin; `o1`/`o2` name the file read, if any.
const SOURCES: &[&str] = &[
    "echo WORD",
    "echo two words",
    "printf '%s\\n' A B",
    "printf 'x\\ny\\nx\\n'",
    "seq 3",
    "seq 12",
    "true",
    "false",
    "cat a.txt",
    "cat o1",
    "cat o2",
    "grep an a.txt",
    "ls a.txt nonexistent",
    "TB exit 3",
    "TB lines 4",
    "yes | head -n 2",
];

/// Commands that read stdin.
const FILTERS: &[&str] = &[
    "wc -l",
    "sort",
    "sort -r",
    "head -n 2",
    "tail -n 1",
    "tr a-z A-Z",
    "grep x",
    "grep a",
    "cat",
    "uniq",
    "LC_ALL=C sort",
];

const FILES: &[&str] = &["o1", "o2"];

fn generate_pipeline(rng: &mut Lcg) -> String {
    // Files one pipeline touches must be distinct: its stages run at the same time, so a
    // file both written and read (or written twice) would race in bash as well.
    let mut used: Vec<&str> = Vec::new();
    let stages = 1 + rng.below(3);
    let mut words: Vec<String> = Vec::new();
    for i in 0..stages {
        let mut command = if i == 0 {
            rng.pick(SOURCES).to_string()
        } else {
            rng.pick(FILTERS).to_string()
        };
        for f in FILES {
            if command.ends_with(f) {
                used.push(f);
            }
        }
        if rng.chance(30) {
            let free: Vec<&str> = FILES
                .iter()
                .copied()
                .filter(|f| !used.contains(f))
                .collect();
            let redirect = rng.below(7);
            match (redirect, free.first()) {
                (0, Some(f)) => command = format!("{command} >{f}"),
                (1, Some(f)) => command = format!("{command} >> {f}"),
                (2, Some(f)) => command = format!("{command} 2>{f}"),
                (3, Some(f)) => command = format!("{command} >{f} 2>&1"),
                (4, Some(f)) => command = format!("{command} 2>&1 >{f}"),
                (5, _) => command = format!("{command} 2>&1"),
                // Not on `yes`: it would never see its reader go away.
                (6, _) if !command.starts_with("yes") => command = format!(">&2 {command}"),
                _ => {}
            }
            if let Some(f) = free.first().filter(|_| redirect <= 4) {
                used.push(f);
            }
        }
        words.push(command);
    }
    words.join(" | ")
}

fn generate_line(rng: &mut Lcg) -> String {
    let mut line = String::new();
    let pipelines = 1 + rng.below(4);
    let mut depth = 0;
    for i in 0..pipelines {
        let starts_list = if i == 0 {
            true
        } else {
            let connector = rng.pick(&[" && ", " || ", "; ", "\n", " && ", " || "]);
            line.push_str(connector);
            connector == "; " || connector == "\n"
        };
        if starts_list && rng.chance(15) {
            let dir = if depth > 0 {
                depth = 0;
                ".."
            } else {
                depth = 1;
                rng.pick(&["dir", "sub"])
            };
            line.push_str(&format!("cd {dir}; "));
        }
        line.push_str(&generate_pipeline(rng));
    }
    line
}

#[test]
fn generated_lines_match_bash() {
    let mut rng = Lcg(0x5eed_c0de);
    let lines: Vec<String> = (0..200).map(|_| generate_line(&mut rng)).collect();
    for line in &lines {
        if let Err(refusal) = corral::line::parse(line) {
            panic!("the generator wrote a line corral refuses: {line:?}: {refusal}");
        }
    }
    check_all(&lines);
}
