//! `xtnl list` reads what xtnl (and iptables-nft) write (issue 21): the x_tables compat
//! expressions in nft's words where nft has them (compared with what `nft list` prints for
//! the same rules), structured in `--json`; a missing table or chain is an error as nft
//! says it; `-S CHAIN --json` counts references as `-L` and iptables-nft do; and a closed
//! output ends every listing quietly, killed by SIGPIPE as iptables-save is.

mod common;
mod ext_corpus;

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output, Stdio};

use common::{in_netns, private_lock_path, run, run_ok, xtnl_bin};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn xtnl(args: &[&str]) -> Output {
    run(xtnl_bin(), args)
}

fn setup_reservation() {
    let o = xtnl(&[
        "reservation",
        "setup",
        "vcld-5",
        "--forward",
        "eth1:tcp/50443=192.0.2.10:3389",
        "-i",
        "eth1",
    ]);
    assert!(o.status.success(), "{}", text(&o));
}

/// The words of the rule line of `chain` that contains `needle`, without the handle.
fn rule_line(listing: &str, needle: &str) -> String {
    listing
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{listing}"))
        .split(" # handle")
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_reservation_lists_in_nfts_words_as_nft_prints_it() {
    in_netns(|| {
        setup_reservation();
        let ours = run_ok(xtnl_bin(), &["list", "ip", "nat", "vcld-5"]);
        assert!(!ours.contains("not understood"), "{ours}");
        let theirs = run_ok("nft", &["list", "chain", "ip", "nat", "vcld-5"]);
        let ours_rule = rule_line(&ours, "dnat");
        let theirs_rule = rule_line(&theirs, "dnat");
        // nft (built with xtables) words the compat DNAT target natively, as xtnl does.
        assert!(theirs_rule.contains("dnat to 192.0.2.10:3389"), "{theirs}");
        assert!(
            ours_rule.starts_with(
                "iifname \"eth1\" tcp dport 50443 counter packets 0 bytes 0 dnat to 192.0.2.10:3389"
            ),
            "{ours_rule}"
        );
        // Every word nft prints for the rule, in its order (nft adds `meta l4proto tcp`
        // before the port that xtnl folds, as `nft list` of a native rule does, and prints
        // the compat comment as nothing).
        let mut theirs_words: Vec<&str> = theirs_rule
            .split(' ')
            .filter(|w| !["meta", "l4proto"].contains(w))
            .collect();
        theirs_words.dedup();
        let mut rest = ours_rule.as_str();
        for w in theirs_words {
            let at = rest
                .find(w)
                .unwrap_or_else(|| panic!("{w:?} of nft's {theirs_rule:?} not in {ours_rule:?}"));
            rest = &rest[at + w.len()..];
        }
        // The comment, which nft does not print for a compat match, in nft's syntax, last.
        assert!(
            ours_rule.ends_with("comment \"xtnl: forward eth1:tcp/50443 --> 192.0.2.10:3389\""),
            "{ours_rule}"
        );
        let jump = run_ok(xtnl_bin(), &["list", "ip", "nat", "PREROUTING"]);
        let jump = rule_line(&jump, "jump vcld-5");
        assert!(
            jump.starts_with("counter packets 0 bytes 0 jump vcld-5 comment \"xtnl: jump"),
            "{jump}"
        );

        // --json: the same words, and the statements with their fields.
        let v: serde_json::Value = serde_json::from_str(&run_ok(
            xtnl_bin(),
            &["list", "ip", "nat", "vcld-5", "--json"],
        ))
        .expect("json");
        let rule = &v["tables"][0]["chains"][0]["rules"][0];
        assert_eq!(rule["rule"].as_str(), Some(ours_rule.as_str()), "{v}");
        let expr = rule["expr"].as_array().expect("expr");
        let dnat = expr
            .iter()
            .find(|e| e["name"] == "DNAT")
            .unwrap_or_else(|| panic!("no DNAT in {v}"));
        assert_eq!(dnat["type"], "xt", "{dnat}");
        assert_eq!(dnat["kind"], "target", "{dnat}");
        assert_eq!(dnat["to"]["addr"], "192.0.2.10", "{dnat}");
        assert_eq!(dnat["to"]["ports"], "3389", "{dnat}");
        assert_eq!(dnat["nft"], "dnat to 192.0.2.10:3389", "{dnat}");
        assert_eq!(
            dnat["iptables"], "-j DNAT --to-destination 192.0.2.10:3389",
            "{dnat}"
        );
        let comment = expr
            .iter()
            .find(|e| e["name"] == "comment")
            .unwrap_or_else(|| panic!("no comment in {v}"));
        assert_eq!(
            comment["comment"], "xtnl: forward eth1:tcp/50443 --> 192.0.2.10:3389",
            "{comment}"
        );
        let kinds: Vec<&str> = expr.iter().filter_map(|e| e["type"].as_str()).collect();
        assert_eq!(
            kinds,
            ["interface", "protocol", "xt", "port", "counter", "xt"],
            "{v}"
        );
    });
}

/// Every match and target of the extension corpus, written by xtnl's iptables front: the
/// nft-style listing reads each compat expression (nft's words, or `xt match "NAME" (its
/// iptables options)`), never `[ match name ... ]`.
#[test]
fn every_compat_expression_the_iptables_front_writes_is_read() {
    for six in [false, true] {
        let problems = in_netns(move || {
            let lock = private_lock_path();
            let lock = lock.to_str().unwrap().to_owned();
            ext_corpus::make_sets();
            let env = [("XTABLES_LOCKFILE", lock.as_str())];
            for table in ["filter", "nat", "mangle", "raw"] {
                let mut a = vec!["-t", table, "-N", "user-chain"];
                if six {
                    a.insert(0, "-6");
                }
                let o = common::run_env(xtnl_bin(), &a, &env);
                assert!(o.status.success(), "{}", text(&o));
            }
            let mut problems = Vec::new();
            let mut read = 0;
            let fam = if six { "ip6" } else { "ip" };
            for s in ext_corpus::ext_corpus()
                .into_iter()
                .filter(|s| s.six == six)
            {
                let words = xtnl::ipt::parse::split_words(&s.rule).expect("the spec splits");
                let mut a: Vec<&str> = Vec::new();
                if six {
                    a.push("-6");
                }
                a.extend(["-t", s.table, "-F", s.chain]);
                let o = common::run_env(xtnl_bin(), &a, &env);
                assert!(o.status.success(), "{}", text(&o));
                a.truncate(a.len() - 2);
                a.extend(["-A", s.chain]);
                a.extend(words.iter().map(String::as_str));
                let o = common::run_env(xtnl_bin(), &a, &env);
                assert!(o.status.success(), "xtnl -A {}: {}", s.rule, text(&o));
                let o = xtnl(&["list", fam, s.table, s.chain, "--json"]);
                assert!(o.status.success(), "{}", text(&o));
                let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
                let rule = &v["tables"][0]["chains"][0]["rules"][0];
                let words = rule["rule"].as_str().unwrap_or_default();
                for e in rule["expr"].as_array().expect("expr") {
                    let raw = e["text"].as_str().unwrap_or_default();
                    let unread = e["type"] == "xt" && e["iptables"].is_null();
                    if e["type"] == "xt" && !unread {
                        read += 1;
                    }
                    if unread || raw.contains("[ match") || raw.contains("[ target") {
                        problems.push(format!("{}: {e}", s.rule));
                    }
                }
                if words.contains("[ match") || words.contains("[ target") {
                    problems.push(format!("{}: {words}", s.rule));
                }
            }
            // The corpus is mostly compat expressions: hundreds were read.
            assert!(read > 300, "only {read} compat expressions seen");
            problems
        });
        if common::kernel_test() {
            assert!(
                problems.is_empty(),
                "{} compat expressions not read:\n{}",
                problems.len(),
                problems.join("\n")
            );
        }
    }
}

#[test]
fn a_missing_table_or_chain_is_an_error_as_nft_says() {
    in_netns(|| {
        setup_reservation();
        for (ours, theirs, named) in [
            (
                &["list", "ip", "nat", "nosuch"][..],
                &["list", "chain", "ip", "nat", "nosuch"][..],
                "list chain ip nat nosuch",
            ),
            (
                &["list", "ip", "nosuch"][..],
                &["list", "table", "ip", "nosuch"][..],
                "list table ip nosuch",
            ),
            (
                &["list", "ip", "nosuch", "vcld-5"][..],
                &["list", "chain", "ip", "nosuch", "vcld-5"][..],
                "list table ip nosuch",
            ),
        ] {
            let o = xtnl(ours);
            let n = run("nft", theirs);
            assert_eq!(o.status.code(), n.status.code(), "{ours:?}: {}", text(&o));
            assert_eq!(o.status.code(), Some(1), "{ours:?}: {}", text(&o));
            assert!(o.stdout.is_empty(), "{ours:?}: {}", text(&o));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                String::from_utf8_lossy(&n.stderr).contains("No such file or directory"),
                "{}",
                text(&n)
            );
            assert!(err.contains("No such file or directory"), "{err}");
            assert!(err.contains(named), "{ours:?}: {err}");
        }
        // A family with no table lists nothing, as `nft list tables ip6` does.
        let o = xtnl(&["list", "ip6"]);
        assert!(o.status.success() && o.stdout.is_empty(), "{}", text(&o));
    });
}

#[test]
fn one_chain_counts_its_references_as_the_whole_listing_does() {
    in_netns(|| {
        setup_reservation();
        let refs = |o: &str| -> Vec<u64> {
            let v: serde_json::Value = serde_json::from_str(o).expect("json");
            v["tables"][0]["chains"]
                .as_array()
                .expect("chains")
                .iter()
                .filter(|c| c["name"] == "vcld-5")
                .filter_map(|c| c["references"].as_u64())
                .collect()
        };
        let one = refs(&run_ok(
            xtnl_bin(),
            &["-t", "nat", "-S", "vcld-5", "--json"],
        ));
        let all = refs(&run_ok(xtnl_bin(), &["-t", "nat", "-S", "--json"]));
        assert_eq!(one, [1]);
        assert_eq!(all, [1]);
        let theirs = run_ok("iptables-nft", &["-t", "nat", "-L", "vcld-5"]);
        let ours = run_ok(xtnl_bin(), &["-t", "nat", "-L", "vcld-5"]);
        assert_eq!(theirs.lines().next(), Some("Chain vcld-5 (1 references)"));
        assert_eq!(ours.lines().next(), theirs.lines().next());
        // A second jump: both count 2.
        run_ok(
            "iptables-nft",
            &["-t", "nat", "-A", "OUTPUT", "-j", "vcld-5"],
        );
        let one = refs(&run_ok(
            xtnl_bin(),
            &["-t", "nat", "-S", "vcld-5", "--json"],
        ));
        assert_eq!(one, [2]);
    });
}

/// Reads the first bytes of `program args`'s output, closes the pipe, and returns how it ended and
/// what it said on stderr.
fn head_1(program: &str, args: &[&str]) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        // The first bytes only (a JSON listing is one long line), then the pipe closes.
        let mut r = child.stdout.take().expect("stdout");
        let mut first = [0u8; 64];
        let n = r.read(&mut first).expect("read");
        assert!(n > 0, "{program} {args:?} printed nothing");
    }
    let out = child.wait_with_output().expect("wait");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_output_ends_every_listing_quietly_as_iptables_save() {
    in_netns(|| {
        // Enough output (well over a pipe's 64 KiB) that the writer meets the closed pipe.
        let mut file = String::from("*filter\n:many - [0:0]\n");
        for i in 0..3000 {
            file.push_str(&format!(
                "-A many -s 192.0.2.{} -p tcp --dport {} -m comment --comment \"rule number {i}\" -j ACCEPT\n",
                i % 250 + 1,
                1000 + i
            ));
        }
        file.push_str("COMMIT\n");
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("list-words-{}.rules", std::process::id()));
        std::fs::write(&path, &file).expect("write");
        run_ok(xtnl_bin(), &["restore", path.to_str().unwrap()]);
        let _ = std::fs::remove_file(&path);

        // The oracle: iptables-nft-save and iptables-nft -L die of SIGPIPE, silently.
        for (prog, args) in [
            ("iptables-nft-save", &[][..]),
            ("iptables-nft", &["-S"][..]),
            ("iptables-nft", &["-L", "-n"][..]),
        ] {
            let (status, err) = head_1(prog, args);
            assert_eq!(
                status.signal(),
                Some(libc::SIGPIPE),
                "{prog} {args:?}: {status} {err}"
            );
            assert!(err.is_empty(), "{prog}: {err}");
        }
        // xtnl, under its own name and under iptables' (xtnl iptables ...).
        for args in [
            &["save"][..],
            &["save", "--json"][..],
            &["list"][..],
            &["list", "--json"][..],
            &["-S"][..],
            &["-L", "-n"][..],
            &["-S", "--json"][..],
            &["iptables-save"][..],
            &["iptables", "-S"][..],
            &["iptables", "-L", "-n"][..],
        ] {
            let (status, err) = head_1(xtnl_bin(), args);
            assert_eq!(
                status.signal(),
                Some(libc::SIGPIPE),
                "xtnl {args:?}: {status} {err}"
            );
            assert!(err.is_empty(), "xtnl {args:?}: {err}");
        }
    });
}

/// Compat targets and matches with an nft equivalent, written by xtnl's iptables front: each
/// listed line is word for word what nft 1.0.6 (with libxtables) prints for the same rule.
#[test]
fn compat_forms_with_an_nft_equivalent_list_as_nft_prints_them() {
    in_netns(|| {
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap().to_owned();
        let env = [("XTABLES_LOCKFILE", lock.as_str())];
        let rules: &[(&str, &str, &str, &str)] = &[
            (
                "ip",
                "nat",
                "PREROUTING",
                "-p tcp --dport 80 -j DNAT --to-destination 192.0.2.10:3389",
            ),
            (
                "ip",
                "nat",
                "PREROUTING",
                "-p tcp --dport 81 -j REDIRECT --to-ports 8081",
            ),
            (
                "ip",
                "nat",
                "POSTROUTING",
                "-p udp -m multiport --dports 1,2 -m state --state ESTABLISHED,RELATED -j SNAT --to-source 192.0.2.1-192.0.2.5:100-200",
            ),
            ("ip", "nat", "POSTROUTING", "-o eth0 -j MASQUERADE"),
            (
                "ip",
                "nat",
                "POSTROUTING",
                "-p tcp -j MASQUERADE --to-ports 1000-2000",
            ),
            (
                "ip",
                "filter",
                "INPUT",
                "-j REJECT --reject-with icmp-host-prohibited",
            ),
            (
                "ip",
                "filter",
                "INPUT",
                "-p tcp -j REJECT --reject-with tcp-reset",
            ),
            ("ip", "filter", "INPUT", "-j REJECT"),
            (
                "ip",
                "filter",
                "INPUT",
                "-j LOG --log-prefix \"in: \" --log-level 6",
            ),
            (
                "ip",
                "filter",
                "INPUT",
                "-m conntrack --ctstate SNAT -j ACCEPT",
            ),
            (
                "ip",
                "filter",
                "INPUT",
                "-m conntrack ! --ctstate NEW,INVALID -j DROP",
            ),
            (
                "ip6",
                "nat",
                "POSTROUTING",
                "-p tcp --dport 80 -j SNAT --to-source [2001:db8::1]:1000-2000",
            ),
            (
                "ip6",
                "nat",
                "PREROUTING",
                "-p tcp --dport 80 -j DNAT --to-destination [2001:db8::2]:8080",
            ),
            (
                "ip6",
                "filter",
                "INPUT",
                "-j REJECT --reject-with icmp6-adm-prohibited",
            ),
            ("ip6", "filter", "INPUT", "-j LOG --log-level 7"),
            // Written natively, as iptables-nft writes them (ipt::ext::native).
            (
                "ip",
                "filter",
                "INPUT",
                "-m limit --limit 5/min --limit-burst 7 -j ACCEPT",
            ),
            ("ip", "filter", "INPUT", "-m limit --limit 3/hour -j ACCEPT"),
            ("ip", "filter", "INPUT", "-m mark --mark 0x1/0xff -j ACCEPT"),
            ("ip", "filter", "INPUT", "-m mark ! --mark 0x4 -j ACCEPT"),
            (
                "ip",
                "filter",
                "INPUT",
                "-j NFLOG --nflog-prefix p --nflog-group 5 --nflog-size 128 --nflog-threshold 2",
            ),
            ("ip", "filter", "INPUT", "-j NFLOG"),
            ("ip", "raw", "PREROUTING", "-j TRACE"),
        ];
        let mut differ = Vec::new();
        for (fam, table, chain, rule) in rules {
            let mut a: Vec<&str> = Vec::new();
            if *fam == "ip6" {
                a.push("-6");
            }
            a.extend(["-t", table, "-F", chain]);
            let o = common::run_env(xtnl_bin(), &a, &env);
            assert!(o.status.success(), "{}", text(&o));
            a.truncate(a.len() - 2);
            a.extend(["-A", chain]);
            let words = xtnl::ipt::parse::split_words(rule).expect("split");
            a.extend(words.iter().map(String::as_str));
            let o = common::run_env(xtnl_bin(), &a, &env);
            assert!(o.status.success(), "{rule}: {}", text(&o));
            let ours = run_ok(xtnl_bin(), &["list", fam, table, chain]);
            let theirs = run_ok("nft", &["list", "chain", fam, table, chain]);
            let ours = rule_line(&ours, "counter");
            let theirs = rule_line(&theirs, "counter");
            if ours != theirs {
                differ.push(format!("{fam} {rule}\n  nft:  {theirs}\n  xtnl: {ours}"));
            }
        }
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    });
}
