//! The x_tables extension payloads (`xtnl-xt`): arbitrary bytes as the `info` of a match or
//! target that the kernel reports (nft_compat's NFTA_MATCH_INFO / NFTA_TARGET_INFO, or an
//! x_tables blob). First byte: which extension and revision; second: the family. Whatever
//! decodes must re-encode to a payload that decodes to the same value.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::xt_decode(data));
