//! The fuzz targets' bodies (`fuzz/harness.rs`), run by `cargo test` on the committed seed
//! corpus (`fuzz/seeds/`) and on every input that once made a target fail
//! (`fuzz/regressions/TARGET/`): each is a regression test of the fix it led to. No kernel
//! is involved: these are parsers and decoders fed bytes.

#[path = "../fuzz/harness.rs"]
mod harness;

use std::path::Path;

fn replay(dir: &str, target: fn(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join(dir);
    let mut n = 0;
    let Ok(entries) = std::fs::read_dir(&root) else {
        return 0;
    };
    let mut paths: Vec<_> = entries.map(|e| e.expect("read dir").path()).collect();
    paths.sort();
    for p in paths {
        let bytes = std::fs::read(&p).expect("read input");
        let name = p.display().to_string();
        if std::panic::catch_unwind(|| target(&bytes)).is_err() {
            panic!("{name} fails its target again");
        }
        n += 1;
    }
    n
}

fn seeds_and_regressions(target: &str, f: fn(&[u8])) {
    let seeds = replay(&format!("seeds/{target}"), f);
    assert!(
        seeds > 0,
        "the seed corpus of {target} is in the repository"
    );
    replay(&format!("regressions/{target}"), f);
}

#[test]
fn ipt_parse_seeds_and_regressions() {
    seeds_and_regressions("ipt_parse", harness::ipt_parse);
}

#[test]
fn restore_parse_seeds_and_regressions() {
    seeds_and_regressions("restore_parse", harness::restore_parse);
}

#[test]
fn nft_decode_seeds_and_regressions() {
    seeds_and_regressions("nft_decode", harness::nft_decode);
}

#[test]
fn json_parse_seeds_and_regressions() {
    seeds_and_regressions("json_parse", harness::json_parse);
}

#[test]
fn xt_blob_seeds_and_regressions() {
    seeds_and_regressions("xt_blob", harness::xt_blob);
}

#[test]
fn xt_decode_seeds_and_regressions() {
    seeds_and_regressions("xt_decode", harness::xt_decode);
}

/// Found by ipt_parse: a bare `-m tcp` (or `-m udp`) was dropped from the encoding, so `-S`
/// printed the rule without it and `-D` with the same spec could not find iptables-nft's
/// rule (which keeps the x_tables match with any ports).
#[test]
fn bare_tcp_and_udp_matches_survive_encoding() {
    for line in [
        "-t nat -A vcld-5205 -i eth1 -p tcp -m tcp -j DNAT --to-destination 10.1.2.3:3389",
        "-A INPUT -p udp -m udp -j ACCEPT",
        "-A INPUT -p tcp -m tcp -m comment --comment x -j ACCEPT",
    ] {
        let mut data = vec![0u8];
        data.extend_from_slice(line.as_bytes());
        harness::ipt_parse(&data);
    }
}

/// Found by xt_blob: a getinfo reply whose valid hook points at no entry decoded to a table
/// without that hook's chain, which the backend then laid out with the hook at offset 0.
#[test]
fn a_valid_hook_without_its_chain_is_refused() {
    let input = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/regressions/xt_blob/hook-without-chain"),
    )
    .expect("the regression input is in the repository");
    harness::xt_blob(&input);
}

#[test]
fn ext_decode_seeds_and_regressions() {
    seeds_and_regressions("ext_decode", harness::ext_decode);
}

#[test]
fn nft_json_plan_seeds_and_regressions() {
    seeds_and_regressions("nft_json_plan", harness::nft_json_plan);
}
