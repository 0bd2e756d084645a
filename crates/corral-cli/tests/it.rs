//! Every integration test of this crate in one binary, one module per file: one link
//! instead of one per file.

mod common;
mod mcp_common;
mod mcp_raw;
mod otlp;
#[path = "../../corral/tests/task_common/mod.rs"]
mod task_common;

mod abandoned_runs;
mod bytes_pass_through;
mod closed_stdout;
mod container_image;
mod corral_dies;
mod environment;
mod exit_codes;
mod help_and_reports;
mod helper_environment;
mod inherited_signals;
mod linking;
mod mcp_approval;
mod mcp_cancel;
mod mcp_default_posture;
mod mcp_disconnect;
mod mcp_exec_shell;
mod mcp_file_tools;
mod mcp_handles;
mod mcp_http;
mod mcp_killed;
mod mcp_malformed;
mod mcp_nonzero_exit;
mod mcp_persist_cwd;
mod mcp_progress;
mod mcp_refused;
mod mcp_sandbox;
mod mcp_stdio_every_message_answered;
mod mcp_terminal;
mod mcp_tools_list;
mod ordinary_user;
mod otlp_export;
mod passthrough;
mod patch_like_codex;
mod policy_command;
mod policy_explains;
mod policy_trust;
mod python_clients;
mod run_command;
mod run_headless;
mod run_interrupted;
mod sandbox_flags;
mod shell_command;
mod shell_statuses;
mod shell_tty_attached;
mod signals;
mod store_errors;
mod store_faults;
mod trace_commands;
