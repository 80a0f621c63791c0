use super::*;
use crate::nft::Op;
use crate::nft::{ChainSpec, EncodedRule, RulePosition, TableRef};
use crate::wire::expr::{Expr, Immediate, ImmediateData, Verdict};

/// The NAT host's test policy (fixtures/nat_host_policy.toml, the one copy every test of the
/// workspace reads, inside this crate so that its package holds it), behind a comment line and `max_ops`: its entries start on lines 4 and 10.
const NAT_HOST: &str = concat!(
    "# NAT host\nmax_ops = 8\n\n",
    include_str!("../fixtures/nat_host_policy.toml")
);

fn policy() -> Policy {
    Policy::parse(NAT_HOST, Path::new("/etc/xtnl/policy.toml")).unwrap()
}

fn nat() -> TableRef {
    TableRef::new(Family::Ipv4, "nat")
}

fn jump_rule(target: &str) -> EncodedRule {
    EncodedRule {
        exprs: vec![Expr::Immediate(Immediate {
            dreg: 0,
            data: ImmediateData::Verdict(Verdict::Jump(target.into())),
        })],
        userdata: None,
        compat: None,
        sets: Vec::new(),
    }
}

fn check_ops(p: &Policy, ops: Vec<Op>) -> Result<()> {
    let mut tx = Transaction::new();
    for op in ops {
        tx.push(op);
    }
    p.check_size(tx.len())?;
    p.check(&touches(&tx))
}

fn denial(r: Result<()>) -> String {
    match r {
        Err(Error::PolicyDenied(m)) => m,
        other => panic!("expected a denial, got {other:?}"),
    }
}

#[test]
fn entries_keep_their_header_lines() {
    let p = policy();
    assert_eq!(p.max_ops, Some((8, 2)));
    assert_eq!(
        p.allow.iter().map(|a| a.line).collect::<Vec<_>>(),
        vec![4, 10]
    );
}

#[test]
fn reservation_operations_are_allowed() {
    let p = policy();
    let c = nat().chain("vcld-5205");
    check_ops(
        &p,
        vec![
            Op::EnsureChain {
                table: nat(),
                chain: ChainSpec::regular("vcld-5205"),
            },
            Op::AddEncodedRule {
                chain: nat().chain("PREROUTING"),
                rule: jump_rule("vcld-5205"),
                position: RulePosition::Head,
            },
            Op::FlushChain(c.clone()),
            Op::DeleteChain(c),
        ],
    )
    .unwrap();
}

#[test]
fn jump_to_a_chain_outside_the_pattern_is_denied_naming_the_line() {
    let m = denial(check_ops(
        &policy(),
        vec![Op::AddEncodedRule {
            chain: nat().chain("PREROUTING"),
            rule: jump_rule("foo"),
            position: RulePosition::Head,
        }],
    ));
    assert_eq!(
        m,
        "policy /etc/xtnl/policy.toml:10 allows add-rule, delete-rule in ip nat chains \
         PREROUTING only (rules must jump to vcld-*); denied: add-rule in ip nat PREROUTING \
         (a rule jumping to foo) by operation #0 (insert rule ip nat PREROUTING)"
    );
}

#[test]
fn other_denials() {
    let p = policy();
    // A rule that jumps nowhere in the entry chain.
    let m = denial(check_ops(
        &p,
        vec![Op::AddEncodedRule {
            chain: nat().chain("PREROUTING"),
            rule: EncodedRule {
                exprs: vec![],
                userdata: None,
                compat: None,
                sets: vec![],
            },
            position: RulePosition::Append,
        }],
    ));
    assert!(m.contains(":10 ") && m.contains("jumps nowhere"), "{m}");
    // Flushing the entry chain: the verb is missing.
    let m = denial(check_ops(
        &p,
        vec![Op::FlushChain(nat().chain("PREROUTING"))],
    ));
    assert!(
        m.contains(":10 ") && m.contains("denied: flush in ip nat PREROUTING"),
        "{m}"
    );
    // Ensuring a table the policy names is allowed; another table is not.
    check_ops(&p, vec![Op::EnsureTable(nat())]).unwrap();
    let m = denial(check_ops(
        &p,
        vec![Op::EnsureTable(TableRef::new(Family::Ipv4, "mangle"))],
    ));
    assert!(m.contains("nothing in table ip mangle"), "{m}");
    let m = denial(check_ops(&p, vec![Op::DeleteTable(nat())]));
    assert!(m.contains("denied: delete-table in ip nat"), "{m}");
    // Another table.
    let filter = TableRef::new(Family::Ipv4, "filter");
    let m = denial(check_ops(&p, vec![Op::FlushTable(filter)]));
    assert!(
        m.starts_with("policy /etc/xtnl/policy.toml allows nothing in table ip filter"),
        "{m}"
    );
    // The same table in another family.
    let m = denial(check_ops(
        &p,
        vec![Op::DeleteChain(
            TableRef::new(Family::Ipv6, "nat").chain("vcld-1"),
        )],
    ));
    assert!(m.contains("nothing in table ip6 nat"), "{m}");
    // Renaming a reservation chain to a name outside the pattern.
    let m = denial(check_ops(
        &p,
        vec![Op::RenameChain {
            chain: nat().chain("vcld-1"),
            handle: 1,
            new_name: "other".into(),
        }],
    ));
    assert!(m.contains("denied: create in ip nat other"), "{m}");
    // Base chains and policies are not regular chain creation.
    let m = denial(check_ops(
        &p,
        vec![Op::EnsureChain {
            table: nat(),
            chain: ChainSpec::base(
                "vcld-x",
                crate::model::BaseChain {
                    chain_type: crate::model::ChainType::Nat,
                    hook: crate::model::Hook::Prerouting,
                    priority: -100,
                    policy: crate::model::ChainPolicy::Accept,
                },
            ),
        }],
    ));
    assert!(m.contains("denied: policy in ip nat vcld-x"), "{m}");
}

#[test]
fn max_ops_names_its_line() {
    let ops = (0..9)
        .map(|i| Op::FlushChain(nat().chain(format!("vcld-{i}"))))
        .collect();
    let m = denial(check_ops(&policy(), ops));
    assert_eq!(
        m,
        "policy /etc/xtnl/policy.toml:2 allows at most 8 operations per transaction; denied: a \
         transaction of 9 operations"
    );
}

#[test]
fn deleting_a_jump_needs_its_target() {
    let p = policy();
    let mut t = Touch {
        handle: Some(7),
        ..Touch::new(Family::Ipv4, "nat", Some("PREROUTING"), Verb::DeleteRule)
    };
    assert!(p.needs_jump_target(&t));
    t.jump_to = Some("vcld-7".into());
    assert!(!p.needs_jump_target(&t));
    p.check(&[t.clone()]).unwrap();
    t.jump_to = Some("DOCKER".into());
    assert!(p.check(&[t]).is_err());
    // In a reservation chain any rule may go.
    // In a reservation chain any rule that jumps nowhere may go; its target is read all the
    // same, since an entry without `jump_to` forbids jumps.
    let mut t = Touch {
        handle: Some(7),
        ..Touch::new(Family::Ipv4, "nat", Some("vcld-7"), Verb::DeleteRule)
    };
    assert!(p.needs_jump_target(&t));
    p.check(&[t.clone()]).unwrap();
    t.jump_to = Some("DOCKER".into());
    assert!(
        p.check(&[t.clone()]).is_err(),
        "a jump under an entry without jump_to"
    );
    // A handle the chain does not hold: the kernel refuses the delete, not the policy.
    t.jump_to = None;
    t.rule_absent = true;
    assert!(!p.needs_jump_target(&t));
    p.check(&[t]).unwrap();
}

fn parse_err(text: &str) -> String {
    match Policy::parse(text, Path::new("p.toml")) {
        Err(Error::PolicyInvalid(m)) => m,
        other => panic!("expected an invalid policy, got {other:?}"),
    }
}

#[test]
fn bad_files_are_refused_with_line_and_column() {
    let m = parse_err(
        "max_ops = 3\n[[allow]]\ntable = \"nat\"\nchain = [\"x\"]\nverbs = [\"create\"]\n",
    );
    assert!(
        m.starts_with("policy p.toml:4:1: unknown field `chain`"),
        "{m}"
    );
    let m =
        parse_err("[[allow]]\ntable = \"nat\"\nchains = [\"x\"]\nverbs = [\"create\", \"nuke\"]\n");
    assert!(
        m.starts_with("policy p.toml:4:20: unknown verb \"nuke\""),
        "{m}"
    );
    let m = parse_err("mx_ops = 3\n");
    assert!(
        m.starts_with("policy p.toml:1:1: unknown field `mx_ops`"),
        "{m}"
    );
    let m = parse_err("max_ops = 0\n");
    assert!(m.starts_with("policy p.toml:1:11: max_ops must be"), "{m}");
    let m = parse_err("[[allow]]\ntable = \"nat\"\nverbs = [\"flush\"]\n");
    assert!(m.contains(":3:9: chain verbs need"), "{m}");
    let m = parse_err(
        "[[allow]]\ntable = \"nat\"\nchains = [\"x\"]\nverbs = [\"flush\"]\njump_to = [\"y\"]\n",
    );
    assert!(m.contains(":5:11: jump_to applies"), "{m}");
    let m = parse_err(
        "[[allow]]\nfamily = \"arp\"\ntable = \"nat\"\nchains = [\"x\"]\nverbs = [\"flush\"]\n",
    );
    assert!(m.contains(":2:10: unknown family"), "{m}");
    let m = parse_err("[[allow]\n");
    assert!(m.starts_with("policy p.toml:1:"), "{m}");
}

#[test]
fn globs() {
    let p = |s: &str| Pattern::new(s).unwrap();
    assert!(p("vcld-*").matches("vcld-5205"));
    assert!(p("vcld-*").matches("vcld-"));
    assert!(!p("vcld-*").matches("vcl-nat_host"));
    assert!(p("*").matches("anything"));
    assert!(p("a*b*c").matches("aXXbYYc"));
    assert!(!p("a*b*c").matches("aXXbYY"));
    assert!(p("vcld-?").matches("vcld-1"));
    assert!(!p("vcld-?").matches("vcld-12"));
    assert!(p("PREROUTING").matches("PREROUTING"));
    assert!(!p("PREROUTING").matches("PREROUTINGX"));
    assert!(Pattern::new("").is_err());
    assert!(Pattern::new("a\u{1}").is_err());
}

#[test]
fn the_first_verdict_met_is_the_rule_s_target() {
    let imm = |v: Verdict| {
        Expr::Immediate(Immediate {
            dreg: 0,
            data: ImmediateData::Verdict(v),
        })
    };
    let two = vec![
        imm(Verdict::Jump("other".into())),
        imm(Verdict::Jump("vcld-1".into())),
    ];
    assert_eq!(crate::policy::exprs_jump(&two).as_deref(), Some("other"));
    let accept_first = vec![imm(Verdict::Accept), imm(Verdict::Jump("other".into()))];
    assert_eq!(crate::policy::exprs_jump(&accept_first), None);
    let cont = vec![imm(Verdict::Continue), imm(Verdict::Goto("other".into()))];
    assert_eq!(crate::policy::exprs_jump(&cont).as_deref(), Some("other"));
    // Added by the policy's check: a rule whose first jump is to a protected chain is denied
    // in PREROUTING even if a later verdict names a reservation chain.
    let mut rule = jump_rule("other");
    rule.exprs.push(imm(Verdict::Jump("vcld-1".into())));
    let op = Op::AddEncodedRule {
        chain: nat().chain("PREROUTING"),
        position: crate::nft::RulePosition::Append,
        rule,
    };
    assert!(check_ops(&policy(), vec![op]).is_err());
}

#[test]
fn verdict_maps_unknown_expressions_and_unnamed_verdicts_jump_anywhere() {
    use crate::wire::expr::{Lookup, OtherExpr};
    let lookup = |dreg: Option<u32>| {
        Expr::Lookup(Lookup {
            set: "__map0".into(),
            sreg: 1,
            set_id: None,
            dreg,
            flags: None,
        })
    };
    let other = |name: &str| {
        Expr::Other(OtherExpr {
            name: name.into(),
            data: Vec::new(),
        })
    };
    let imm = |v: Verdict| {
        Expr::Immediate(Immediate {
            dreg: 0,
            data: ImmediateData::Verdict(v),
        })
    };
    let jumps = |e: Vec<Expr>| crate::policy::exprs_jump(&e);
    // `ip saddr vmap { 192.0.2.1 : jump admin }`: the data goes to the verdict register.
    assert_eq!(jumps(vec![lookup(Some(0))]).as_deref(), Some(VERDICT_MAP));
    // A set (no data) or a data map (a NAT address) decides no verdict.
    assert_eq!(jumps(vec![lookup(None), imm(Verdict::Accept)]), None);
    assert_eq!(jumps(vec![lookup(Some(1))]), None);
    // Kept raw: a lookup or an immediate in a form not modelled, a name not known.
    for name in ["lookup", "immediate", "numgen", "hash", "something-new"] {
        assert_eq!(
            jumps(vec![other(name)]).as_deref(),
            Some(VERDICT_MAP),
            "{name}"
        );
    }
    // Raw, but never a jump whatever its attributes.
    assert_eq!(jumps(vec![other("limit"), imm(Verdict::Drop)]), None);
    assert_eq!(
        jumps(vec![imm(Verdict::Unknown(3))]).as_deref(),
        Some(VERDICT_MAP)
    );
    // Deleting or adding such a rule under an entry without `jump_to` is denied.
    let p = Policy::parse(
        "[[allow]]\ntable = \"filter\"\nchains = [\"shared\"]\nverbs = [\"add-rule\", \"delete-rule\"]\n",
        Path::new("/p.toml"),
    )
    .unwrap();
    let op = Op::AddEncodedRule {
        chain: TableRef::new(Family::Ipv4, "filter").chain("shared"),
        position: RulePosition::Append,
        rule: EncodedRule {
            exprs: vec![lookup(Some(0))],
            userdata: None,
            compat: None,
            sets: Vec::new(),
        },
    };
    let m = denial(check_ops(&p, vec![op]));
    assert!(m.contains("a rule jumping to *"), "{m}");
}

/// The one derivation: every planned change gives its verbs, chains and targets, and an
/// nf_tables operation gives what the same change planned neutrally gives (apart from the
/// operation's number and text, which the caller sets).
#[test]
fn every_planned_change_becomes_its_touches_in_one_place() {
    use super::touch::{OldRule, Planned, touches_of};
    let of = |p: Planned<'_>| -> Vec<(Verb, Option<String>, Option<String>, bool)> {
        touches_of(Family::Ipv4, "nat", &p)
            .into_iter()
            .map(|t| (t.verb, t.chain, t.jump_to, t.rule_absent))
            .collect()
    };
    let s = |x: &str| Some(x.to_owned());
    assert_eq!(
        of(Planned::CreateChain {
            chain: "PREROUTING",
            base: true
        }),
        [(Verb::Policy, s("PREROUTING"), None, false)]
    );
    assert_eq!(
        of(Planned::CreateChain {
            chain: "x",
            base: false
        }),
        [(Verb::Create, s("x"), None, false)]
    );
    assert_eq!(
        of(Planned::ReplaceRule {
            chain: "PREROUTING",
            old: OldRule::Jumps(s("a")),
            jump_to: s("b"),
        }),
        [
            (Verb::DeleteRule, s("PREROUTING"), s("a"), false),
            (Verb::AddRule, s("PREROUTING"), s("b"), false),
        ]
    );
    assert_eq!(
        of(Planned::DeleteRule {
            chain: "PREROUTING",
            old: OldRule::Absent,
        }),
        [(Verb::DeleteRule, s("PREROUTING"), None, true)]
    );
    let jumping = [("PREROUTING".to_owned(), false), ("other".to_owned(), true)];
    assert_eq!(
        of(Planned::Rename {
            from: "a",
            to: "b",
            jumping: &jumping,
        }),
        [
            (Verb::Delete, s("a"), None, false),
            (Verb::Create, s("b"), None, false),
            (Verb::DeleteRule, s("PREROUTING"), s("a"), false),
            (Verb::AddRule, s("PREROUTING"), s("b"), false),
            (Verb::DeleteRule, s("other"), s(VERDICT_MAP), false),
            (Verb::AddRule, s("other"), s(VERDICT_MAP), false),
        ]
    );
    assert_eq!(of(Planned::Zero(None)), [(Verb::Zero, None, None, false)]);
    // An operation: the same touches, numbered and described.
    let op = Op::ReplaceEncodedRule {
        chain: nat().chain("PREROUTING"),
        handle: 7,
        rule: jump_rule("b"),
    };
    let from_op = touches_of_op(3, &op);
    let neutral = touches_of(
        Family::Ipv4,
        "nat",
        &Planned::ReplaceRule {
            chain: "PREROUTING",
            old: OldRule::Handle(7),
            jump_to: s("b"),
        },
    );
    assert_eq!(from_op.len(), 2);
    for (a, b) in from_op.iter().zip(&neutral) {
        assert_eq!((a.op_index, a.op.as_str()), (3, op.to_string().as_str()));
        assert_eq!(
            Touch {
                op_index: 0,
                op: String::new(),
                ..a.clone()
            },
            *b
        );
    }
    assert_eq!(from_op[0].handle, Some(7));
}

/// A rename retargets the jumps the batch holds when it runs, not only the kernel's: a jump
/// added earlier in the same transaction counts (or `-A PREROUTING -j vcld-e` then `-E vcld-e
/// evil` would leave PREROUTING jumping to a chain the policy refuses, judged only as a
/// jump to `vcld-e`), and a kernel rule the transaction deleted or flushed before does not.
#[test]
fn a_rename_retargets_the_jumps_the_batch_holds_when_it_runs() {
    let kernel_rule = |chain: &str, handle: u64, target: &str| crate::nft::RawRule {
        chain: nat().chain(chain),
        handle,
        exprs: jump_rule(target).exprs,
        userdata: None,
        sets: Default::default(),
    };
    let kernel = vec![
        kernel_rule("PREROUTING", 1, "vcld-e"),
        kernel_rule("other", 2, "vcld-e"),
        kernel_rule("spare", 3, "vcld-1"),
    ];
    let renamed = nat().chain("vcld-e");
    let at = |earlier: Vec<Op>| super::touch::jumping_at_rename(&earlier, &kernel, &renamed);
    let names = |v: Vec<(String, bool)>| v.into_iter().map(|(c, _)| c).collect::<Vec<_>>();
    assert_eq!(names(at(vec![])), ["PREROUTING", "other"]);
    // Deleted by handle, and flushed, before the rename: not retargeted.
    let deleted = Op::DeleteRule {
        chain: nat().chain("PREROUTING"),
        handle: 1,
    };
    assert_eq!(names(at(vec![deleted])), ["other"]);
    assert_eq!(
        names(at(vec![Op::FlushChain(nat().chain("other"))])),
        ["PREROUTING"]
    );
    assert!(at(vec![Op::FlushTable(nat())]).is_empty());
    // A chain deleted before the rename lost its rules with it (the kernel's
    // nf_tables_delchain), as a front end's own `delete chain` message says.
    assert_eq!(
        names(at(vec![Op::DeleteChain(nat().chain("other"))])),
        ["PREROUTING"]
    );
    // Added before the rename: retargeted.
    let added = Op::AddEncodedRule {
        chain: nat().chain("spare"),
        rule: jump_rule("vcld-e"),
        position: RulePosition::Append,
    };
    assert_eq!(names(at(vec![Op::FlushTable(nat()), added])), ["spare"]);
}
