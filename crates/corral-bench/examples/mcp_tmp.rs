#[path = "../src/mcp_roundtrip.rs"]
mod mcp_roundtrip;
#[path = "../src/stats.rs"]
#[allow(dead_code)]
mod stats;
fn main() {
    mcp_roundtrip::run();
}
