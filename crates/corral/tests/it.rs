//! Every integration test of this crate in one binary, one module per file: one link
//! instead of one per file.
//!
//! Apart, each in a binary of its own: `containment_between_calls.rs` (they watch the test process itself).

mod common;
mod pty_common;
mod task_common;

mod agent_corpus_host_shell;
mod apply_patch;
mod approvals;
mod argv_is_literal;
mod bad_requests;
mod both_streams_drain;
mod bytes_pass_through;
mod calls_after_a_kill;
mod containment_cgroup_escape;
mod containment_daemon;
mod containment_fork_bomb;
mod containment_report;
mod containment_respawn;
mod containment_timeout_tree;
mod environment;
mod file_tools;
mod handle_keeps_its_box;
mod handle_lifecycle;
mod handle_polls;
mod handle_stdin;
mod here_document_is_checked;
mod host_shell;
mod leftovers_are_ended;
mod model_providers;
mod module_graph;
mod output_window;
mod patch_properties;
mod persist_cwd;
mod policy_bypasses;
mod policy_files;
mod policy_refuses_before_spawning;
mod project_detect;
mod pty_bash_state;
mod pty_bracketed_paste;
mod pty_ctrl_c;
mod pty_ended;
mod pty_less_screen;
mod pty_python_repl;
mod pty_resize;
mod pty_terminal_queries;
mod refusal_advice_works;
mod review_regressions;
mod sandbox_confines;
mod sandbox_network_allow;
mod sandbox_protected_appears;
mod sandbox_read_denies;
mod sandbox_retry;
mod sandbox_run_network;
mod shell_checks_before_spawning;
mod shell_matches_bash;
mod shell_pipelines;
mod shell_plan_fixtures;
mod stdin_is_null;
mod task_run;
mod task_tools;
mod timeout_kills_group;
mod trace_rows;
mod unavailable_program;
mod yield_to_handle;
