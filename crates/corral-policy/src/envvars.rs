//! Environment variables that make a program run other code or read other
//! configuration. Assigning one in front of a command (`PATH=./bin ls`,
//! `LD_PRELOAD=x.so cat`, `env GIT_EXTERNAL_DIFF=./x git diff`) changes what
//! that command does as much as a different argv would, so:
//!
//! - the command is not known-safe ([`crate::safe::is_known_safe`]);
//! - the assignment is an [`crate::Act::Env`] check of its own: a rule in
//!   `[env]` decides (`deny = ["LD_*"]`, `allow = ["PYTHONPATH"]`), and
//!   without one the built-in default for a name below is `ask` (or the
//!   tier's default, when that is stricter).
//!
//! Assignments to other names get a decision only when an `[env]` rule
//! names them or `[defaults] env` is set.
//!
//! | names | why |
//! |---|---|
//! | `PATH` | changes which program a name runs |
//! | `LD_*` `DYLD_*` `GCONV_PATH` `GLIBC_TUNABLES` | the loader injects code into every program |
//! | `BASH_ENV` `ENV` `ZDOTDIR` `BASH_FUNC_*` `SHELLOPTS` `BASHOPTS` `PS4` `PROMPT_COMMAND` `IFS` `SHELL` | a shell reads code from them |
//! | `GIT_*` | git runs programs they name (`GIT_EXTERNAL_DIFF`, `GIT_SSH_COMMAND`, `GIT_CONFIG_*`, ...) |
//! | `PAGER` `MANPAGER` `EDITOR` `VISUAL` `BROWSER` `LESSOPEN` `LESSCLOSE` `*_ASKPASS` | name a program to run |
//! | `PYTHON*` `NODE_OPTIONS` `NODE_PATH` `PERL5OPT` `PERL5LIB` `PERLLIB` `PERL5DB` `RUBYOPT` `RUBYLIB` `LUA_INIT*` `LUA_PATH*` `LUA_CPATH*` `JAVA_TOOL_OPTIONS` `_JAVA_OPTIONS` `JDK_JAVA_OPTIONS` `CLASSPATH` `PHPRC` `PHP_INI_SCAN_DIR` `R_PROFILE*` `TCLLIBPATH` | an interpreter loads code or options from them |
//! | `CARGO_*` `RUSTC*` `RUSTDOC*` `RUSTFLAGS` `GOFLAGS` `GOTOOLCHAIN` `CC` `CXX` `LD` `AR` `MAKEFLAGS` `NPM_CONFIG_*` (any case) | a build tool runs the program or flags they name |
//! | `HOME` `XDG_CONFIG_HOME` `RIPGREP_CONFIG_PATH` `VIMINIT` `EXINIT` `MYVIMRC` `INPUTRC` `OPENSSL_CONF` `OPENSSL_ENGINES` `GNUPGHOME` `WGETRC` `CURL_HOME` | a program reads configuration (which can name programs) from them |

/// Exact names.
const NAMES: &[(&str, &str)] = &[
    ("PATH", "changes which program a name runs"),
    (
        "GCONV_PATH",
        "glibc loads conversion modules (code) from it",
    ),
    ("GLIBC_TUNABLES", "tunes the loader of every program"),
    ("BASH_ENV", "bash runs the file it names before any command"),
    ("ENV", "sh runs the file it names at startup"),
    ("ZDOTDIR", "zsh runs the startup files in it"),
    (
        "SHELLOPTS",
        "changes how every bash started runs its commands",
    ),
    (
        "BASHOPTS",
        "changes how every bash started runs its commands",
    ),
    ("PS4", "bash expands (and runs) it when tracing"),
    ("PROMPT_COMMAND", "bash runs it"),
    ("IFS", "changes how a shell splits words"),
    ("SHELL", "programs start it to run commands"),
    ("PAGER", "names a program to run"),
    ("MANPAGER", "names a program to run"),
    ("EDITOR", "names a program to run"),
    ("VISUAL", "names a program to run"),
    ("BROWSER", "names a program to run"),
    ("LESSOPEN", "less runs it on every file"),
    ("LESSCLOSE", "less runs it on every file"),
    ("NODE_OPTIONS", "node loads code (`--require`) from it"),
    ("NODE_PATH", "node loads modules from it"),
    ("PERL5OPT", "perl reads options (`-M`) from it"),
    ("PERL5LIB", "perl loads modules from it"),
    ("PERLLIB", "perl loads modules from it"),
    ("PERL5DB", "perl runs it as its debugger"),
    ("RUBYOPT", "ruby reads options (`-r`) from it"),
    ("RUBYLIB", "ruby loads libraries from it"),
    ("JAVA_TOOL_OPTIONS", "the JVM loads agents (code) from it"),
    ("_JAVA_OPTIONS", "the JVM loads agents (code) from it"),
    ("JDK_JAVA_OPTIONS", "the JVM loads agents (code) from it"),
    ("CLASSPATH", "the JVM loads classes from it"),
    ("PHPRC", "php reads `auto_prepend_file` (code) from its ini"),
    (
        "PHP_INI_SCAN_DIR",
        "php reads `auto_prepend_file` (code) from its ini",
    ),
    ("TCLLIBPATH", "tcl loads packages from it"),
    ("RUSTFLAGS", "rustc takes `-C linker=PROGRAM` from it"),
    ("GOFLAGS", "go takes `-toolexec PROGRAM` from it"),
    (
        "GOTOOLCHAIN",
        "go downloads and runs the toolchain it names",
    ),
    ("CC", "build tools run the compiler it names"),
    ("CXX", "build tools run the compiler it names"),
    ("LD", "build tools run the linker it names"),
    ("AR", "build tools run the archiver it names"),
    ("MAKEFLAGS", "make reads options (`--eval`) from it"),
    (
        "HOME",
        "programs read their configuration (which can name programs) from it",
    ),
    (
        "XDG_CONFIG_HOME",
        "programs read their configuration (which can name programs) from it",
    ),
    (
        "RIPGREP_CONFIG_PATH",
        "rg reads options (`--pre PROGRAM`) from it",
    ),
    ("VIMINIT", "vim runs its commands"),
    ("EXINIT", "vi runs its commands"),
    ("MYVIMRC", "vim runs the file it names"),
    ("INPUTRC", "readline reads key bindings from it"),
    ("OPENSSL_CONF", "openssl loads engines (code) named in it"),
    ("OPENSSL_ENGINES", "openssl loads engines (code) from it"),
    (
        "GNUPGHOME",
        "gpg reads its configuration (which can name programs) from it",
    ),
    ("WGETRC", "wget reads its configuration from it"),
    ("CURL_HOME", "curl reads its configuration from it"),
];

/// Prefixes.
const PREFIXES: &[(&str, &str)] = &[
    ("LD_", "the loader injects code into every program"),
    ("DYLD_", "the loader injects code into every program"),
    (
        "BASH_FUNC_",
        "bash defines a function from it, which can shadow any command",
    ),
    (
        "GIT_",
        "git runs programs it names or reads configuration from it",
    ),
    ("PYTHON", "python loads code or options from it"),
    ("LUA_INIT", "lua runs it"),
    ("LUA_PATH", "lua loads modules from it"),
    ("LUA_CPATH", "lua loads native modules from it"),
    ("R_PROFILE", "R runs the file it names"),
    (
        "CARGO_",
        "cargo runs programs it names (`CARGO_BUILD_RUSTC_WRAPPER`, ...)",
    ),
    ("RUSTC", "cargo runs the compiler or wrapper it names"),
    ("RUSTDOC", "cargo runs the program it names"),
];

/// Why assigning `name` changes what a command runs, or `None` if it is not
/// one of the names above.
pub fn risk(name: &str) -> Option<&'static str> {
    if let Some((_, why)) = NAMES.iter().find(|(n, _)| *n == name) {
        return Some(why);
    }
    if let Some((_, why)) = PREFIXES.iter().find(|(p, _)| name.starts_with(p)) {
        return Some(why);
    }
    if name.ends_with("_ASKPASS") {
        return Some("names a program to run");
    }
    // npm reads `npm_config_*` in any case (`npm_config_script_shell`).
    if name
        .get(..11)
        .is_some_and(|p| p.eq_ignore_ascii_case("npm_config_"))
    {
        return Some("npm takes configuration (`script-shell`, `node-options`) from it");
    }
    None
}
