//! The NAT-host operations on the x_tables backend, against iptables-legacy running the
//! agent's own commands, each side in a network namespace of its own.

mod common;

use common::{agent, in_netns, private_lock_path, run_ok};
use xtnl::legacy::Legacy;
use xtnl::lock::{WaitPolicy, XtablesLock};
use xtnl::model::Family;
use xtnl::nathost::{self, Outcome};

fn legacy() -> Legacy {
    Legacy::open(
        Family::Ipv4,
        XtablesLock::new(private_lock_path(), WaitPolicy::Forever),
    )
    .expect("open x_tables")
}

fn nat() -> String {
    run_ok("iptables-legacy", &["-t", "nat", "-S"])
}

#[test]
fn reservation_setup_and_teardown_as_the_agent_does_them_with_iptables_legacy() {
    common::require_kernel!();
    let agent = in_netns(|| {
        agent::setup_with("iptables-legacy");
        let listed = nat();
        // xtnl finds the agent's reservation set up already.
        let r = nathost::setup(&mut legacy(), &agent::reservation()).expect("setup");
        assert_eq!(r.outcome, Outcome::Unchanged, "{:?}", r.changes);
        assert_eq!(nat(), listed);
        listed
    });
    let ours = in_netns(|| {
        let mut l = legacy();
        let r = nathost::setup(&mut l, &agent::reservation()).expect("setup");
        assert_eq!(r.outcome, Outcome::Changed);
        let listed = nat();
        // Again: nothing to do.
        let again = nathost::setup(&mut l, &agent::reservation()).expect("setup again");
        assert_eq!(again.outcome, Outcome::Unchanged, "{:?}", again.changes);
        // The agent's check by spec finds xtnl's rule.
        agent::check_jump_with("iptables-legacy");
        let t = nathost::teardown(&mut l, Family::Ipv4, "nat", agent::CHAIN, "PREROUTING")
            .expect("teardown");
        assert_eq!(t.outcome, Outcome::Changed);
        let after = nat();
        assert!(!after.contains("vcld-5205"), "{after}");
        let t = nathost::teardown(&mut l, Family::Ipv4, "nat", agent::CHAIN, "PREROUTING")
            .expect("teardown again");
        assert_eq!(t.outcome, Outcome::Absent);
        listed
    });
    assert_eq!(ours, agent);
}

/// The NAT-host commands and `xtnl apply` run on x_tables with `--backend legacy`: what
/// they write is what iptables-legacy lists, and a second run changes nothing.
#[test]
fn nathost_commands_and_apply_run_on_the_legacy_backend() {
    in_netns(|| {
        let lock = common::private_lock_path();
        let xtnl = |args: &[&str]| -> String {
            let out = std::process::Command::new(common::xtnl_bin())
                .args(args)
                .env("XTABLES_LOCKFILE", &lock)
                .output()
                .expect("run xtnl");
            assert!(out.status.success(), "{args:?}: {out:?}");
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let setup = [
            "--backend",
            "legacy",
            "reservation",
            "setup",
            "vcld-9",
            "--forward",
            "eth1:tcp/50443=192.0.2.10:3389",
            "--comment-prefix",
            "VCL: ",
        ];
        assert!(xtnl(&setup).starts_with("changed"));
        assert_eq!(xtnl(&setup), "unchanged\n");
        let listed = nat();
        assert!(listed.contains("-A PREROUTING -m comment --comment \"VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-9\" -j vcld-9"), "{listed}");
        assert!(
            listed.contains("--dport 50443 -j DNAT --to-destination 192.0.2.10:3389"),
            "{listed}"
        );
        // Nothing went to nf_tables.
        assert!(!run_ok("nft", &["list", "ruleset"]).contains("vcld-9"));
        let doc =
            std::env::temp_dir().join(format!("xtnl-legacy-apply-{}.json", std::process::id()));
        std::fs::write(&doc, r#"{"transactions": [{"operations": [
            {"op": "forward_add", "chain": "vcld-9", "forward": {"protocol": "udp", "public_port": 53, "to": "192.0.2.10:53"}},
            {"op": "ensure_rule", "chain": "INPUT", "rule": "-p tcp --dport 22 -j ACCEPT"}]}]}"#)
            .expect("write document");
        let doc_path = doc.to_str().unwrap_or_default();
        let v: serde_json::Value =
            serde_json::from_str(&xtnl(&["--backend", "legacy", "apply", doc_path])).expect("json");
        assert_eq!(v["ok"], true, "{v}");
        assert!(nat().contains("-p udp -m udp --dport 53 -j DNAT"));
        assert!(
            run_ok("iptables-legacy", &["-S", "INPUT"])
                .contains("-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT")
        );
        let v: serde_json::Value =
            serde_json::from_str(&xtnl(&["--backend", "legacy", "apply", doc_path])).expect("json");
        assert_eq!(
            v["transactions"][0]["operations"][1]["outcome"], "unchanged",
            "{v}"
        );
        let _ = std::fs::remove_file(&doc);
        // `save --json` on x_tables is the JSON listing of what iptables-legacy lists.
        let v: serde_json::Value =
            serde_json::from_str(&xtnl(&["--backend", "legacy", "save", "--json"]))
                .expect("legacy save --json prints JSON");
        let tables = v["tables"].as_array().cloned().unwrap_or_default();
        let nat_table = tables
            .iter()
            .find(|t| t["table"] == "nat")
            .expect("nat in the JSON listing");
        let mut lines = Vec::new();
        for c in nat_table["chains"].as_array().cloned().unwrap_or_default() {
            for r in c["rules"].as_array().cloned().unwrap_or_default() {
                lines.push(r["line"].as_str().unwrap_or_default().to_string());
            }
        }
        let listed: Vec<String> = nat()
            .lines()
            .filter(|l| l.starts_with("-A "))
            .map(str::to_string)
            .collect();
        assert_eq!(lines, listed, "{v}");
        assert_eq!(
            xtnl(&["--backend", "legacy", "teardown", "vcld-9"])
                .lines()
                .next(),
            Some("changed")
        );
        assert!(!nat().contains("vcld-9"));
    });
}
