//! What a command would run besides itself, as each decoder reports it.

/// What a command would run besides itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Inner {
    /// Another command, with these arguments (possibly more unknown ones,
    /// as for `xargs`).
    Argv(Vec<String>),
    /// A shell line (`sh -c LINE`, `watch`, `su -c`).
    Line(String),
    /// A zsh line: parsed like a shell line, with zsh's own rules for what
    /// the grammar does not know (`=rm` is the path of `rm`).
    ZshLine(String),
    /// Environment assignments the command makes for what it runs
    /// (`env NAME=value cmd`, `sudo NAME=value cmd`).
    Assign(Vec<(String, String)>),
    /// It runs a command corral cannot see (`parallel` reading commands from
    /// stdin, `fish -c`, `xargs sh -c`): decided like an unparsable line.
    /// The text says why.
    Opaque(String),
    /// An interpreter's inline program (`python -c`): cannot be checked.
    OneLiner,
    /// The command it runs (also an [`Inner::Argv`] step, with the words known) gets
    /// more arguments when it runs (`xargs git`, `find -exec git {}`): its words with
    /// [`UNKNOWN`] where they go, so a rule over arguments they could complete (`git
    /// push*`) is asked about.
    MoreArgs(Vec<String>),
    /// A script file (or stdin, `-`): cannot be checked.
    Script(String),
}

/// One thing a command would run, and how it gets there (`"env"`,
/// `"bash -c"`, `"find -exec"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub via: String,
    pub inner: Inner,
}

impl Step {
    pub(super) fn new(via: impl Into<String>, inner: Inner) -> Step {
        Step {
            via: via.into(),
            inner,
        }
    }
}

/// A decoder's own copy of the words it passes on.
pub(super) fn owned(args: &[String]) -> Vec<String> {
    args.to_vec()
}

/// A word no command line contains: put where a launcher inserts words it
/// reads at run time (`xargs`' stdin, `find`'s `{}`), to see whether they
/// would be run as a command.
pub(crate) const UNKNOWN: &str = "\u{0}unknown";

/// How a launcher that adds words at run time (`xargs`, `find -exec … {}`, `parallel`)
/// learns whether those words would be run as a command: given the step's name and the
/// argv with [`UNKNOWN`] where the words go, an [`Inner::Opaque`] step when they would.
pub(super) type RunsUnknown = fn(&str, &[String]) -> Option<Step>;
