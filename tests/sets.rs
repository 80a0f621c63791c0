//! Named sets and maps in the engine, with nft as the oracle: what xtnl creates in table
//! `a`, nft creates from its own syntax in table `b` of the same namespace; then nft must
//! list both alike, `nft --debug=netlink` must show the same expressions for rules that use
//! them, and xtnl must read nft's objects back as what it wrote itself.

mod common;

use common::{in_netns, run_ok};
use xtnl::ErrorKind;
use xtnl::model::Family;
use xtnl::model::{BaseChain, ChainPolicy, ChainType, Hook};
use xtnl::nft::set::{DataType, Field, MapData, SetOp, SetSpec, encode};
use xtnl::nft::set_rules::{dnat_map, lookup, vmap};
use xtnl::nft::{ChainSpec, EncodedRule, Op, RulePosition, Session, TableRef, Transaction};
use xtnl::wire::expr::{Cmp, CmpOp, Expr, Immediate, ImmediateData, Meta, MetaKey, Payload};
use xtnl::wire::expr::{PayloadBase, Verdict};
use xtnl::wire::set::{ElemData, ElemRepr, SetPolicy, flags};

fn session() -> Session {
    Session::builder()
        .lock_mode(xtnl::lock::LockMode::Never)
        .open()
        .expect("open netlink session")
}

fn nft_file(text: &str) {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("xtnl-sets-{}-{n}.nft", std::process::id()));
    std::fs::write(&path, text).unwrap();
    run_ok("nft", &["-f", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(path);
}

/// `nft list table FAMILY NAME` with the table's name replaced, so that twins compare.
fn listed(family: &str, name: &str) -> String {
    run_ok("nft", &["list", "table", family, name])
        .replace(&format!("table {family} {name} "), "table X ")
}

fn fwd_key(iface: &str, proto: u8, port: u16) -> Vec<u8> {
    encode(&[
        Field::Ifname(iface.into()),
        Field::Proto(proto),
        Field::Port(port),
    ])
}

fn v4_data(addr: &str, port: u16) -> ElemData {
    ElemData::Value(encode(&[
        Field::Addr(addr.parse().unwrap()),
        Field::Port(port),
    ]))
}

fn specs() -> Vec<SetSpec> {
    vec![
        SetSpec {
            counters: true,
            comment: Some("fwds".into()),
            ..SetSpec::map(
                "fwds",
                vec![DataType::Ifname, DataType::InetProto, DataType::InetService],
                MapData::Values(vec![DataType::Ipv4Addr, DataType::InetService]),
            )
        },
        SetSpec {
            flags: flags::TIMEOUT,
            timeout_ms: Some(3_600_000),
            size: Some(1000),
            policy: Some(SetPolicy::Memory),
            ..SetSpec::set("blocked", vec![DataType::Ipv4Addr])
        },
        SetSpec::map("vmp", vec![DataType::InetService], MapData::Verdict),
        SetSpec {
            flags: flags::INTERVAL,
            ..SetSpec::set("nets", vec![DataType::Ipv4Addr])
        },
    ]
}

const NFT_SETS: &str = r#"
table ip b {
  map fwds { type ifname . inet_proto . inet_service : ipv4_addr . inet_service; counter; comment "fwds"; }
  set blocked { type ipv4_addr; flags timeout; timeout 1h; size 1000; policy memory; }
  map vmp { type inet_service : verdict; }
  set nets { type ipv4_addr; flags interval; }
  chain target { }
}
add element ip b fwds { "eth1" . tcp . 50443 comment "vcld-7" : 192.0.2.3 . 3389, "eth1" . udp . 53 : 192.0.2.4 . 5353 }
add element ip b vmp { 22 : drop, 80 : jump target, 443 : accept }
add element ip b nets { 192.0.2.0/24, 198.51.100.7 }
"#;

fn xtnl_sets(s: &mut Session) {
    let a = TableRef::new(Family::Ipv4, "a");
    let mut tx = Transaction::new();
    tx.ensure_table(&a);
    for spec in specs() {
        tx.set_op(SetOp::Ensure {
            table: a.clone(),
            set: spec,
        });
    }
    tx.ensure_chain(&a, ChainSpec::regular("target"));
    tx.set_op(SetOp::AddElements {
        table: a.clone(),
        set: "fwds".into(),
        elements: vec![
            ElemRepr {
                data: Some(v4_data("192.0.2.3", 3389)),
                ..ElemRepr::key(fwd_key("eth1", 6, 50443))
            }
            .with_comment("vcld-7")
            .unwrap(),
            ElemRepr {
                data: Some(v4_data("192.0.2.4", 5353)),
                ..ElemRepr::key(fwd_key("eth1", 17, 53))
            },
        ],
        exclusive: true,
    });
    let verdict = |port: u16, v: Verdict| ElemRepr {
        data: Some(ElemData::Verdict(v)),
        ..ElemRepr::key(port.to_be_bytes().to_vec())
    };
    tx.set_op(SetOp::AddElements {
        table: a.clone(),
        set: "vmp".into(),
        elements: vec![
            verdict(22, Verdict::Drop),
            verdict(80, Verdict::Jump("target".into())),
            verdict(443, Verdict::Accept),
        ],
        exclusive: false,
    });
    // An interval set holds a range as its start and the first address after it, marked as
    // an interval end; a zero start opens the set as nft does.
    let end = |k: [u8; 4]| ElemRepr {
        flags: xtnl::wire::set::elem_flags::INTERVAL_END,
        ..ElemRepr::key(k.to_vec())
    };
    tx.set_op(SetOp::AddElements {
        table: a,
        set: "nets".into(),
        elements: vec![
            end([0, 0, 0, 0]),
            ElemRepr::key(vec![192, 0, 2, 0]),
            end([192, 0, 3, 0]),
            ElemRepr::key(vec![198, 51, 100, 7]),
            end([198, 51, 100, 8]),
        ],
        exclusive: false,
    });
    s.commit(&tx).expect("create sets and elements");
}

#[test]
fn sets_maps_and_elements_list_as_nft_lists_its_own() {
    in_netns(|| {
        nft_file(NFT_SETS);
        let mut s = session();
        xtnl_sets(&mut s);
        assert_eq!(listed("ip", "a"), listed("ip", "b"));
        // xtnl reads nft's sets as it wrote its own (ids and handles aside).
        let (a, b) = (
            TableRef::new(Family::Ipv4, "a"),
            TableRef::new(Family::Ipv4, "b"),
        );
        let (mine, theirs) = s
            .read(|r| Ok((r.sets(&a)?, r.sets(&b)?)))
            .expect("list sets");
        assert_eq!(mine.len(), 4);
        for (m, t) in mine.iter().zip(&theirs) {
            assert_eq!(m.name, t.name);
            assert_eq!(m.flags, t.flags, "{}", m.name);
            assert_eq!(m.key_type, t.key_type, "{}", m.name);
            assert_eq!(m.key_len, t.key_len, "{}", m.name);
            assert_eq!(m.data_type, t.data_type, "{}", m.name);
            assert_eq!(m.timeout_ms, t.timeout_ms, "{}", m.name);
            assert_eq!(m.comment(), t.comment(), "{}", m.name);
            assert_eq!(m.exprs.len(), t.exprs.len(), "{}", m.name);
        }
        for set in ["fwds", "vmp", "nets"] {
            let (mut x, mut y) = s
                .read(|r| Ok((r.elements(&a, set)?, r.elements(&b, set)?)))
                .unwrap();
            x.sort_by(|p, q| p.key.cmp(&q.key));
            y.sort_by(|p, q| p.key.cmp(&q.key));
            assert_eq!(x, y, "elements of {set}");
        }
        let fwds = s.read(|r| r.elements(&b, "fwds")).unwrap();
        let e = fwds
            .iter()
            .find(|e| e.key == fwd_key("eth1", 6, 50443))
            .expect("nft's element");
        assert_eq!(e.comment().as_deref(), Some("vcld-7"));
        assert_eq!(e.counter(), Some((0, 0)));
        assert_eq!(e.data, Some(v4_data("192.0.2.3", 3389)));
    });
}

#[test]
fn element_timeouts_and_set_listing_in_xtnl_list() {
    in_netns(|| {
        let mut s = session();
        xtnl_sets(&mut s);
        let a = TableRef::new(Family::Ipv4, "a");
        let mut tx = Transaction::new();
        tx.set_op(SetOp::AddElements {
            table: a.clone(),
            set: "blocked".into(),
            elements: vec![ElemRepr {
                timeout_ms: Some(30_000),
                ..ElemRepr::key(vec![192, 0, 2, 9])
            }],
            exclusive: true,
        });
        s.commit(&tx).unwrap();
        let got = s
            .read(|r| r.elements_by_key(&a, "blocked", &[vec![192, 0, 2, 9], vec![192, 0, 2, 10]]))
            .unwrap();
        let e = got[0].as_ref().expect("present element");
        assert_eq!(e.timeout_ms, Some(30_000));
        assert!(e.expiration_ms.is_some_and(|x| x <= 30_000), "{e:?}");
        assert!(got[1].is_none(), "{got:?}");
        let out = run_ok("nft", &["list", "set", "ip", "a", "blocked"]);
        assert!(out.contains("192.0.2.9 timeout 30s expires"), "{out}");
        // `xtnl list` names the sets with their types and element counts.
        let listing = run_ok(common::xtnl_bin(), &["list", "ip", "a"]);
        assert!(
            listing.contains(
                "map fwds { type ifname . inet_proto . inet_service : ipv4_addr . inet_service"
            ),
            "{listing}"
        );
        assert!(listing.contains("set blocked"), "{listing}");
    });
}

#[test]
fn many_elements_dump_get_by_key_delete_and_errors() {
    in_netns(|| {
        let mut s = session();
        let t = TableRef::new(Family::Ipv4, "big");
        let spec = SetSpec::map(
            "m",
            vec![DataType::InetProto, DataType::InetService],
            MapData::Values(vec![DataType::Ipv4Addr, DataType::InetService]),
        );
        let key = |p: u16| encode(&[Field::Proto(6), Field::Port(p)]);
        let elements: Vec<ElemRepr> = (1..=5000u16)
            .map(|p| ElemRepr {
                data: Some(v4_data("192.0.2.1", p)),
                ..ElemRepr::key(key(p))
            })
            .collect();
        let mut tx = Transaction::new();
        tx.ensure_table(&t).set_op(SetOp::Ensure {
            table: t.clone(),
            set: spec,
        });
        tx.set_op(SetOp::AddElements {
            table: t.clone(),
            set: "m".into(),
            elements,
            exclusive: true,
        });
        s.commit(&tx).expect("5000 elements in one transaction");
        assert_eq!(s.read(|r| r.elements(&t, "m")).unwrap().len(), 5000);
        // Kernels that report an element count (NFTA_SET_COUNT) report this one.
        let set = s.read(|r| r.set(&t, "m")).unwrap().expect("the set");
        assert!(set.count.is_none_or(|n| n == 5000), "{:?}", set.count);
        assert!(set.unknown.is_empty(), "{:?}", set.unknown);
        let got = s
            .read(|r| r.elements_by_key(&t, "m", &[key(7), key(6000)]))
            .unwrap();
        assert_eq!(got[0].as_ref().unwrap().data, Some(v4_data("192.0.2.1", 7)));
        assert!(got[1].is_none());

        // Adding an element that exists, exclusively, fails and changes nothing.
        let before = common::nft_ruleset();
        let mut tx = Transaction::new();
        tx.set_op(SetOp::DeleteElements {
            table: t.clone(),
            set: "m".into(),
            keys: vec![key(1)],
        });
        tx.set_op(SetOp::AddElements {
            table: t.clone(),
            set: "m".into(),
            elements: vec![ElemRepr {
                data: Some(v4_data("192.0.2.2", 1)),
                ..ElemRepr::key(key(2))
            }],
            exclusive: true,
        });
        let err = s.commit(&tx).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::AlreadyExists, "{err}");
        assert!(
            err.to_string().contains("add 1 element(s) to ip big m"),
            "{err}"
        );
        // Deleting one that is absent names the operation.
        let mut tx = Transaction::new();
        tx.set_op(SetOp::DeleteElements {
            table: t.clone(),
            set: "m".into(),
            keys: vec![key(6000)],
        });
        let err = s.commit(&tx).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
        assert!(
            err.to_string()
                .contains("delete 1 element(s) from ip big m"),
            "{err}"
        );
        assert_eq!(common::nft_ruleset(), before);

        // A set a rule uses cannot be deleted; flushed, it can once the rule is gone.
        let c = t.chain("c");
        let mut tx = Transaction::new();
        tx.ensure_chain(&t, ChainSpec::regular("c"));
        tx.push(Op::AddEncodedRule {
            chain: c.clone(),
            rule: encoded(dnat_free_lookup()),
            position: RulePosition::Append,
        });
        s.commit(&tx).unwrap();
        let mut tx = Transaction::new();
        tx.set_op(SetOp::Delete {
            table: t.clone(),
            name: "m".into(),
        });
        let err = s.commit(&tx).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InUse, "{err}");
        let mut tx = Transaction::new();
        tx.flush_chain(&c)
            .set_op(SetOp::Flush {
                table: t.clone(),
                set: "m".into(),
            })
            .set_op(SetOp::Delete {
                table: t.clone(),
                name: "m".into(),
            });
        s.commit(&tx).unwrap();
        assert!(s.read(|r| r.set(&t, "m")).unwrap().is_none());
    });
}

/// `meta l4proto . th dport @m` as a plain lookup.
fn dnat_free_lookup() -> Vec<Expr> {
    let (mut e, _) = xtnl::nft::set_rules::forward_key_loads(false);
    e.push(lookup("m", 1, false));
    e
}

fn encoded(exprs: Vec<Expr>) -> EncodedRule {
    EncodedRule {
        exprs,
        userdata: None,
        compat: None,
        sets: Vec::new(),
    }
}

/// The expression lines of `nft --debug=netlink list chain`.
fn debug_exprs(family: &str, table: &str, chain: &str) -> Vec<String> {
    run_ok(
        "nft",
        &["--debug=netlink", "list", "chain", family, table, chain],
    )
    .lines()
    .filter(|l| l.trim_start().starts_with('['))
    .map(|l| l.trim().to_string())
    .collect()
}

#[test]
fn rules_using_sets_and_maps_match_nft_expression_by_expression() {
    in_netns(|| {
        for (family, fam, addr, data) in [
            (Family::Ipv4, "ip", "ipv4_addr", "192.0.2.3 . 3389"),
            (Family::Ipv6, "ip6", "ipv6_addr", "2001:db8::3 . 3389"),
        ] {
            let load = if family == Family::Ipv4 {
                (12, 4)
            } else {
                (8, 16)
            };
            nft_file(&format!(
                r#"
table {fam} b {{
  set blocked {{ type {addr}; }}
  map vmp {{ type inet_service : verdict; }}
  map fwds {{ type ifname . inet_proto . inet_service : {addr} . inet_service; }}
  map fany {{ type inet_proto . inet_service : {addr} . inet_service; }}
  chain c {{ type nat hook prerouting priority -110; policy accept;
    {fam} saddr @blocked drop
    {fam} saddr != @blocked accept
    tcp dport vmap @vmp
    dnat {fam} to iifname . meta l4proto . th dport map @fwds
    dnat {fam} to meta l4proto . th dport map @fany
  }}
}}
add element {fam} b fwds {{ "eth1" . tcp . 50443 : {data} }}
"#
            ));
            let mut s = session();
            let a = TableRef::new(family, "a");
            let mut tx = Transaction::new();
            tx.ensure_table(&a);
            let addr_t = if family == Family::Ipv4 {
                DataType::Ipv4Addr
            } else {
                DataType::Ipv6Addr
            };
            for spec in [
                SetSpec::set("blocked", vec![addr_t]),
                SetSpec::map("vmp", vec![DataType::InetService], MapData::Verdict),
                SetSpec::map(
                    "fwds",
                    vec![DataType::Ifname, DataType::InetProto, DataType::InetService],
                    MapData::Values(vec![addr_t, DataType::InetService]),
                ),
                SetSpec::map(
                    "fany",
                    vec![DataType::InetProto, DataType::InetService],
                    MapData::Values(vec![addr_t, DataType::InetService]),
                ),
            ] {
                tx.set_op(SetOp::Ensure {
                    table: a.clone(),
                    set: spec,
                });
            }
            tx.ensure_chain(
                &a,
                ChainSpec::base(
                    "c",
                    BaseChain {
                        chain_type: ChainType::Nat,
                        hook: Hook::Prerouting,
                        priority: -110,
                        policy: ChainPolicy::Accept,
                    },
                ),
            );
            let saddr = Expr::Payload(Payload {
                dreg: 1,
                base: PayloadBase::Network,
                offset: load.0,
                len: load.1,
            });
            let verdict = |v| {
                Expr::Immediate(Immediate {
                    dreg: 0,
                    data: ImmediateData::Verdict(v),
                })
            };
            let rules = vec![
                vec![
                    saddr.clone(),
                    lookup("blocked", 1, false),
                    verdict(Verdict::Drop),
                ],
                vec![saddr, lookup("blocked", 1, true), verdict(Verdict::Accept)],
                vec![
                    Expr::Meta(Meta {
                        key: MetaKey::L4PROTO,
                        dreg: 1,
                    }),
                    Expr::Cmp(Cmp {
                        sreg: 1,
                        op: CmpOp::Eq,
                        data: vec![6],
                    }),
                    Expr::Payload(Payload {
                        dreg: 1,
                        base: PayloadBase::Transport,
                        offset: 2,
                        len: 2,
                    }),
                    vmap("vmp", 1),
                ],
                dnat_map(family, "fwds", true),
                dnat_map(family, "fany", false),
            ];
            for r in &rules {
                tx.push(Op::AddEncodedRule {
                    chain: a.chain("c"),
                    rule: encoded(r.clone()),
                    position: RulePosition::Append,
                });
            }
            s.commit(&tx).expect("rules using sets");
            assert_eq!(
                debug_exprs(fam, "a", "c"),
                debug_exprs(fam, "b", "c"),
                "{fam}: expressions"
            );
            let text = |t| {
                run_ok("nft", &["list", "chain", fam, t, "c"])
                    .replace(&format!("table {fam} {t} "), "table X ")
            };
            assert_eq!(text("a"), text("b"), "{fam}: nft's listing");
            // xtnl decodes nft's rules into the expressions it writes (the kernel adds
            // NF_NAT_RANGE_* flags to a nat expression on read-back, on both sides).
            let theirs = s
                .list_raw_rules(&TableRef::new(family, "b"), Some("c"))
                .unwrap();
            let mine = s.list_raw_rules(&a, Some("c")).unwrap();
            assert_eq!(theirs.len(), rules.len());
            for (m, t) in mine.iter().zip(&theirs) {
                assert_eq!(m.exprs, t.exprs, "{fam}");
            }
            // An inverted lookup reads back inverted.
            assert!(matches!(&theirs[1].exprs[1], Expr::Lookup(l) if l.inverted()));
            assert!(matches!(&theirs[3].exprs[3], Expr::Lookup(l) if l.dreg == Some(1)));
        }
    });
}

#[test]
fn policy_scopes_set_verbs_by_table_and_set() {
    let p = xtnl::policy::Policy::parse(
        r#"
[[allow]]
table = "xtnl_nat"
sets = ["fwd*"]
verbs = ["add-element", "delete-element"]
"#,
        std::path::Path::new("test.toml"),
    )
    .expect("policy parses");
    let t = TableRef::new(Family::Ipv4, "xtnl_nat");
    let add = |set: &str| {
        let mut tx = Transaction::new();
        tx.set_op(SetOp::AddElements {
            table: t.clone(),
            set: set.into(),
            elements: vec![ElemRepr::key(vec![1])],
            exclusive: true,
        });
        xtnl::policy::touches(&tx)
    };
    p.check(&add("fwd")).expect("allowed");
    p.check(&add("fwd_any")).expect("allowed");
    let err = p.check(&add("other")).unwrap_err().to_string();
    assert!(err.contains("add-element in ip xtnl_nat other"), "{err}");
    assert!(err.contains("sets fwd*"), "{err}");
    let mut tx = Transaction::new();
    tx.set_op(SetOp::Delete {
        table: t.clone(),
        name: "fwd".into(),
    });
    let err = p
        .check(&xtnl::policy::touches(&tx))
        .unwrap_err()
        .to_string();
    assert!(err.contains("delete-set"), "{err}");
    let bad = xtnl::policy::Policy::parse(
        "[[allow]]\ntable = \"t\"\nverbs = [\"add-element\"]\n",
        std::path::Path::new("p.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(bad.contains("sets = [...]"), "{bad}");
}

#[test]
fn element_dumps_stay_exact_under_concurrent_commits() {
    in_netns(|| {
        let t = TableRef::new(Family::Ipv4, "dump");
        let key = |p: u16| encode(&[Field::Proto(6), Field::Port(p)]);
        let mut s = session();
        let mut tx = Transaction::new();
        tx.ensure_table(&t);
        for name in ["big", "churn"] {
            tx.set_op(SetOp::Ensure {
                table: t.clone(),
                set: SetSpec::set(name, vec![DataType::InetProto, DataType::InetService]),
            });
        }
        tx.set_op(SetOp::AddElements {
            table: t.clone(),
            set: "big".into(),
            elements: (1..=20_000u16).map(|p| ElemRepr::key(key(p))).collect(),
            exclusive: true,
        });
        s.commit(&tx).unwrap();
        // Another socket of the same namespace commits all along (the thread is spawned from
        // this one, so it is in the same namespace).
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let churn = {
            let (stop, t) = (stop.clone(), t.clone());
            std::thread::spawn(move || {
                let mut w = session();
                let mut n = 0u32;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let p = (n % 1000) as u16 + 1;
                    let mut tx = Transaction::new();
                    tx.set_op(SetOp::AddElements {
                        table: t.clone(),
                        set: "churn".into(),
                        elements: vec![ElemRepr::key(key(p))],
                        exclusive: false,
                    });
                    tx.set_op(SetOp::DeleteElements {
                        table: t.clone(),
                        set: "churn".into(),
                        keys: vec![key(p)],
                    });
                    w.commit(&tx).unwrap();
                    n += 1;
                }
                n
            })
        };
        // A plan that changes nothing returns its reads without the generation bracket of
        // `Session::read` (which, under endless churn, would give up): each dump alone must
        // still be exact (restarted if the kernel flags it NLM_F_DUMP_INTR; kernel 6.18 did not
        // flag any here: it walks a set's elements under RCU, so commits to another set leave
        // the walk consistent).
        for _ in 0..20 {
            let got = s
                .transact(|r| Ok((Transaction::new(), r.elements(&t, "big")?)))
                .unwrap()
                .value;
            assert_eq!(got.len(), 20_000);
            let mut keys: Vec<_> = got.into_iter().map(|e| e.key).collect();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), 20_000, "duplicates in a restarted dump");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let commits = churn.join().unwrap();
        let stats = s.stats();
        eprintln!(
            "{commits} concurrent commits; dump restarts {}, snapshot retries {}",
            stats.dump_restarts, stats.snapshot_retries
        );
        assert!(commits > 0);
    });
}
