//! The interpreter over the in-memory table: iptables' checks, order, messages, exit
//! statuses and edits, for both flavours, without root.

use super::memory::MemoryTable;
use super::{Edit, Flavour, RuleRef, interpret, restore_block};
use crate::error::{Error, ErrorKind, Result};
use crate::ipt::parse::parse;
use crate::ipt::print::append_line;
use crate::ipt::restore_file::parse_file;
use crate::model::{ChainPolicy, Family};

fn run(t: &mut MemoryTable, line: &str) -> Result<Vec<Edit>> {
    let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    let inv = parse(&args, t_family(t))?;
    interpret(t, &inv.command)
}

fn t_family(t: &MemoryTable) -> Family {
    use super::IptTable;
    t.family()
}

fn ok(t: &mut MemoryTable, line: &str) -> Vec<Edit> {
    match run(t, line) {
        Ok(e) => e,
        Err(e) => panic!("{line}: {e}"),
    }
}

fn fails(t: &mut MemoryTable, line: &str) -> Error {
    match run(t, line) {
        Ok(e) => panic!("{line} succeeded: {e:?}"),
        Err(e) => e,
    }
}

fn listed(t: &MemoryTable, chain: &str) -> Vec<String> {
    t.rules(chain)
        .iter()
        .map(|r| append_line(chain, r, false))
        .collect()
}

fn both() -> [MemoryTable; 2] {
    [
        MemoryTable::new(Family::Ipv4, "filter", Flavour::Nft),
        MemoryTable::new(Family::Ipv4, "filter", Flavour::Legacy),
    ]
}

#[test]
fn rules_by_number_and_by_specification() {
    for mut t in both() {
        ok(&mut t, "-A INPUT -p tcp --dport 22 -j ACCEPT");
        ok(&mut t, "-A INPUT -p tcp --dport 80 -j ACCEPT");
        // `-I CHAIN N`: the new rule becomes rule N.
        ok(&mut t, "-I INPUT 2 -p tcp --dport 443 -j ACCEPT");
        ok(&mut t, "-I INPUT -p udp --dport 53 -j ACCEPT");
        let ports: Vec<String> = listed(&t, "INPUT")
            .iter()
            .map(|l| l.split("--dport ").nth(1).unwrap_or("").to_string())
            .collect();
        assert_eq!(
            ports,
            [
                "53 -j ACCEPT",
                "22 -j ACCEPT",
                "443 -j ACCEPT",
                "80 -j ACCEPT"
            ]
        );
        // `-I` at the end + 1 appends; further is too big.
        ok(&mut t, "-I INPUT 5 -p tcp --dport 8080 -j ACCEPT");
        let e = fails(&mut t, "-I INPUT 7 -j DROP");
        assert_eq!(e.to_string(), "iptables: Index of insertion too big.");
        assert_eq!(e.kind(), ErrorKind::Precondition);
        assert_eq!(e.exit_status(), 1);
        // By number, by specification, and the words when neither is there.
        let edits = ok(&mut t, "-D INPUT 1");
        assert_eq!(
            edits,
            [Edit::Delete {
                chain: "INPUT".into(),
                at: RuleRef::Number(1)
            }]
        );
        assert_eq!(
            ok(&mut t, "-D INPUT -p tcp --dport 443 -j ACCEPT"),
            [Edit::Delete {
                chain: "INPUT".into(),
                at: RuleRef::Number(2)
            }]
        );
        let e = fails(&mut t, "-D INPUT -p tcp --dport 443 -j ACCEPT");
        assert_eq!(
            e.to_string(),
            "iptables: Bad rule (does a matching rule exist in that chain?)."
        );
        assert_eq!(
            fails(&mut t, "-D INPUT 9").to_string(),
            "iptables: Index of deletion too big."
        );
        assert_eq!(
            fails(&mut t, "-R INPUT 9 -j DROP").to_string(),
            "iptables: Index of replacement too big."
        );
        ok(&mut t, "-R INPUT 1 -p tcp --dport 2222 -j ACCEPT");
        assert!(
            listed(&t, "INPUT")[0].contains("--dport 2222"),
            "{:?}",
            listed(&t, "INPUT")
        );
        // `-C` changes nothing and says nothing when the rule is there.
        assert!(ok(&mut t, "-C INPUT -p tcp --dport 2222 -j ACCEPT").is_empty());
        assert_eq!(listed(&t, "INPUT").len(), 3);
        // A missing chain, then a missing jump target (a parameter problem: status 2).
        let e = fails(&mut t, "-A NOPE -j ACCEPT");
        assert_eq!(
            e.to_string(),
            "iptables: No chain/target/match by that name."
        );
        assert_eq!(e.kind(), ErrorKind::NotFound);
        let e = fails(&mut t, "-A INPUT -j NOPE");
        assert_eq!(e.exit_status(), 2, "{e}");
        assert_eq!(e.to_string(), "invalid input: Chain 'NOPE' does not exist");
    }
}

#[test]
fn user_chains_their_references_and_deletion() {
    for mut t in both() {
        let flavour = t.flavour_for_test();
        assert_eq!(ok(&mut t, "-N A"), [Edit::CreateChain("A".into())]);
        let e = fails(&mut t, "-N A");
        assert_eq!(e.to_string(), "iptables: Chain already exists.");
        assert_eq!(e.kind(), ErrorKind::AlreadyExists);
        ok(&mut t, "-A INPUT -j A");
        ok(&mut t, "-A A -j ACCEPT");
        // References are checked before emptiness.
        let e = fails(&mut t, "-X A");
        assert_eq!(e.to_string(), "iptables: Too many links.");
        assert_eq!(e.kind(), ErrorKind::InUse);
        let e = fails(&mut t, "-X");
        assert_eq!(e.to_string(), "iptables: Too many links.");
        ok(&mut t, "-D INPUT -j A");
        assert_eq!(
            fails(&mut t, "-X A").to_string(),
            "iptables: Directory not empty."
        );
        assert_eq!(ok(&mut t, "-F A"), [Edit::Flush("A".into())]);
        ok(&mut t, "-N B");
        // `-X` alone deletes every user chain, in order.
        assert_eq!(
            ok(&mut t, "-X"),
            [Edit::DeleteChain("A".into()), Edit::DeleteChain("B".into())]
        );
        assert!(t.chain("A").is_none() && t.chain("B").is_none());
        // A built-in chain: each iptables words it its own way.
        let e = fails(&mut t, "-X INPUT");
        match flavour {
            Flavour::Nft => {
                assert_eq!(e.to_string(), "iptables: Can't delete built-in chain.");
                assert_eq!(e.kind(), ErrorKind::Precondition);
            }
            Flavour::Legacy => {
                assert_eq!(
                    e.to_string(),
                    "iptables: Invalid argument. Run `dmesg' for more information."
                );
                assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            }
        }
    }
}

#[test]
fn rename_keeps_the_jumps_and_checks_the_new_name_first() {
    for mut t in both() {
        let flavour = t.flavour_for_test();
        ok(&mut t, "-N A");
        ok(&mut t, "-A INPUT -j A");
        assert_eq!(
            ok(&mut t, "-E A B"),
            [Edit::Rename {
                from: "A".into(),
                to: "B".into()
            }]
        );
        assert_eq!(listed(&t, "INPUT"), ["-A INPUT -j B"]);
        // The new name first: `-E missing existing` is "File exists."
        assert_eq!(
            fails(&mut t, "-E missing B").to_string(),
            "iptables: File exists."
        );
        assert_eq!(
            fails(&mut t, "-E missing C").to_string(),
            "iptables: No chain/target/match by that name."
        );
        let e = fails(&mut t, "-E INPUT C").to_string();
        match flavour {
            Flavour::Nft => assert_eq!(e, "iptables: Can't rename built-in chain."),
            Flavour::Legacy => assert_eq!(e, "iptables: No chain/target/match by that name."),
        }
    }
}

#[test]
fn policies_flushes_and_what_verbose_says() {
    for mut t in both() {
        ok(&mut t, "-P INPUT DROP");
        assert_eq!(
            t.chain("INPUT").and_then(|c| c.policy),
            Some(ChainPolicy::Drop)
        );
        ok(&mut t, "-N A");
        assert_eq!(
            fails(&mut t, "-P A DROP").to_string(),
            "iptables: Bad built-in chain name."
        );
        ok(&mut t, "-A A -j ACCEPT");
        ok(&mut t, "-A OUTPUT -j ACCEPT");
        t.verbose = true;
        t.lines.clear();
        assert_eq!(ok(&mut t, "-F"), [Edit::FlushAll]);
        assert_eq!(
            t.lines,
            [
                "Flushing chain `INPUT'",
                "Flushing chain `FORWARD'",
                "Flushing chain `OUTPUT'",
                "Flushing chain `A'"
            ]
        );
        assert!(t.rules("A").is_empty() && t.rules("OUTPUT").is_empty());
        t.lines.clear();
        assert_eq!(ok(&mut t, "-Z A"), [Edit::Zero(Some("A".into()))]);
        assert_eq!(t.lines, ["Zeroing chain `A'"]);
        assert_eq!(
            fails(&mut t, "-S").to_string(),
            "invalid input: listing is not a change"
        );
    }
}

#[test]
fn the_words_of_a_missing_rule_depend_on_the_flavour() {
    for mut t in both() {
        ok(&mut t, "-N A");
        let e = fails(&mut t, "-D INPUT -j A").to_string();
        match t.flavour_for_test() {
            Flavour::Nft => assert_eq!(
                e,
                "iptables: Bad rule (does a matching rule exist in that chain?)."
            ),
            // iptables-legacy words it by the target: a chain gives "No chain/target/match".
            Flavour::Legacy => assert_eq!(e, "iptables: No chain/target/match by that name."),
        }
    }
}

#[test]
fn ip6tables_says_ip6tables() {
    let mut t = MemoryTable::new(Family::Ipv6, "filter", Flavour::Legacy);
    assert_eq!(
        fails(&mut t, "-D INPUT 1").to_string(),
        "ip6tables: Index of deletion too big."
    );
    assert_eq!(
        fails(&mut t, "-X NOPE").to_string(),
        "ip6tables: No chain/target/match by that name."
    );
}

#[test]
fn restore_blocks_with_and_without_noflush() {
    let file =
        "*filter\n:INPUT DROP [0:0]\n:KEEP - [0:0]\n-A INPUT -j KEEP\n-A KEEP -j ACCEPT\nCOMMIT\n";
    let blocks = parse_file(file, Family::Ipv4).expect("parses");
    for flavour in [Flavour::Nft, Flavour::Legacy] {
        let mut t = MemoryTable::new(Family::Ipv4, "filter", flavour);
        ok(&mut t, "-N OLD");
        ok(&mut t, "-N KEEP");
        ok(&mut t, "-A KEEP -j DROP");
        ok(&mut t, "-A OUTPUT -j ACCEPT");
        // --noflush: OLD stays, KEEP is flushed by its declaration, OUTPUT keeps its rule.
        let mut kept = t.clone();
        restore_block(&mut kept, &blocks[0], true).expect("restore --noflush");
        assert!(kept.chain("OLD").is_some());
        assert_eq!(listed(&kept, "KEEP"), ["-A KEEP -j ACCEPT"]);
        assert_eq!(listed(&kept, "OUTPUT"), ["-A OUTPUT -j ACCEPT"]);
        // Without: every rule goes, and the user chains the block does not declare.
        let edits = restore_block(&mut t, &blocks[0], false).expect("restore");
        assert_eq!(edits.first(), Some(&Edit::Reset));
        assert!(t.chain("OLD").is_none(), "{:?}", t.chains());
        assert_eq!(listed(&t, "INPUT"), ["-A INPUT -j KEEP"]);
        assert!(t.rules("OUTPUT").is_empty());
        assert_eq!(
            t.chain("INPUT").and_then(|c| c.policy),
            Some(ChainPolicy::Drop)
        );
    }
    // A failing line is named, in iptables' words.
    let bad = "*filter\n-A INPUT -j ACCEPT\n-D INPUT 5\nCOMMIT\n";
    let blocks = parse_file(bad, Family::Ipv4).expect("parses");
    let mut t = MemoryTable::new(Family::Ipv4, "filter", Flavour::Nft);
    let e = restore_block(&mut t, &blocks[0], true).expect_err("line 3 fails");
    assert_eq!(e.to_string(), "line 3 failed");
    let inner = std::error::Error::source(&e).map(|s| s.to_string());
    assert_eq!(
        inner.as_deref(),
        Some("iptables: Index of deletion too big.")
    );
}

impl MemoryTable {
    fn flavour_for_test(&self) -> Flavour {
        use super::IptTable;
        self.flavour()
    }
}

/// A whole invocation through the one dispatch, on the in-memory table.
fn exec(t: &mut MemoryTable, line: &str) -> Result<String> {
    let args = crate::ipt::parse::split_words(line)?;
    let inv = parse(&args, t_family(t))?;
    super::dispatch::execute(t, &inv)
}

#[test]
fn the_dispatch_lists_what_it_changed_in_words_that_parse_back() {
    for flavour in [Flavour::Nft, Flavour::Legacy] {
        let mut t = MemoryTable::new(Family::Ipv4, "filter", flavour);
        let line = "-A INPUT -s 192.0.2.1/32 -p tcp -m tcp --dport 22 -j ACCEPT";
        exec(&mut t, line).expect("append");
        let listed = exec(&mut t, "-S INPUT").expect("-S");
        let rules: Vec<&str> = listed.lines().filter(|l| l.starts_with("-A ")).collect();
        assert_eq!(rules.len(), 1, "{flavour:?}: {listed}");
        // The listed rule is the rule appended: it parses back to the same command.
        let again = parse(
            &crate::ipt::parse::split_words(rules[0]).expect("words"),
            Family::Ipv4,
        )
        .expect("the listed rule parses");
        let first = parse(
            &crate::ipt::parse::split_words(line).expect("words"),
            Family::Ipv4,
        )
        .expect("parses");
        assert_eq!(again.command, first.command, "{flavour:?}: {listed}");
        // -L lists the chain too, and a missing chain is refused as iptables refuses it.
        assert!(
            exec(&mut t, "-L INPUT -n")
                .expect("-L")
                .starts_with("Chain INPUT")
        );
        let e = exec(&mut t, "-S NOSUCH").expect_err("missing chain");
        assert_eq!(e.kind(), ErrorKind::NotFound, "{flavour:?}: {e}");
    }
}

#[test]
fn the_dispatch_zeroes_one_rule_or_what_it_lists_and_a_failed_change_changes_nothing() {
    let mut t = MemoryTable::new(Family::Ipv4, "filter", Flavour::Nft);
    exec(&mut t, "-A INPUT -c 5 10 -j ACCEPT").expect("append 1");
    exec(&mut t, "-A INPUT -c 7 20 -j DROP").expect("append 2");
    let counted = |t: &MemoryTable| -> Vec<u64> {
        t.rules("INPUT")
            .iter()
            .map(|r| r.counters.map_or(0, |c| c.packets))
            .collect()
    };
    assert_eq!(counted(&t), [5, 7]);
    exec(&mut t, "-Z INPUT 1").expect("-Z INPUT 1");
    assert_eq!(counted(&t), [0, 7]);
    // Past the last rule: nothing changes; a missing chain is refused.
    exec(&mut t, "-Z INPUT 9").expect("-Z past the end");
    assert_eq!(counted(&t), [0, 7]);
    assert!(exec(&mut t, "-Z NOSUCH 1").is_err());
    let listed = exec(&mut t, "-L INPUT -n -v -Z").expect("-L -Z");
    assert!(listed.starts_with("Chain INPUT"), "{listed}");
    assert_eq!(counted(&t), [0, 0]);
    let before = t.chains().to_vec();
    assert!(exec(&mut t, "-I INPUT 9 -j ACCEPT").is_err());
    assert_eq!(t.chains(), before.as_slice());
}
