//! A program that drives iptables as a library would (tests/clients/iptables_client.py, in
//! Python: `--version` parsing at construction as coreos/go-iptables does, create, list,
//! check, delete, `-S CHAIN N`, `-L -n -v -x` parsed into fields) runs unchanged on xtnl
//! installed as `iptables`, and prints the same transcript as against the real iptables:
//! iptables-nft for the nf_tables backend, iptables-legacy for the x_tables backend.

mod common;

use std::path::Path;

use common::twin::{Side, links, text};
use common::{in_netns, private_lock_path, run_env};

fn client() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients/iptables_client.py")
        .to_str()
        .expect("UTF-8 path")
        .to_owned()
}

fn transcript(program: String, env: Vec<(&'static str, &'static str)>) -> String {
    in_netns(move || {
        let lock = private_lock_path();
        let lock = lock.to_str().expect("UTF-8").to_owned();
        let mut e: Vec<(&str, &str)> = env;
        e.push(("XTABLES_LOCKFILE", &lock));
        let o = run_env("python3", &[&client(), &program], &e);
        assert!(o.status.success(), "client against {program}: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    })
}

fn same_transcript(side: Side) {
    let names = side.link_names();
    let dir = links(
        &format!("client-{side:?}"),
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let theirs = transcript(side.oracle("iptables"), Vec::new());
    let (ours, env) = side.ours(&dir, "iptables");
    let ours = transcript(ours.to_str().expect("UTF-8").to_owned(), env);
    assert_eq!(
        ours,
        theirs,
        "transcripts differ (xtnl left, {} right)",
        side.oracle("iptables")
    );
}

#[test]
fn library_client_runs_unchanged_nft() {
    common::require_kernel!();
    same_transcript(Side::Nft);
}

#[test]
fn library_client_runs_unchanged_legacy() {
    common::require_kernel!();
    same_transcript(Side::Legacy);
}
