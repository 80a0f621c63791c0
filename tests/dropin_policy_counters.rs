//! The policy counters of iptables' built-in chains (`:INPUT DROP [12:3456]`, `-P INPUT DROP
//! -c 12 3456`, `policy DROP 12 packets, 3456 bytes`), compared with the real tools in twin
//! namespaces: iptables-nft for the nf_tables backend (`NFTA_CHAIN_COUNTERS` of the base
//! chain), iptables-legacy for x_tables. Each tool restores with `-c` and the other saves
//! and lists; restore without `-c`, with `--noflush`, `:BUILTIN -`, user chains' `[p:b]`,
//! `-Z`, `-Z CHAIN`, `-L -Z`, `-P`, and packets meeting the policy afterwards; tables filter,
//! nat, mangle, raw and IPv6.

mod common;

use common::private_lock_path;
use common::twin::{Side, Step, links, twin_run};

fn w(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_owned).collect()
}

fn restore(tool: &str, args: &str, input: &str) -> Step {
    Step {
        stdin: Some(input.to_owned()),
        ..Step::new(tool, w(args))
    }
}

fn setup_restore(tool: &str, args: &str, input: &str) -> Step {
    Step {
        setup: true,
        ..restore(tool, args, input)
    }
}

fn setup(tool: &str, args: &str) -> Step {
    Step {
        setup: true,
        ..Step::new(tool, w(args))
    }
}

fn sh(line: &str) -> Step {
    Step::new("sh", vec!["-c".into(), line.into()])
}

/// The saved ruleset without its dated comment lines.
fn real_save(args: &str) -> Step {
    sh(&format!("$REAL_SAVE {args} | grep -v '^#'"))
}

fn real_save6(args: &str) -> Step {
    sh(&format!("$REAL_SAVE6 {args} | grep -v '^#'"))
}

fn ours_save(args: &str) -> Step {
    sh(&format!("$SAVE {args} | grep -v '^#'"))
}

const V4: &str = "*raw\n:PREROUTING ACCEPT [1:10]\n:OUTPUT DROP [2:20]\nCOMMIT\n\
*mangle\n:PREROUTING ACCEPT [3:30]\n:INPUT ACCEPT [4:40]\n:FORWARD DROP [5:50]\n:OUTPUT ACCEPT [6:60]\n:POSTROUTING ACCEPT [7:70]\n:m - [8:80]\n[9:90] -A m -j ACCEPT\nCOMMIT\n\
*nat\n:PREROUTING ACCEPT [11:110]\n:INPUT ACCEPT [12:120]\n:OUTPUT ACCEPT [13:130]\n:POSTROUTING ACCEPT [14:140]\nCOMMIT\n\
*filter\n:INPUT DROP [12:3456]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [7:890]\n:c - [1:2]\n[5:600] -A INPUT -s 192.0.2.1/32 -j ACCEPT\n[3:4] -A c -j ACCEPT\nCOMMIT\n";

const V6: &str = "*filter\n:INPUT ACCEPT [21:2100]\n:FORWARD DROP [22:2200]\n:OUTPUT ACCEPT [1234567890123:9876543210987]\n[0:0] -A INPUT -s 2001:db8::1/128 -j ACCEPT\nCOMMIT\n";

/// `(name, steps)`: each compared step's status and output, then the saved rulesets.
///
/// iptables-legacy 1.8.9 (kernel 6.18) zeroes every policy counter of a table whenever it
/// changes the table (`-A`, `-P`, `-Z CHAIN`, a `--noflush` restore), counted traffic
/// included, and a refused `restore -c` still creates the table; xtnl's x_tables backend
/// keeps them (docs/drop-in.md). The cases from [`NFT_ONLY`] on are compared with
/// iptables-nft only.
const NFT_ONLY: usize = 3;

fn cases() -> Vec<(&'static str, Vec<Step>)> {
    vec![
        (
            "xtnl restores -c; the real tool saves and lists",
            vec![
                restore("iptables-restore", "-c", V4),
                restore("ip6tables-restore", "-c", V6),
                real_save("-c"),
                real_save6("-c"),
                sh("$REAL_IPT -L -v -n -x; $REAL_IPT -t nat -L -v -n; $REAL_IPT -t raw -S -v"),
                sh("$REAL_IP6T -v -S OUTPUT; $REAL_IP6T -L FORWARD -v -n -x"),
            ],
        ),
        (
            "the real tool restores -c; xtnl saves and lists",
            vec![
                setup_restore("iptables-restore", "-c", V4),
                setup_restore("ip6tables-restore", "-c", V6),
                ours_save("-c"),
                ours_save(""),
                ours_save("-t mangle"),
                Step::new("iptables", w("-L -v -n -x")),
                Step::new("iptables", w("-L -v -n")),
                Step::new("iptables", w("-L INPUT -v -n -x")),
                Step::new("iptables", w("-t nat -L -v -x -n")),
                Step::new("iptables", w("-S -v")),
                Step::new("iptables", w("-v -S INPUT")),
                Step::new("iptables", w("-S INPUT")),
                Step::new("iptables", w("-t raw -S -v")),
                Step::new("iptables", w("-t mangle -v -S FORWARD")),
                sh("$SAVE6 -c | grep -v '^#'"),
                Step::new("ip6tables", w("-S -v")),
                Step::new("ip6tables", w("-L -v -n")),
                Step::new("ip6tables", w("-L OUTPUT -v -n -x")),
                Step::new("iptables", w("-t nat -L -Z -v -n -x")),
                Step::new("iptables", w("-t nat -L -v -n -x")),
            ],
        ),
        (
            "packets meeting the policy are counted after -P and restore, not after -A alone",
            vec![
                setup("iptables", "-A INPUT -s 192.0.2.9"),
                setup("iptables", "-A OUTPUT -s 192.0.2.9"),
                Step::new("iptables", w("-P OUTPUT ACCEPT")),
                restore(
                    "iptables-restore",
                    "--noflush",
                    "*raw\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n",
                ),
                sh("ip link set lo up && bash -c 'echo x > /dev/udp/127.0.0.1/9'; sleep 0.2"),
                real_save("-c"),
            ],
        ),
        (
            "restore without -c starts the counters again; --noflush; :BUILTIN -",
            vec![
                setup_restore("iptables-restore", "-c", V4),
                setup_restore("ip6tables-restore", "-c", V6),
                restore(
                    "iptables-restore",
                    "",
                    "*filter\n:INPUT DROP [77:7777]\n-A INPUT -s 192.0.2.2\nCOMMIT\n",
                ),
                real_save("-c -t filter"),
                restore(
                    "iptables-restore",
                    "--noflush",
                    "*nat\n:PREROUTING ACCEPT [77:7777]\n:INPUT - [5:5]\nCOMMIT\n",
                ),
                real_save("-t nat"),
                restore(
                    "iptables-restore",
                    "-c --noflush",
                    "*mangle\n:FORWARD - [31:3100]\n:INPUT DROP [32:3200]\n:m - [9:9]\nCOMMIT\n*raw\n:OUTPUT - [33:3300]\nCOMMIT\n",
                ),
                real_save("-c -t mangle"),
                restore(
                    "ip6tables-restore",
                    "-c --noflush",
                    "*filter\n:FORWARD ACCEPT [41:4100]\nCOMMIT\n",
                ),
                restore(
                    "ip6tables-restore",
                    "-c",
                    "*filter\n:OUTPUT DROP [42:4200]\nCOMMIT\n",
                ),
                real_save6("-c"),
            ],
        ),
        (
            "restore -c of a built-in chain without valid counters is refused",
            vec![
                restore("iptables-restore", "-c", "*filter\n:INPUT DROP\nCOMMIT\n"),
                restore(
                    "iptables-restore",
                    "-c",
                    "*filter\n:INPUT DROP [1:x]\nCOMMIT\n",
                ),
            ],
        ),
        (
            "-Z, -Z CHAIN, -L -Z zero the policy counters",
            vec![
                setup_restore("iptables-restore", "-c", V4),
                setup_restore("ip6tables-restore", "-c", V6),
                Step::new("iptables", w("-Z INPUT")),
                real_save("-c -t filter"),
                Step::new("iptables", w("-Z c")),
                Step::new("iptables", w("-t nat -Z")),
                real_save("-c -t nat"),
                Step::new("iptables", w("-t mangle -L -Z -v -n -x")),
                Step::new("iptables", w("-t mangle -L -v -n -x")),
                Step::new("iptables", w("-t raw -Z OUTPUT")),
                Step::new("ip6tables", w("-Z")),
                real_save6("-c"),
            ],
        ),
        (
            "-P sets the policy and starts its counters again",
            vec![
                setup_restore("iptables-restore", "-c", V4),
                setup_restore("ip6tables-restore", "-c", V6),
                Step::new("iptables", w("-P INPUT ACCEPT")),
                Step::new("iptables", w("-P OUTPUT ACCEPT")),
                Step::new("iptables", w("-t mangle -P FORWARD DROP")),
                Step::new("ip6tables", w("-P FORWARD ACCEPT")),
                real_save("-c"),
                real_save6("-c"),
            ],
        ),
    ]
}

/// The real tools name themselves as invoked (`iptables-nft-restore`); xtnl's links are
/// the plain names.
fn unname(s: &str) -> String {
    s.replace("-nft-restore", "-restore")
        .replace("-legacy-restore", "-restore")
}

fn compare(side: Side) {
    let names = side.link_names();
    let dir = links(
        &format!("policycounters-{side:?}"),
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let mut failures = Vec::new();
    for (i, (name, steps)) in cases().into_iter().enumerate() {
        if side == Side::Legacy && i >= NFT_ONLY {
            continue;
        }
        let theirs = twin_run(side, dir.clone(), false, private_lock_path(), steps.clone());
        let ours = twin_run(side, dir.clone(), true, private_lock_path(), steps);
        let t = unname(&format!("{}{}", theirs.0.join("\n"), theirs.1));
        let o = unname(&format!("{}{}", ours.0.join("\n"), ours.1));
        if t != o {
            // Both transcripts, for a diff.
            let base = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
            let _ = std::fs::write(base.join(format!("policycounters-{side:?}-{i}.real")), &t);
            let _ = std::fs::write(base.join(format!("policycounters-{side:?}-{i}.xtnl")), &o);
            failures.push(format!(
                "{name}:\n--- {}:\n{t}\n--- xtnl:\n{o}",
                side.oracle("iptables")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn policy_counters_as_iptables_nft() {
    common::require_kernel!();
    compare(Side::Nft);
}

#[test]
fn policy_counters_as_iptables_legacy() {
    common::require_kernel!();
    compare(Side::Legacy);
}

/// The `--json` listing carries a built-in chain's policy counters (`null` for user chains),
/// read from what the real tool restored, on both backends.
#[test]
fn json_listing_carries_policy_counters() {
    common::require_kernel!();
    for (backend, restore) in [
        ("nft", "iptables-nft-restore"),
        ("legacy", "iptables-legacy-restore"),
    ] {
        let lock = private_lock_path();
        let got = common::in_netns(move || {
            let lock = lock.to_str().expect("UTF-8").to_owned();
            let file = "*filter\n:INPUT DROP [12:3456]\n:c - [0:0]\nCOMMIT\n";
            let o = common::run_env(
                "sh",
                &["-c", &format!("printf '{file}' | {restore} -c")],
                &[("XTABLES_LOCKFILE", &lock)],
            );
            assert!(o.status.success(), "{}", common::twin::text(&o));
            let o = common::run_env(
                common::xtnl_bin(),
                &["--backend", backend, "-S", "--json"],
                &[("XTABLES_LOCKFILE", &lock)],
            );
            assert!(o.status.success(), "{}", common::twin::text(&o));
            String::from_utf8_lossy(&o.stdout).into_owned()
        });
        let v: serde_json::Value = serde_json::from_str(&got).expect("JSON");
        let chains = &v["tables"][0]["chains"];
        let chain = |n: &str| {
            chains
                .as_array()
                .expect("chains")
                .iter()
                .find(|c| c["name"] == n)
                .unwrap_or_else(|| panic!("{backend}: no chain {n} in {got}"))
                .clone()
        };
        let input = chain("INPUT");
        assert_eq!(input["policy"], "DROP", "{backend}: {got}");
        assert_eq!(input["policy_packets"], 12, "{backend}: {got}");
        assert_eq!(input["policy_bytes"], 3456, "{backend}: {got}");
        assert!(chain("c")["policy_packets"].is_null(), "{backend}: {got}");
    }
}
