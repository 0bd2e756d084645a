//! Approvals: when the policy says *ask*, an [`Approver`] answers for the person.
//!
//! The approver sees exactly what would run (every stage's argv, program and directory,
//! every redirect) and the rule that asked, and answers once for the whole call. A `deny`
//! never reaches an approver; an approval never lifts a deny.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use corral_policy::{Act, Decision};

use crate::person;

/// One thing in a call that needs approval.
#[derive(Debug, Clone)]
pub struct AskedItem {
    /// `exec` for a stage, `read`/`write` for a redirect.
    pub act: Act,
    /// The argv of the stage (for a redirect: of the stage that has it).
    pub argv: Vec<String>,
    /// Some argument or assignment of the stage is bytes that are not UTF-8, shown in
    /// `argv` escaped (see [`crate::os_text::OsText`]); an approval of it is remembered apart from
    /// an argv of the same text.
    pub bytes: bool,
    /// The program the stage runs, when it was found.
    pub program: Option<PathBuf>,
    /// The directory the stage runs in.
    pub cwd: PathBuf,
    /// For a redirect, the resolved file.
    pub path: Option<PathBuf>,
    /// The decision that asked: effect, target, rule, layer, origin.
    pub decision: Decision,
}

/// What an approver is asked.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// `exec` or `shell`; `rerun-sandboxed` and `allow-domain` for what widens the sandbox.
    pub tool: String,
    /// The line as asked, for `shell`.
    pub line: Option<String>,
    /// Everything that needs approval, in the order written.
    pub items: Vec<AskedItem>,
}

impl ApprovalRequest {
    /// The one-sentence question a person is asked, naming the programs and directory:
    /// ``Allow `cargo publish --dry-run` in crates/app?``. Every argv, path and name in it
    /// is rendered by [`crate::person`], so what the person reads is what would run.
    pub fn question(&self, workspace: &Path) -> String {
        // A domain the sandbox's proxy refused: the question is about the domain, and the
        // answer widens the box (see the sandbox's `widen`).
        if self.tool == "allow-domain"
            && let Some(item) = self.items.first()
        {
            return one_line(&item.decision.target);
        }
        // A change a call made to a file a host program runs, held (see `autorun`).
        if self.tool == "apply-held"
            && let Some(item) = self.items.first()
            && let Some(path) = &item.path
        {
            let shown = path.strip_prefix(workspace).unwrap_or(path);
            return format!(
                "Apply the call's change to {} ({})?",
                person::path(shown),
                one_line(&item.decision.target)
            );
        }
        let what: Vec<String> = self
            .items
            .iter()
            .map(|i| match (&i.act, &i.path) {
                (Act::Exec, _) | (_, None) => format!("`{}`", person::argv(&i.argv)),
                (act, Some(path)) => format!("{act} {}", person::path(path)),
            })
            .collect();
        let cwd = self
            .items
            .first()
            .map(|i| i.cwd.as_path())
            .unwrap_or(workspace);
        let cwd = match cwd.strip_prefix(workspace) {
            Ok(rel) if rel.as_os_str().is_empty() => "the workspace root".to_string(),
            Ok(rel) => person::path(rel),
            Err(_) => person::path(cwd),
        };
        format!("Allow {} in {cwd}?", what.join(", "))
    }

    /// Everything a person is shown before answering, on a terminal or in an MCP client:
    /// the [question](Self::question), then for each item the program as resolved, the
    /// argv, the directory and the rule that asked, then what approving lifts.
    ///
    /// ```text
    /// corral: Allow `git clean -fdx` in the workspace root?
    ///   program: /usr/bin/git
    ///   argv:    git clean -fdx
    ///   in:      /home/me/app
    ///   rule:    ask   exec  git clean -fdx  (rule "git clean*" in layer workspace, …)
    /// Approving lets this call run once, past the rule that asked; it lifts no deny.
    /// ```
    pub fn message(&self, workspace: &Path) -> String {
        let mut out = format!("corral: {}", self.question(workspace));
        if self.tool == "apply-held" {
            // The diff, as the held store renders it (every line escaped, clipped).
            if let Some(diff) = &self.line {
                out.push('\n');
                out.push_str(diff.trim_end());
            }
            out.push('\n');
            out.push_str(self.lifts());
            return out;
        }
        if let Some(line) = &self.line {
            out.push_str(&format!("\n  line:    {}", one_line(line)));
        }
        for item in &self.items {
            let program = item
                .program
                .as_deref()
                .map_or_else(|| "not found".to_string(), person::path);
            let bytes = if item.bytes {
                "  (bytes that are not UTF-8 shown as \\xHH)"
            } else {
                ""
            };
            out.push_str(&format!(
                "\n  program: {program}\n  argv:    {}{bytes}\n  in:      {}\n  rule:    {}",
                person::argv(&item.argv),
                person::path(&item.cwd),
                one_line(&item.decision.to_string())
            ));
        }
        out.push('\n');
        out.push_str(self.lifts());
        out
    }

    /// What a yes lifts, in words.
    fn lifts(&self) -> &'static str {
        match self.tool.as_str() {
            "rerun-sandboxed" => {
                "Approving reruns this call in the sandbox with the path above writable, \
                 for this call only; nothing else in the box changes."
            }
            "allow-domain" => {
                "Approving lets the sandbox's network proxy reach that domain for the rest \
                 of the run, and reruns this call."
            }
            "apply-held" => {
                "Approving writes this change to the workspace now; declining keeps it held \
                 (`corral review` applies or drops it later)."
            }
            _ => "Approving lets this call run once, past the rule that asked; it lifts no deny.",
        }
    }
}

/// Text a model chose, on one line as a person reads it: escaped, and clipped to
/// [`person::ARGV_MAX`] bytes with its length stated.
fn one_line(s: &str) -> String {
    corral_line::visible::clipped(s, person::ARGV_MAX, |part| {
        person::escaped(part, person::Lines::Escape)
    })
    .into_owned()
}

/// An approver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Run it this once.
    Approve,
    /// Run it, and the same argvs (exactly) for the rest of the run without asking.
    ApproveForRun,
    /// Run it, and any argv that starts with this prefix for the rest of the run.
    ApprovePrefix(Vec<String>),
    /// Do not run it; the reason is passed on to the model.
    Deny(Option<String>),
    /// Do not run it, and end the run.
    Abort(Option<String>),
}

/// Answers for a person when the policy says *ask*.
pub trait Approver: Send + Sync + std::fmt::Debug {
    /// A short name recorded with every answer (`terminal`, `approve-all`, an MCP client).
    fn name(&self) -> &str;
    /// Decide about `request`. `workspace` is for naming directories relative to it.
    fn approve(&self, request: &ApprovalRequest, workspace: &Path) -> Approval;
}

/// Approves everything it is asked (`--yes`). Denies still refuse: they never reach it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApproveAll;

impl Approver for ApproveAll {
    fn name(&self) -> &str {
        "approve-all"
    }
    fn approve(&self, _: &ApprovalRequest, _: &Path) -> Approval {
        Approval::Approve
    }
}

/// Denies everything it is asked: for a run with nobody to ask.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAll;

impl Approver for DenyAll {
    fn name(&self) -> &str {
        "deny-all"
    }
    fn approve(&self, _: &ApprovalRequest, _: &Path) -> Approval {
        Approval::Deny(Some(
            "no one is there to approve it: allow it by a rule, or give the run an approver".into(),
        ))
    }
}

/// Asks the person at the controlling terminal (`/dev/tty`), so it works while stdout
/// and stdin are redirected. Without a terminal, it denies and says so.
#[derive(Debug, Clone, Copy, Default)]
pub struct TerminalApprover;

impl Approver for TerminalApprover {
    fn name(&self) -> &str {
        "terminal"
    }

    fn approve(&self, request: &ApprovalRequest, workspace: &Path) -> Approval {
        let Ok(tty) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
        else {
            return Approval::Deny(Some(
                "approval needed but there is no terminal to ask on: pass --yes, or allow it with --allow".into(),
            ));
        };
        let mut out = match tty.try_clone() {
            Ok(t) => t,
            Err(e) => return Approval::Deny(Some(format!("cannot write to the terminal: {e}"))),
        };
        let mut input = BufReader::new(tty);
        let _ = writeln!(out, "{}", request.message(workspace));
        loop {
            let _ = write!(
                out,
                "  [y] yes  [a] yes, and again this run  [n] no  [q] no, and end the run: "
            );
            let _ = out.flush();
            let mut answer = String::new();
            if input.read_line(&mut answer).unwrap_or(0) == 0 {
                return Approval::Deny(Some("the terminal closed before an answer".into()));
            }
            match answer.trim() {
                "y" | "Y" | "yes" => return Approval::Approve,
                "a" | "A" | "always" => return Approval::ApproveForRun,
                "n" | "N" | "no" | "" => {
                    return Approval::Deny(Some("the person at the terminal said no".into()));
                }
                "q" | "Q" | "quit" => {
                    return Approval::Abort(Some(
                        "the person at the terminal ended the run".into(),
                    ));
                }
                _ => continue,
            }
        }
    }
}
