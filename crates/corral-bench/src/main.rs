//! `cargo run --release -p corral-bench -- [NAME...]`: corral's figures.
//! `CORRAL_BENCH_ROUNDS=N` cuts the benches that read it to at most N rounds.
//!
//! Every figure is a ratio against a baseline measured in the same process, in the same
//! run, interleaved where that makes sense: these machines are noisy, and a ratio survives
//! noise that an absolute number does not. Nothing here asserts; BENCHMARKS.md records what
//! was measured and how.

#![forbid(unsafe_code)]

mod box_layers;
mod capture;
mod capture_past_cap;
mod cli_startup;
mod denied_programs;
mod exec_spaced;
mod exec_true;
mod failure_lines;
mod failure_scan;
mod floor;
mod git_record;
mod handles;
mod held_class;
mod keystroke;
mod mcp_http_load;
mod mcp_peer;
mod mcp_roundtrip;
mod mcp_user;
mod model_reads;
mod offline_listener;
mod one_shot;
mod otlp_export;
mod phases;
mod phases_sandboxed;
mod policy_check;
mod probes;
mod proxy_overhead;
mod python_client;
mod root_files;
mod run_network;
mod sandbox_overhead;
mod shell;
mod stats;
mod trace_phases;
mod undo_record;

fn main() {
    // This binary started again by a bench, to take steps in a process of their own.
    if let Ok(role) = std::env::var(one_shot::WORKER) {
        match role.as_str() {
            "probes" => probes::worker(),
            role => one_shot::worker(role),
        }
        return;
    }
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let all: &[(&str, fn())] = &[
        ("exec-true", exec_true::run),
        ("exec-phases", phases::run),
        ("exec-phases-sandboxed", phases_sandboxed::run),
        ("floor", floor::run),
        ("exec-spaced", exec_spaced::run),
        ("cli-startup", cli_startup::run),
        ("trace-step", exec_true::trace_step),
        ("trace-phases", trace_phases::run),
        ("capture", capture::run),
        ("capture-past-cap", capture_past_cap::run),
        ("failure-lines", failure_lines::run),
        ("failure-scan", failure_scan::run),
        ("parse-plan", shell::parse_plan),
        ("pipeline", shell::pipeline),
        ("policy-check", policy_check::run),
        ("kill-tree", handles::kill_tree),
        ("poll-latency", handles::poll_latency),
        ("unpolled-rss", handles::unpolled_rss),
        ("sandbox-overhead", sandbox_overhead::run),
        ("held-class", held_class::run),
        ("box-layers", box_layers::run),
        ("root-files", root_files::run),
        ("denied-programs", denied_programs::run),
        ("run-network", run_network::run),
        ("offline-listener", offline_listener::run),
        ("proxy-overhead", proxy_overhead::run),
        ("keystroke", keystroke::run),
        ("mcp-roundtrip", mcp_roundtrip::run),
        ("mcp-peer", mcp_peer::run),
        ("mcp-user", mcp_user::run),
        ("model-reads", model_reads::run),
        ("mcp-http-load", mcp_http_load::run),
        ("otlp-export", otlp_export::run),
        ("undo-record", undo_record::run),
        ("git-record", git_record::run),
    ];
    for &(name, bench) in all {
        if wanted.is_empty() || wanted.iter().any(|w| w == name) {
            println!("== {name}");
            bench();
        }
    }
}
