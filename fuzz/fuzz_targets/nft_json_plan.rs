//! `xtnl nft -j -f` documents: arbitrary bytes through nft's JSON types and the front's plan
//! (on a replay of an empty capture: no kernel).
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::nft_json_plan(data));
