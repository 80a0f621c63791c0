//! What the policy judges of a command, derived from the interpreter's edits over the
//! in-memory table (without root): the same for both flavours, and for the cases where a
//! comparison of tables saw something else (a flush of an empty chain, a policy set to what
//! it was, a rename).

use std::path::Path;
use std::sync::Arc;

use super::memory::MemoryTable;
use super::{Change, Enforcement, Flavour, Judge, Judged, RuleEntry, interpret, restore_block};
use crate::ErrorKind;
use crate::ipt::parse::parse;
use crate::ipt::restore_file::parse_file;
use crate::model::Family;
use crate::policy::{Policy, Verb};

fn table(flavour: Flavour) -> MemoryTable {
    let mut t = MemoryTable::new(Family::Ipv4, "nat", flavour);
    for cmd in [
        "-t nat -N other",
        "-t nat -N spare",
        "-t nat -N vcld-1",
        "-t nat -A PREROUTING -j other",
        "-t nat -A PREROUTING -j vcld-1",
        "-t nat -A vcld-1 -p tcp --dport 1 -j DNAT --to-destination 192.0.2.1",
    ] {
        run(&mut t, cmd);
    }
    t.judge = Some(Judge::new(Family::Ipv4, "nat"));
    t
}

fn run(t: &mut MemoryTable, cmd: &str) {
    let args: Vec<String> = cmd.split(' ').map(str::to_owned).collect();
    let inv = parse(&args, Family::Ipv4).expect("parses");
    interpret(t, &inv.command).unwrap_or_else(|e| panic!("{cmd}: {e}"));
}

/// What one command touches: `(verb, chain, jump_to)` per touch, and the texts.
type Summary = (Vec<(Verb, Option<String>, Option<String>)>, Vec<String>);

fn judged(flavour: Flavour, cmd: &str) -> Summary {
    let mut t = table(flavour);
    run(&mut t, cmd);
    summary(t.judge.take().expect("judge").judged)
}

fn summary(j: Vec<Judged>) -> Summary {
    let touches = j
        .iter()
        .flat_map(|j| j.touches.iter())
        .map(|t| (t.verb, t.chain.clone(), t.jump_to.clone()))
        .collect();
    (touches, j.into_iter().map(|j| j.text).collect())
}

fn some(s: &str) -> Option<String> {
    Some(s.to_owned())
}

/// A touch expected: verb, chain, jump target.
type Expected = (Verb, Option<&'static str>, Option<&'static str>);

#[test]
fn each_command_is_judged_by_what_it_means_on_either_flavour() {
    let cases: &[(&str, &[Expected], &[&str])] = &[
        // An empty chain flushed is a flush; a policy set to what it was is a policy.
        (
            "-t nat -F spare",
            &[(Verb::Flush, Some("spare"), None)],
            &["flush chain ip nat spare"],
        ),
        (
            "-t nat -P PREROUTING ACCEPT",
            &[(Verb::Policy, Some("PREROUTING"), None)],
            &["add chain ip nat PREROUTING: -t nat -P PREROUTING ACCEPT"],
        ),
        // A rename is one change: the old name deleted, the new one created, and the jumps
        // to it (PREROUTING's) retargeted.
        (
            "-t nat -E vcld-1 vcld-2",
            &[
                (Verb::Delete, Some("vcld-1"), None),
                (Verb::Create, Some("vcld-2"), None),
                (Verb::DeleteRule, Some("PREROUTING"), Some("vcld-1")),
                (Verb::AddRule, Some("PREROUTING"), Some("vcld-2")),
            ],
            &["rename chain ip nat vcld-1 to vcld-2"],
        ),
        (
            "-t nat -X spare",
            &[(Verb::Delete, Some("spare"), None)],
            &["delete chain ip nat spare"],
        ),
        (
            "-t nat -Z",
            &[(Verb::Zero, None, None)],
            &["zero counters ip nat"],
        ),
        (
            "-t nat -Z vcld-1",
            &[(Verb::Zero, Some("vcld-1"), None)],
            &["zero counters ip nat vcld-1"],
        ),
        (
            "-t nat -F",
            &[(Verb::FlushTable, None, None)],
            &["flush table ip nat"],
        ),
        // Deletes by number and by specification: the rule's real target, from the view.
        (
            "-t nat -D PREROUTING 1",
            &[(Verb::DeleteRule, Some("PREROUTING"), Some("other"))],
            &["delete rule ip nat PREROUTING: -t nat -D PREROUTING -j other"],
        ),
        (
            "-t nat -D PREROUTING -j vcld-1",
            &[(Verb::DeleteRule, Some("PREROUTING"), Some("vcld-1"))],
            &["delete rule ip nat PREROUTING: -t nat -D PREROUTING -j vcld-1"],
        ),
        // A replacement: the old rule's target deleted, the new one's added.
        (
            "-t nat -R PREROUTING 1 -j vcld-1",
            &[
                (Verb::DeleteRule, Some("PREROUTING"), Some("other")),
                (Verb::AddRule, Some("PREROUTING"), Some("vcld-1")),
            ],
            &["replace rule ip nat PREROUTING: -t nat -R PREROUTING -j vcld-1"],
        ),
        // Inserts: at the head, in the middle, and past the last rule (an append).
        (
            "-t nat -I PREROUTING -j spare",
            &[(Verb::AddRule, Some("PREROUTING"), Some("spare"))],
            &["insert rule ip nat PREROUTING: -t nat -I PREROUTING -j spare"],
        ),
        (
            "-t nat -I PREROUTING 2 -j spare",
            &[(Verb::AddRule, Some("PREROUTING"), Some("spare"))],
            &["insert rule ip nat PREROUTING: -t nat -I PREROUTING -j spare"],
        ),
        (
            "-t nat -I PREROUTING 3 -j spare",
            &[(Verb::AddRule, Some("PREROUTING"), Some("spare"))],
            &["add rule ip nat PREROUTING: -t nat -A PREROUTING -j spare"],
        ),
        (
            "-t nat -A spare -j RETURN",
            &[(Verb::AddRule, Some("spare"), None)],
            &["add rule ip nat spare: -t nat -A spare -j RETURN"],
        ),
        (
            "-t nat -N vcld-9",
            &[(Verb::Create, Some("vcld-9"), None)],
            &["create chain ip nat vcld-9"],
        ),
        // A check changes nothing.
        ("-t nat -C PREROUTING -j other", &[], &[]),
    ];
    for (cmd, touches, texts) in cases {
        let want: Summary = (
            touches
                .iter()
                .map(|(v, c, j)| (*v, c.map(str::to_owned), j.map(str::to_owned)))
                .collect(),
            texts.iter().map(|s| s.to_string()).collect(),
        );
        for flavour in [Flavour::Nft, Flavour::Legacy] {
            assert_eq!(judged(flavour, cmd), want, "{cmd} ({flavour:?})");
        }
    }
}

#[test]
fn restore_blocks_are_judged_as_their_net_change() {
    let file = "*nat\n:PREROUTING ACCEPT [0:0]\n:vcld-1 - [0:0]\n:vcld-2 - [0:0]\n-A vcld-2 -j RETURN\nCOMMIT\n";
    let blocks = parse_file(file, Family::Ipv4).expect("parses");
    for flavour in [Flavour::Nft, Flavour::Legacy] {
        // Without --noflush: the table flushed, a chain that stays flushed (whether the
        // backend deletes and re-creates it or not), new chains created, the others deleted.
        let mut t = table(flavour);
        restore_block(&mut t, &blocks[0], false).expect("restore");
        let (touches, _) = summary(t.judge.take().expect("judge").judged);
        assert_eq!(
            touches,
            [
                (Verb::FlushTable, None, None),
                (Verb::Policy, some("PREROUTING"), None),
                (Verb::Flush, some("vcld-1"), None),
                (Verb::Create, some("vcld-2"), None),
                (Verb::AddRule, some("vcld-2"), None),
                (Verb::Delete, some("other"), None),
                (Verb::Delete, some("spare"), None),
            ],
            "{flavour:?}"
        );
        // --noflush: only what the lines say.
        let mut t = table(flavour);
        restore_block(&mut t, &blocks[0], true).expect("restore --noflush");
        let (touches, _) = summary(t.judge.take().expect("judge").judged);
        assert_eq!(
            touches,
            [
                (Verb::Policy, some("PREROUTING"), None),
                (Verb::Flush, some("vcld-1"), None),
                (Verb::Create, some("vcld-2"), None),
                (Verb::AddRule, some("vcld-2"), None),
            ],
            "{flavour:?}"
        );
    }
}

fn check(cmd: &str) -> crate::Result<()> {
    // The NAT host's test policy (xtnl-policy's fixture), at most 4 operations.
    let policy = xtnl_policy::fixtures::nat_host_policy(4);
    let p = Policy::parse(&policy, Path::new("p.toml")).expect("policy");
    let e = Enforcement::new(Some(Arc::new(p)), None);
    let mut t = table(Flavour::Legacy);
    run(&mut t, cmd);
    let mut j = t.judge.take().expect("judge").judged;
    e.check(&mut j)
}

#[test]
fn the_one_judgement_allows_and_denies_by_the_derived_touches() {
    for (cmd, says) in [
        ("-t nat -F spare", "policy p.toml:3 allows"),
        (
            "-t nat -P PREROUTING ACCEPT",
            "denied: policy in ip nat PREROUTING",
        ),
        (
            "-t nat -E vcld-1 other3",
            "denied: create in ip nat other3 by operation #0 (rename chain ip nat vcld-1 to other3)",
        ),
        (
            "-t nat -D PREROUTING 1",
            "denied: delete-rule in ip nat PREROUTING (a rule jumping to other) by operation #0 \
             (delete rule ip nat PREROUTING)",
        ),
        (
            "-t nat -R PREROUTING 1 -j vcld-1",
            "(a rule jumping to other)",
        ),
    ] {
        let e = check(cmd).expect_err(cmd);
        assert_eq!(e.kind(), ErrorKind::PolicyDenied, "{cmd}");
        assert_eq!(e.exit_status(), 5, "{cmd}");
        assert!(e.to_string().contains(says), "{cmd}: {e}");
    }
    for cmd in [
        "-t nat -F vcld-1",
        "-t nat -D PREROUTING 2",
        "-t nat -E vcld-1 vcld-2",
        "-t nat -I PREROUTING 2 -j vcld-1",
    ] {
        check(cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
}

#[test]
fn nat_host_changes_are_judged_by_the_rules_the_view_holds() {
    use crate::ipt::{IptRule, IptTarget};
    let jump = |c: &str| IptRule {
        target: Some(IptTarget::Jump(c.to_owned())),
        ..Default::default()
    };
    let old = |id| RuleEntry {
        id,
        // What the plan believed; the view says otherwise for rule 7.
        rule: jump("vcld-1"),
    };
    let changes = vec![
        Change::create_chain("nat", "vcld-2"),
        Change::insert_rule("nat", "PREROUTING", jump("vcld-2")),
        Change::delete_rule("nat", "PREROUTING", old(7)),
        Change::delete_rule("nat", "PREROUTING", old(8)),
    ];
    let j = super::judge::of_changes(Family::Ipv4, &changes, |_, _, id| {
        (id == 7).then(|| jump("other"))
    })
    .expect("every change is one a plan makes");
    let texts: Vec<&str> = j.iter().map(|j| j.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "add table ip nat",
            "create chain ip nat vcld-2",
            "insert rule ip nat PREROUTING: -t nat -I PREROUTING -j vcld-2",
            "delete rule ip nat PREROUTING: -t nat -D PREROUTING -j other",
            "delete rule ip nat PREROUTING",
        ]
    );
    assert_eq!(j[0].touches[0].verb, Verb::CreateTable);
    assert_eq!(j[3].touches[0].jump_to, some("other"));
    assert!(!j[3].touches[0].rule_absent);
    assert!(j[4].touches[0].rule_absent);
}

#[test]
fn a_rename_cannot_retarget_an_allowed_jump_to_a_chain_the_policy_refuses() {
    // Chains may be created and deleted anywhere; PREROUTING may only jump to vcld-*.
    let text = r#"[[allow]]
table = "nat"
chains = ["*"]
verbs = ["create", "delete"]

[[allow]]
table = "nat"
chains = ["PREROUTING"]
verbs = ["add-rule", "delete-rule"]
jump_to = ["vcld-*"]
"#;
    let p = Policy::parse(text, Path::new("p.toml")).expect("policy");
    let e = Enforcement::new(Some(Arc::new(p)), None);
    for (cmd, denied) in [
        ("-t nat -E vcld-1 x1", true),
        ("-t nat -E vcld-1 vcld-2", false),
    ] {
        let mut t = table(Flavour::Legacy);
        run(&mut t, cmd);
        let mut j = t.judge.take().expect("judge").judged;
        let r = e.check(&mut j);
        assert_eq!(r.is_err(), denied, "{cmd}: {r:?}");
        if let Err(e) = r {
            assert!(
                e.to_string()
                    .contains("denied: add-rule in ip nat PREROUTING (a rule jumping to x1)"),
                "{e}"
            );
        }
    }
}

#[test]
fn rules_are_printed_into_texts_only_as_far_as_an_audit_record_shows_them() {
    let mut t = table(Flavour::Legacy);
    for port in 1..=100 {
        run(
            &mut t,
            &format!("-t nat -A vcld-1 -p tcp --dport {port} -j RETURN"),
        );
    }
    let j = t.judge.take().expect("judge").judged;
    assert_eq!(j.len(), 100);
    assert_eq!(
        j[0].text,
        "add rule ip nat vcld-1: -t nat -A vcld-1 -p tcp -m tcp --dport 1 -j RETURN"
    );
    assert_eq!(j[99].text, "add rule ip nat vcld-1");
    // What the record shows is the same as with every rule printed.
    let shown: usize = j
        .iter()
        .take_while(|j| j.text.contains(": -t nat"))
        .map(|j| j.text.len() + 2)
        .sum();
    assert!(shown > crate::policy::audit::MAX_OPS_TEXT, "{shown}");
}

/// Past what an audit record prints, an auditor-alone judge keeps no change (one empty
/// entry counts them), and the record it makes is the one the full judge's texts make.
#[test]
fn texts_only_keeps_no_text_past_the_record_and_records_the_same() {
    let mut full = table(Flavour::Legacy);
    let mut light = table(Flavour::Legacy);
    light.judge = Some(Judge::new(Family::Ipv4, "nat").texts_only());
    for port in 1..=100 {
        let cmd = format!("-t nat -A vcld-1 -p tcp --dport {port} -j RETURN");
        run(&mut full, &cmd);
        run(&mut light, &cmd);
    }
    let full = full.judge.take().expect("judge").judged;
    let light = light.judge.take().expect("judge").judged;
    assert_eq!((full.len(), Judged::count(&light)), (100, 100));
    let empty: usize = light
        .iter()
        .filter(|j| j.text.is_empty())
        .map(|j| 1 + j.more)
        .sum();
    assert!(empty > 50, "{empty} of 100 changes without a text");
    // Those are one entry: what is kept is bounded by what a record shows.
    assert_eq!(light.iter().filter(|j| j.text.is_empty()).count(), 1);
    assert_eq!(light.len(), 101 - empty);
    assert!(!light[0].text.is_empty());
    let inv = crate::privilege::Invoker {
        uid: 0,
        euid: 0,
        elevation: crate::privilege::Elevation::None,
    };
    let line = |j: &[Judged]| {
        crate::policy::audit::audit_line(
            &inv,
            Judged::count(j),
            &mut j.iter().map(|j| j.text.clone()),
            &crate::nft::AuditOutcome::Committed,
        )
    };
    let (a, b) = (line(&full), line(&light));
    assert_eq!(a, b);
    assert!(a.ends_with(" more"), "{a}");
}

/// For an auditor alone the judge keeps the texts (and so the count) the audit record
/// prints, the same as with touches, and none of the touches.
#[test]
fn texts_only_keeps_the_texts_and_count_without_touches() {
    let cmds = [
        "-t nat -I PREROUTING -p tcp -j vcld-1",
        "-t nat -F vcld-1",
        "-t nat -X spare",
    ];
    let mut full = table(Flavour::Legacy);
    let mut light = table(Flavour::Legacy);
    light.judge = Some(Judge::new(Family::Ipv4, "nat").texts_only());
    for cmd in cmds {
        run(&mut full, cmd);
        run(&mut light, cmd);
    }
    let (touches, texts) = summary(full.judge.take().expect("judge").judged);
    let (none, same) = summary(light.judge.take().expect("judge").judged);
    assert!(!touches.is_empty());
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert!(none.is_empty(), "{none:?}");
    assert_eq!(texts, same);
}
