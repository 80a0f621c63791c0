//! The iptables command-line grammar: arbitrary bytes as command lines.
//!
//! First byte: bit 0 picks IPv6 as the default family; bit 1 splits the rest into arguments
//! at NUL bytes (any argument content), otherwise each line is split the way a restore file
//! line is (`split_words`). Every command that parses is then encoded for its table, decoded
//! back as a listing would, and printed: none of it may panic, and what `-S` would print
//! for the rule read back must be what it prints for the rule as parsed.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::ipt_parse(data));
