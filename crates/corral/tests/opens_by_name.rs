//! No module of the library opens a workspace path by name.
//!
//! corral's own process touches the workspace for the model (the file tools, `apply_patch`,
//! undo, the quarantine). Opening a path there by its name loses a race to a command
//! running beside the call: a directory swapped for a symlink to `~/.ssh` between a check
//! and the open, and the open reads the key. So every such open goes through the resolver,
//! `beneath.rs` (`Roots`, `open_beneath`: `openat2` with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS`), with the rules of `sandbox/sets.rs`.
//!
//! This test reads the library's source as Rust (`syn`), from `lib.rs` through every
//! `mod` that is compiled outside tests, and lists each call that reaches a file by its
//! name: `std::fs`'s functions, `File::open`/`create`, `OpenOptions::open`, a path's
//! `metadata`, `symlink_metadata`, `read_dir`, `canonicalize`, `read_link`, `exists`,
//! `is_file`, `is_dir`, and `rustix::fs`'s functions that take a path (or a `*at` one given
//! `CWD`). Each one outside the resolver must match a row of [`ALLOWED`]: the file, the
//! function it is in, and why its path cannot lie in the workspace (or why reading it by
//! name there is harmless). A new call without a row fails here, saying what to do; a row
//! that matches no call fails too, so the table says what the code does.
//!
//! It cannot pass by finding nothing: it asserts the calls it knows are there (the
//! resolver's own open of its roots, and every row's).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};

/// The resolver: every open in these files is by descriptor beneath a root, or opens the
/// root itself.
const RESOLVER: &[&str] = &["beneath.rs", "sandbox/sets.rs"];

/// A function whose calls by name are allowed, and why.
struct Allowed {
    /// The source file, relative to `crates/corral/src`.
    file: &'static str,
    /// The function the calls are in: `name`, or `Type::name` for a method.
    function: &'static str,
    /// Why its paths cannot lie in the workspace, or why by name is safe there.
    reason: &'static str,
}

const fn row(file: &'static str, function: &'static str, reason: &'static str) -> Allowed {
    Allowed {
        file,
        function,
        reason,
    }
}

/// Every call by name outside the resolver, a row per function. The reasons most rows
/// share:
const KERNEL: &str =
    "the kernel's own files (/proc, /sys/fs/cgroup, corral's cgroups), never a workspace path";
const STATE: &str = "corral's state directory (trace, captures, undo store, leash files): \
    outside the workspace, or, when --state lies in it, a protected .corral the box keeps \
    read-only, so no command can plant a link or a pipe there";
const OWN_DIRS: &str = "a directory corral makes for the run outside the workspace (the box's \
    private /tmp and skeleton, the denied programs' stubs, the shared caches)";
const BOX_DECIDES: &str = "stats or resolves a path to decide what the box mounts, hides or \
    reports; nothing is read or written through it, and the box enforces what it decides";
const PLANS: &str = "plans a command line before it runs, as the shell would see it (a \
    directory to cd to, a program, a redirect's or a glob's names); nothing is read or \
    written, and the command itself runs in the box";
const ASKS: &str = "decides whether to ask the person before a destructive command (what a \
    target holds, git's aliases and directory); nothing read is shown to the model, and \
    .git is read-only in the box";
const BOUNDS: &str = "canonicalizes a configured root (the workspace, a writable root) to \
    check a path's bounds; the file itself is then opened through beneath.rs";
const PERSON: &str = "a path the person names (a flag, the environment, their own config), \
    read for the person at the start, not for a call";
const PROJECT: &str = "the task loop's project detection (package.json, pyproject.toml), \
    for the person who started it, before any call";
const HOME_CONFIG: &str = "the person's configuration in their home (~/.gitconfig, \
    ~/.cargo/config.toml, a git include there), read at the run's open before any call and \
    written filtered into the box's own home, a directory corral makes outside the workspace";
const FILE_TOOL: &str = "words a file tool's answer after the resolver refused or planned \
    the path (its type, a link's text, its mode); contents go through beneath.rs";

const ALLOWED: &[Allowed] = &[
    row(
        "approve.rs",
        "TerminalApprover::approve",
        "/dev/tty, to ask the person at their terminal",
    ),
    row("call/never_granted.rs", "never", BOX_DECIDES),
    row("call/stub_refusals.rs", "mark_captured", STATE),
    row("capture/sink.rs", "create", STATE),
    row("capture/window.rs", "shown_need", STATE),
    row("capture/window.rs", "window", STATE),
    row(
        "config/git_dir.rs",
        "expand",
        "the type of .git and of each submodule's .git, to decide \
        what the box keeps read-only (their contents are read by read_small, through beneath.rs)",
    ),
    row(
        "config/git_dir.rs",
        "module_dirs",
        "lists .git/modules for the module git directories whose config, \
        hooks and info stay read-only: names and types only, nothing is read",
    ),
    row(
        "config/git_dir.rs",
        "own_mount",
        "the type and real path of the workspace's .git, to bind it over \
        itself (a mount point cannot be renamed): nothing is opened or read",
    ),
    row(
        "config/git_dir.rs",
        "pointed_to",
        "resolves the directory a .git pointer names, to mount \
        it read-only: nothing is opened through it (the pointer is read through beneath.rs)",
    ),
    row(
        "config/git_dir.rs",
        "submodule_gits",
        "lists .git/modules (inside the read-only .git) \
        for the submodules' .git to keep read-only: names only, each config read through beneath.rs",
    ),
    row(
        "config/git_dir.rs",
        "work_tree",
        "resolves the work tree a module's config names, to \
        mount its .git read-only: nothing is opened through it",
    ),
    row("cwd.rs", "Ctx::start_dir", PLANS),
    row("files/access.rs", "Ctx::file_roots", BOUNDS),
    row("files/access.rs", "Ctx::within_bounds", BOUNDS),
    row("files/read.rs", "Ctx::read_file", FILE_TOOL),
    row("files/write.rs", "Ctx::write_file", FILE_TOOL),
    row("gate.rs", "made_inside", PLANS),
    row(
        "gate.rs",
        "open_regular",
        "opens a script the line runs, to check it before it runs: \
        O_NONBLOCK and a regular-file check, as the gate's named-pipe fix made it",
    ),
    row("gate/by_effect/removal.rs", "At::removal", ASKS),
    row("gate/by_effect/removal.rs", "At::left_out", ASKS),
    row("gate/by_effect/removal.rs", "At::holds_left_out", ASKS),
    row("gate/by_effect/removal.rs", "At::select", ASKS),
    row("gate/git_effect.rs", "alias", ASKS),
    row("gate/git_effect.rs", "git_dir", ASKS),
    row("gate/git_effect.rs", "names_paths", ASKS),
    row("glob.rs", "expand", PLANS),
    row("handle/live.rs", "Live::read", STATE),
    row("held/disk.rs", "make_dirs", STATE),
    row("held/disk.rs", "make_new_dir", STATE),
    row("held/disk.rs", "names", STATE),
    row("held/disk.rs", "put", STATE),
    row("held/disk.rs", "read", STATE),
    row("held/disk.rs", "remove_tree", STATE),
    row(
        "identity.rs",
        "file_id",
        "identifies a program file (device, inode) to match rules: metadata only",
    ),
    row(
        "identity.rs",
        "is_multi_call",
        "resolves a program to its real name to match rules: metadata only",
    ),
    row("line_run.rs", "enter", PLANS),
    row("output.rs", "Pieces::open", STATE),
    row("output_call.rs", "Run::read_output", STATE),
    row("patch/mod.rs", "Ctx::plan_patch", FILE_TOOL),
    row("patch/mod.rs", "link_target", FILE_TOOL),
    row("patch/mod.rs", "read_only", FILE_TOOL),
    row("paths.rs", "canonical_dir", PERSON),
    row("paths.rs", "is_found_untold", PERSON),
    row(
        "pipeline.rs",
        "open",
        "a redirect's file for a stage run without corral's box (in a box \
        corral-sys opens them inside it): openat2 NO_SYMLINKS, O_NONBLOCK, a pipe refused",
    ),
    row(
        "pipeline.rs",
        "open_resolved",
        "as `open`: the fallback on kernels without openat2, O_NOFOLLOW",
    ),
    row(
        "pipeline.rs",
        "start_pipeline",
        "/dev/null, a stage's stdin when it has none",
    ),
    row("pipeline.rs", "still_there", PLANS),
    row("plan/mod.rs", "Planner::cd", PLANS),
    row("plan/unmodelled.rs", "unmodelled", PLANS),
    row("policy_files.rs", "PolicyFiles::discover", PERSON),
    row(
        "policy_files.rs",
        "linked_outside",
        "whether the workspace's corral.toml links outside \
        it: a link's text and target, so such a file is left out unparsed",
    ),
    row("redirect.rs", "resolve_path", PLANS),
    row("resolve.rs", "check", PLANS),
    row("run/mod.rs", "protected_paths", BOX_DECIDES),
    row("run/mod.rs", "state_paths", BOX_DECIDES),
    row(
        "sandbox/appeared.rs",
        "Absent::appeared",
        "the quarantine: whether a protected path absent \
        at the start appeared (metadata only); what did is moved out by move_out",
    ),
    row(
        "sandbox/appeared.rs",
        "Absent::before",
        "the quarantine: which protected paths are absent \
        at the run's start (metadata only)",
    ),
    row(
        "sandbox/appeared.rs",
        "copy",
        "the quarantine's copy across filesystems of what appeared: \
        links copied as links (never followed), into corral's state",
    ),
    row(
        "sandbox/appeared.rs",
        "is_git_dir",
        "the quarantine: whether a planted directory is a git \
        directory (metadata only)",
    ),
    row(
        "sandbox/appeared.rs",
        "move_out",
        "the quarantine: moves a planted .git out of the \
        workspace by rename, a link moved as a link, never followed",
    ),
    row("sandbox/caches.rs", "create", OWN_DIRS),
    row("sandbox/denied.rs", "DeniedWrite::new", BOX_DECIDES),
    row("sandbox/denied.rs", "covered_on_the_host", BOX_DECIDES),
    row("sandbox/denied.rs", "offerable", BOX_DECIDES),
    row("sandbox/enforcement.rs", "report_for", BOX_DECIDES),
    row("sandbox/home.rs", "covered_from", BOX_DECIDES),
    row("sandbox/home.rs", "hidden_in_home", BOX_DECIDES),
    row("sandbox/home.rs", "hidden_program", BOX_DECIDES),
    row(
        "sandbox/home.rs",
        "interpreter",
        "reads the `#!` line of a program in the covered home, outside every writable root \
         (`hidden_program` checks), to name the interpreter the box hides",
    ),
    row("sandbox/host_view.rs", "from_path", BOX_DECIDES),
    row("sandbox/home/from_path.rs", "Derived::offer", BOX_DECIDES),
    row("sandbox/home/from_path.rs", "derive", BOX_DECIDES),
    row("sandbox/home/from_path.rs", "refusal", BOX_DECIDES),
    row("sandbox/home/from_path.rs", "link_targets", BOX_DECIDES),
    row("sandbox/home/from_path.rs", "venv_of", BOX_DECIDES),
    row("sandbox/home.rs", "other_home", BOX_DECIDES),
    row("sandbox/home.rs", "put_back", BOX_DECIDES),
    row("sandbox/home.rs", "by_role", BOX_DECIDES),
    row("sandbox/home/derived/mod.rs", "write", HOME_CONFIG),
    row("sandbox/home/derived/mod.rs", "read", HOME_CONFIG),
    row("sandbox/home/derived/git.rs", "derive", HOME_CONFIG),
    row(
        "sandbox/home/derived/git.rs",
        "Context::include",
        HOME_CONFIG,
    ),
    row("sandbox/host_view.rs", "HostView::read", BOX_DECIDES),
    row("sandbox/host_view.rs", "Stamp::of", BOX_DECIDES),
    row("sandbox/layers.rs", "protected_paths", BOX_DECIDES),
    row("sandbox/mod.rs", "Active::drop", OWN_DIRS),
    row("sandbox/mod.rs", "OwnDirs::for_call", BOX_DECIDES),
    row("sandbox/mod.rs", "OwnDirs::tidy_skeleton", OWN_DIRS),
    row("sandbox/mod.rs", "foreign_owner", BOX_DECIDES),
    row("sandbox/mod.rs", "mountable", BOX_DECIDES),
    row("sandbox/mod.rs", "prepare", OWN_DIRS),
    row("sandbox/mod.rs", "roots", BOX_DECIDES),
    row("sandbox/probe.rs", "box_refuses_write", BOX_DECIDES),
    row("sandbox/programs.rs", "DeniedPrograms::drop", OWN_DIRS),
    row("sandbox/programs.rs", "DeniedPrograms::written", OWN_DIRS),
    row(
        "sandbox/programs.rs",
        "Files::of",
        "finds the files of a denied program on the PATH, to \
        mount a stub over each: metadata only",
    ),
    row(
        "sandbox/programs.rs",
        "Files::scan",
        "as Files::of, over a PATH directory",
    ),
    row("sandbox/reach.rs", "expand", BOX_DECIDES),
    row("sandbox/reach.rs", "outside_the_home", BOX_DECIDES),
    row("sandbox/reach/root_files.rs", "walk", BOX_DECIDES),
    row("sandbox/reach/root_files.rs", "Walk::dir", BOX_DECIDES),
    row(
        "sandbox/setid.rs",
        "Since::clear_in",
        "as undo/restore.rs roots_root",
    ),
    row(
        "sandbox/setid.rs",
        "clear",
        "chmod of /proc/self/fd/N, the file an O_PATH descriptor opened \
        beneath (O_NOFOLLOW, checked by fstat) holds: no workspace name is looked up",
    ),
    row("sandbox/shared.rs", "runtime_dir", BOX_DECIDES),
    row("sandbox/sockets.rs", "Walk::dir", BOX_DECIDES),
    row("sandbox/sockets.rs", "bound_paths", KERNEL),
    row("sandbox/sockets.rs", "modified", BOX_DECIDES),
    row("sandbox/sockets.rs", "to_hide", BOX_DECIDES),
    row(
        "autorun/copies.rs",
        "Copies::drop",
        "the call's copies of the held files, in the box's /tmp, outside the workspace; \
         removed without following a link",
    ),
    row(
        "autorun/copies.rs",
        "Copies::make",
        "makes the call's copy directory, new, in the box's /tmp (outside the workspace)",
    ),
    row(
        "autorun/copies.rs",
        "write_copy",
        "opens the directory the copies go in, in the box's /tmp (outside the workspace); \
         each copy is made new below it by descriptor, nothing followed",
    ),
    row("sandbox/resolver.rs", "Resolver::file_for", OWN_DIRS),
    row("sandbox/resolver.rs", "Resolver::write_file", OWN_DIRS),
    row("sandbox/temp.rs", "RunDirs::drop", OWN_DIRS),
    row("sandbox/temp.rs", "RunDirs::make", OWN_DIRS),
    row("sandbox/temp.rs", "RunDirs::private_temp", OWN_DIRS),
    row("sandbox/temp.rs", "TempBaseHold::drop", OWN_DIRS),
    row("sandbox/temp.rs", "private_temp", OWN_DIRS),
    row("spawn/cgroup.rs", "CgroupUnit::new", KERNEL),
    row("spawn/cgroup.rs", "Pooled::take", KERNEL),
    row("spawn/cgroup.rs", "bound_memory", KERNEL),
    row("spawn/cgroup.rs", "collect_procs", KERNEL),
    row("spawn/cgroup.rs", "in_a_unit", KERNEL),
    row("spawn/cgroup.rs", "oom_kills", KERNEL),
    row("spawn/cgroup.rs", "probe", KERNEL),
    row("spawn/cgroup.rs", "probe_v1", KERNEL),
    row("spawn/cgroup.rs", "remove_tree", KERNEL),
    row("spawn/cgroup.rs", "sweep_stale", KERNEL),
    row("spawn/leash.rs", "record", STATE),
    row("spawn/leash.rs", "sweep", STATE),
    row("spawn/limits.rs", "least_up", KERNEL),
    row("spawn/limits.rs", "mem_total", KERNEL),
    row("spawn/pid_namespace.rs", "read_may_join_mounts", KERNEL),
    row("task/project.rs", "detect", PROJECT),
    row("task/project.rs", "node", PROJECT),
    row("task/project.rs", "python", PROJECT),
    row("task/project.rs", "read_config", PROJECT),
    row("task/script.rs", "ScriptedModel::from_file", PERSON),
    row("trust.rs", "TrustStore::entries", STATE),
    row(
        "trust.rs",
        "TrustStore::trust",
        "writes the trust store (corral's state); the file a \
        person trusts is read by read_regular",
    ),
    row(
        "trust.rs",
        "key",
        "resolves the directory of a policy file to key its trust; nothing is opened",
    ),
    row(
        "trust.rs",
        "read_regular",
        "a policy file the person names or trusts, followed if a link \
        (a trusted link is the person's choice), but O_NONBLOCK and a regular-file check: a pipe \
        or a device is never read",
    ),
    row("undo/mod.rs", "Recorder::new", STATE),
    row("undo/prune.rs", "prune_when_due", STATE),
    row("undo/prune.rs", "sweep", STATE),
    row("undo/prune.rs", "tree_hashes", STATE),
    row(
        "undo/restore.rs",
        "roots_root",
        "opens the workspace root itself (canonical, the \
        person's); everything beneath it by descriptor",
    ),
    row(
        "undo/rules.rs",
        "Rules::new",
        "as undo/restore.rs roots_root",
    ),
    row("undo/store.rs", "Blobs::get", STATE),
    row("undo/store.rs", "Blobs::tail", STATE),
    row("undo/store.rs", "Blobs::put_through", STATE),
    row("undo/store.rs", "Blobs::put_once", STATE),
    row("undo/store.rs", "Held::take", STATE),
    row(
        "undo/store.rs",
        "free_bytes",
        "statvfs of the undo store's filesystem: no file is opened",
    ),
    row("undo/store.rs", "remove_blob", STATE),
    row("undo/store.rs", "tempfile_in", STATE),
    row("undo/tree.rs", "load", STATE),
    row("undo/tree.rs", "save", STATE),
    row("undo/walk.rs", "Walk::new", "as undo/restore.rs roots_root"),
    row(
        "verify/venv.rs",
        "find",
        "whether the workspace's .venv has bin/python, to put its bin first on the gate's \
        PATH; nothing is read or written through it, and what runs from there runs in the \
        gate's box",
    ),
];

/// The least number of calls by name the scan must find in the library.
const AT_LEAST: usize = 100;

#[test]
fn no_module_opens_a_workspace_path_by_name() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let calls = scan(&src);

    assert!(
        calls.len() >= AT_LEAST,
        "the scan found only {} calls by name in {src:?}, fewer than {AT_LEAST}: is it reading the source?",
        calls.len()
    );
    assert!(
        calls
            .iter()
            .any(|c| c.file == "beneath.rs" && c.function == "Roots::open"),
        "the scan did not find beneath.rs's open of its roots: {calls:#?}"
    );

    let mut used = vec![0usize; ALLOWED.len()];
    let mut unlisted = String::new();
    for call in &calls {
        if RESOLVER.contains(&call.file.as_str()) {
            continue;
        }
        match ALLOWED
            .iter()
            .position(|a| a.file == call.file && a.function == call.function)
        {
            Some(at) => used[at] += 1,
            None => {
                let _ = writeln!(
                    unlisted,
                    "  src/{}:{} in `{}`: {}",
                    call.file, call.line, call.function, call.what
                );
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "calls that reach a file by its name, outside the resolver and not in ALLOWED:\n{unlisted}\
         A path that can lie in the workspace is opened through beneath.rs (`Roots`, \
         `open_beneath`: by descriptor, nothing followed; a file read with O_NONBLOCK and a \
         type check). One that cannot gets a row in ALLOWED (crates/corral/tests/opens_by_name.rs): \
         its file, its function, and why."
    );

    let stale: Vec<String> = ALLOWED
        .iter()
        .zip(&used)
        .filter(|(_, n)| **n == 0)
        .map(|(a, _)| format!("  {} `{}`", a.file, a.function))
        .collect();
    assert!(
        stale.is_empty(),
        "rows of ALLOWED that match no call by name (remove them):\n{}",
        stale.join("\n")
    );
    for a in ALLOWED {
        assert!(
            a.reason.len() > 20,
            "the row for {} `{}` gives no reason",
            a.file,
            a.function
        );
    }
}

/// One call that reaches a file by its name.
#[derive(Debug)]
struct Call {
    file: String,
    line: usize,
    function: String,
    what: String,
}

/// Every call by name in the modules compiled outside tests, from `src/lib.rs` on.
fn scan(src: &Path) -> Vec<Call> {
    let mut calls = Vec::new();
    let mut files = vec![(src.join("lib.rs"), src.to_path_buf())];
    let mut seen = 0;
    while let Some((file, children_dir)) = files.pop() {
        seen += 1;
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let rel = file
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let mut scanner = Scanner {
            file: rel,
            uses: uses_of(&parsed),
            functions: Vec::new(),
            types: Vec::new(),
            calls: &mut calls,
            modules: Vec::new(),
            dir: children_dir.clone(),
        };
        scanner.visit_file(&parsed);
        files.extend(scanner.modules);
    }
    assert!(seen > 100, "read only {seen} module files under {src:?}");
    calls
}

/// `std::fs`'s functions that reach a file by its name.
const STD_FS: &[&str] = &[
    "canonicalize",
    "copy",
    "create_dir",
    "create_dir_all",
    "exists",
    "hard_link",
    "metadata",
    "read",
    "read_dir",
    "read_link",
    "read_to_string",
    "remove_dir",
    "remove_dir_all",
    "remove_file",
    "rename",
    "set_permissions",
    "soft_link",
    "symlink_metadata",
    "write",
];

/// `std::os::unix::fs`'s.
const STD_UNIX_FS: &[&str] = &["symlink", "chown", "lchown", "chroot"];

/// `rustix::fs`'s functions that take a path relative to the working directory.
const RUSTIX_FS: &[&str] = &[
    "access", "chmod", "chown", "link", "lstat", "mkdir", "open", "readlink", "rename", "rmdir",
    "stat", "statfs", "statvfs", "symlink", "truncate", "unlink",
];

/// A path's methods (taking no argument) that stat, list or resolve it by name.
const PATH_METHODS: &[&str] = &[
    "canonicalize",
    "exists",
    "is_dir",
    "is_file",
    "is_symlink",
    "metadata",
    "read_dir",
    "read_link",
    "symlink_metadata",
    "try_exists",
];

struct Scanner<'a> {
    file: String,
    /// Names the file's `use` items bring in, to the paths they stand for.
    uses: BTreeMap<String, Vec<String>>,
    /// The functions the visit is in, innermost last.
    functions: Vec<String>,
    /// The `impl` blocks' types the visit is in, innermost last.
    types: Vec<String>,
    calls: &'a mut Vec<Call>,
    /// The module files declared here, with the directory of their own children.
    modules: Vec<(PathBuf, PathBuf)>,
    dir: PathBuf,
}

impl Scanner<'_> {
    fn record(&mut self, span: proc_macro2::Span, what: String) {
        self.calls.push(Call {
            file: self.file.clone(),
            line: span.start().line,
            function: self
                .functions
                .last()
                .cloned()
                .unwrap_or_else(|| "(outside a function)".into()),
            what,
        });
    }

    /// The full path a call's path stands for, through the file's `use` items.
    fn resolve(&self, path: &syn::Path) -> Vec<String> {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        match self.uses.get(&segments[0]) {
            Some(full) => full
                .iter()
                .cloned()
                .chain(segments[1..].iter().cloned())
                .collect(),
            None => segments,
        }
    }

    fn function(&mut self, name: String, body: impl FnOnce(&mut Self)) {
        let name = match self.types.last() {
            Some(ty) if self.functions.is_empty() => format!("{ty}::{name}"),
            _ => name,
        };
        self.functions.push(name);
        body(self);
        self.functions.pop();
    }

    /// The calls inside a macro's arguments, where they parse as expressions.
    fn macro_args(&mut self, mac: &syn::Macro) {
        use syn::parse::Parser;
        let args = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        if let Ok(exprs) = args.parse2(mac.tokens.clone()) {
            for expr in &exprs {
                self.visit_expr(expr);
            }
        }
    }
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

impl<'ast> Visit<'ast> for Scanner<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            _ => return visit::visit_item(self, item),
        };
        if is_test_only(attrs) {
            return;
        }
        visit::visit_item(self, item);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let name = m.ident.to_string();
        match &m.content {
            None => {
                let file = match path_attr(&m.attrs) {
                    Some(p) => self.dir.join(p),
                    None if self.dir.join(format!("{name}.rs")).exists() => {
                        self.dir.join(format!("{name}.rs"))
                    }
                    None => self.dir.join(&name).join("mod.rs"),
                };
                self.modules.push((file, self.dir.join(&name)));
            }
            Some(_) => {
                let inner = self.dir.join(&name);
                let outer = std::mem::replace(&mut self.dir, inner);
                visit::visit_item_mod(self, m);
                self.dir = outer;
            }
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let ty = match &*i.self_ty {
            syn::Type::Path(p) => p.path.segments.last().unwrap().ident.to_string(),
            other => quote_type(other),
        };
        self.types.push(ty);
        let outer = std::mem::take(&mut self.functions);
        visit::visit_item_impl(self, i);
        self.functions = outer;
        self.types.pop();
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if is_test_only(&f.attrs) {
            return;
        }
        self.function(f.sig.ident.to_string(), |s| visit::visit_impl_item_fn(s, f));
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.function(f.sig.ident.to_string(), |s| visit::visit_item_fn(s, f));
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        self.function(f.sig.ident.to_string(), |s| {
            visit::visit_trait_item_fn(s, f)
        });
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*call.func {
            let full = self.resolve(&p.path);
            let full: Vec<&str> = full.iter().map(String::as_str).collect();
            let by_name = match full.as_slice() {
                ["std", "fs", f] => STD_FS.contains(f),
                ["std", "fs", "File", "open" | "create" | "create_new"] => true,
                ["std", "os", "unix", "fs", f] => STD_UNIX_FS.contains(f),
                ["rustix", "fs", f] if RUSTIX_FS.contains(f) => true,
                ["rustix", "fs", f] if f.ends_with("at") => call
                    .args
                    .first()
                    .is_some_and(|a| matches!(a, syn::Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "CWD"))),
                _ => false,
            };
            if by_name {
                self.record(
                    p.path.segments.last().unwrap().ident.span(),
                    full.join("::"),
                );
            }
        }
        visit::visit_expr_call(self, call);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let method = call.method.to_string();
        if call.args.is_empty()
            && PATH_METHODS.contains(&method.as_str())
            && !(method.starts_with("is_") && is_metadata(&call.receiver))
        {
            self.record(call.method.span(), format!(".{method}()"));
        }
        let opens = match method.as_str() {
            "open" => true,
            "create" => builds_dirs(&call.receiver),
            _ => false,
        };
        if opens && call.args.len() == 1 {
            self.record(call.method.span(), format!(".{method}(path)"));
        }
        visit::visit_expr_method_call(self, call);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.macro_args(mac);
        visit::visit_macro(self, mac);
    }
}

/// Whether a method chain starts at `DirBuilder::new()` (whose `create` takes a path;
/// `OpenOptions`'s takes a flag).
fn builds_dirs(mut expr: &syn::Expr) -> bool {
    loop {
        match expr {
            syn::Expr::MethodCall(m) => expr = &m.receiver,
            syn::Expr::Reference(r) => expr = &r.expr,
            syn::Expr::Paren(p) => expr = &p.expr,
            syn::Expr::Call(c) => {
                let syn::Expr::Path(p) = &*c.func else {
                    return false;
                };
                let names: Vec<String> = p
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                return names.ends_with(&["DirBuilder".into(), "new".into()]);
            }
            _ => return false,
        }
    }
}

/// Whether `expr` is a file's metadata or type already in hand (`is_dir` on it is no
/// stat): a call of `file_type()`/`metadata()`/`symlink_metadata()` (itself listed when by
/// name), or a value named as one.
fn is_metadata(expr: &syn::Expr) -> bool {
    const NAMES: &[&str] = &[
        "m",
        "meta",
        "metadata",
        "t",
        "ft",
        "kind",
        "file_type",
        "st",
    ];
    match expr {
        syn::Expr::MethodCall(m) => matches!(
            m.method.to_string().as_str(),
            "file_type" | "metadata" | "symlink_metadata"
        ),
        syn::Expr::Try(t) => is_metadata(&t.expr),
        syn::Expr::Paren(p) => is_metadata(&p.expr),
        syn::Expr::Call(c) => matches!(&*c.func, syn::Expr::Path(p)
            if p.path.segments.last().is_some_and(|s| s.ident == "symlink_metadata" || s.ident == "metadata")),
        syn::Expr::Path(p) => p
            .path
            .get_ident()
            .is_some_and(|i| NAMES.contains(&i.to_string().as_str())),
        _ => false,
    }
}

fn quote_type(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Reference(r) => quote_type(&r.elem),
        _ => "_".into(),
    }
}

/// The names a file's top-level `use` items bring in, each to the path it stands for.
fn uses_of(file: &syn::File) -> BTreeMap<String, Vec<String>> {
    fn walk(
        tree: &syn::UseTree,
        prefix: &mut Vec<String>,
        out: &mut BTreeMap<String, Vec<String>>,
    ) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) if n.ident == "self" => {
                if let Some(last) = prefix.last() {
                    out.insert(last.clone(), prefix.clone());
                }
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                full.push(n.ident.to_string());
                out.insert(n.ident.to_string(), full);
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                out.insert(r.rename.to_string(), full);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    walk(t, prefix, out);
                }
            }
            syn::UseTree::Glob(_) => {}
        }
    }
    struct Uses(BTreeMap<String, Vec<String>>);
    impl<'ast> Visit<'ast> for Uses {
        fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
            walk(&u.tree, &mut Vec::new(), &mut self.0);
        }
    }
    let mut uses = Uses(BTreeMap::new());
    uses.visit_file(file);
    uses.0
}
