//! x_tables blobs (`IPT_SO_GET_INFO` + `IPT_SO_GET_ENTRIES` replies) through the legacy
//! backend's decoder, and the layout round trip of whatever decodes.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::xt_blob(data));
