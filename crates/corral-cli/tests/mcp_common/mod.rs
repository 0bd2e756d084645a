//! Shared by the `corral mcp` tests: a scratch workspace and store, a real `corral mcp`
//! child driven by the rmcp client, and a client that records what the server sent it.
#![allow(dead_code)]
// Logging notifications are deprecated by SEP-2577; the server uses them on older protocols.
#![allow(deprecated)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RoleClient,
    RunningService,
};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{Value, json};

/// How the test client answers an approval question; `None`: it cannot be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Accept,
    Decline,
}

/// What the server sent the client, besides answers.
#[derive(Debug, Default)]
pub struct Seen {
    pub questions: Vec<String>,
    pub progress: Vec<ProgressNotificationParam>,
    pub logs: Vec<Value>,
}

pub struct TestClient {
    answer: Option<Answer>,
    seen: Arc<Mutex<Seen>>,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.answer.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("corral-test", "1"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.seen.lock().unwrap().questions.push(message);
        }
        Ok(match self.answer {
            Some(Answer::Accept) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({"for_session": false})),
            _ => ElicitResult::new(ElicitationAction::Decline),
        })
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.seen.lock().unwrap().progress.push(params);
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.seen.lock().unwrap().logs.push(params.data);
    }
}

pub struct Session {
    pub dir: tempfile::TempDir,
    pub client: RunningService<RoleClient, TestClient>,
    pub seen: Arc<Mutex<Seen>>,
}

pub fn corral_bin() -> &'static str {
    env!("CARGO_BIN_EXE_corral")
}

/// A scratch directory with `ws/` (holding `corral.toml` if given, trusted as a person
/// would with `corral policy trust`, in [`trust_store`]) and a store.
pub fn scratch(policy: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ws")).unwrap();
    if let Some(policy) = policy {
        let file = dir.path().join("ws/corral.toml");
        std::fs::write(&file, policy).unwrap();
        corral::TrustStore::at(trust_store(dir.path()))
            .trust(&file)
            .unwrap();
    }
    dir
}

/// Where a scratch keeps which policy files a person trusted.
pub fn trust_store(dir: &Path) -> PathBuf {
    dir.join("state/trusted-policies")
}

pub fn store(dir: &Path) -> PathBuf {
    dir.join("state/trace.db")
}

/// Everything runs without asking except what the test's policy says.
pub const PERMISSIVE: &str = "tier = \"permissive\"\napproval = \"on-request\"\n";

impl Session {
    /// `corral mcp --workspace ws` with `policy` as the workspace's corral.toml.
    pub async fn start(policy: Option<&str>, answer: Option<Answer>) -> Self {
        Self::start_with(policy, answer, &[]).await
    }

    /// [`Session::start`] with more flags for `corral mcp`.
    pub async fn start_with(policy: Option<&str>, answer: Option<Answer>, flags: &[&str]) -> Self {
        Self::start_speaking(policy, answer, flags, None).await
    }

    /// [`Session::start`] on the 2026-07-28 revision: `server/discover` instead of
    /// `initialize`, and approvals as input-required rounds.
    pub async fn start_modern(policy: Option<&str>, answer: Option<Answer>) -> Self {
        let modern = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        Self::start_speaking(policy, answer, &[], Some(modern)).await
    }

    async fn start_speaking(
        policy: Option<&str>,
        answer: Option<Answer>,
        flags: &[&str],
        lifecycle: Option<ClientLifecycleMode>,
    ) -> Self {
        Self::start_in(scratch(policy), answer, flags, lifecycle).await
    }

    /// Serve the scratch `dir` (from [`scratch`], or an ended session's [`Session::end`]):
    /// its workspace, store, trust and user config as they are.
    pub async fn start_in(
        dir: tempfile::TempDir,
        answer: Option<Answer>,
        flags: &[&str],
        lifecycle: Option<ClientLifecycleMode>,
    ) -> Self {
        let ws = dir.path().join("ws");
        let store = store(dir.path());
        let command = tokio::process::Command::new(corral_bin()).configure(|cmd| {
            cmd.arg("mcp")
                .arg("--workspace")
                .arg(&ws)
                .args(flags)
                .env("CORRAL_STORE", &store)
                .env("CORRAL_TRUST_STORE", trust_store(dir.path()))
                .env_remove("CORRAL_POLICY")
                .env("XDG_CONFIG_HOME", dir.path().join("config"))
                .env("XDG_CACHE_HOME", dir.path().join("cache"));
        });
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let client = TestClient {
            answer,
            seen: seen.clone(),
        };
        let client = match lifecycle {
            Some(lifecycle) => client
                .serve_with_lifecycle(transport, lifecycle)
                .await
                .unwrap(),
            None => client.serve(transport).await.unwrap(),
        };
        Self { dir, client, seen }
    }

    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    /// Close the session; its scratch directory stays, for [`Session::start_in`].
    pub async fn end(self) -> tempfile::TempDir {
        self.client.cancel().await.unwrap();
        self.dir
    }

    pub async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        self.client
            .call_tool(
                CallToolRequestParams::new(tool.to_string())
                    .with_arguments(arguments.as_object().unwrap().clone()),
            )
            .await
            .unwrap()
    }

    /// `corral trace ARGS --json` against this session's store.
    pub fn trace(&self, args: &[&str]) -> Value {
        let out = std::process::Command::new(corral_bin())
            .arg("trace")
            .args(args)
            .arg("--json")
            .env("CORRAL_STORE", store(self.dir.path()))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

/// The text of a result's content.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn field<'a>(result: &'a CallToolResult, name: &str) -> &'a Value {
    result
        .structured_content
        .as_ref()
        .and_then(|s| s.get(name))
        .unwrap_or(&Value::Null)
}

/// A marker no other process on the machine carries: a sleep length unique to this test.
pub fn marker(base: u32) -> String {
    format!("{base}.{}{:03}", std::process::id(), base)
}

#[allow(unused_imports)]
pub use corral_test_support::{processes_with, survivors_after};
