//! The extension registry's decoders and printers (`crates/xtnl-ipt/src/ext/`): arbitrary bytes as the
//! payload of an nft_compat match or target, read back in an iptables table, printed by
//! `-S` and `-L`, parsed back. See `harness::ext_decode`.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::ext_decode(data));
