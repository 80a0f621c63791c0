//! The iptables-restore format: arbitrary bytes as a restore file (the CLI refuses
//! non-UTF-8 input before parsing, so only UTF-8 reaches the parser). First byte: bit 0
//! picks IPv6.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::restore_parse(data));
