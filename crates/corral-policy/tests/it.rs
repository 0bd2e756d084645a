//! Every integration test of this crate in one binary, one module per file: one link
//! instead of one per file.

mod approval_modes;
mod bypass_corpus;
mod config_errors;
mod config_layers;
mod interactive;
mod interpreter_one_liners;
mod known_safe;
mod known_safe_review;
mod no_panic;
mod precedence_table;
mod unparsable_inner_line;
mod untrusted_file;
