//! Every integration test of this crate in one binary, one module per file: one link
//! instead of one per file.

mod agent_corpus;
mod fixtures;
mod properties;
mod unit;
