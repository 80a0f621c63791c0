//! Arbitrary bytes as what the kernel sends on the NETLINK_NETFILTER socket: one datagram of
//! netlink messages, iterated as the transport does (ACKs and errors with extended-ack
//! TLVs), each nf_tables message decoded as a listing decodes it: table, chain, rule (every
//! expression kind), set elements, generation; each rule then decoded to the model
//! (`nft::codec`) and to iptables' view (`ipt::compat::decode`, which types the x_tables
//! payloads), and printed. Nothing here may panic or allocate without bound.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::nft_decode(data));
