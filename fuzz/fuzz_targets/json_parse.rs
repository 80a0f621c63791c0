//! `xtnl apply` JSON documents: arbitrary bytes through the document parser and its
//! validation (schema, ports, addresses, chain names, iptables rule texts).
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::json_parse(data));
