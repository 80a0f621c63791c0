use super::*;
use crate::expr::{Counter, Expr, Immediate, ImmediateData, Verdict};

fn emit(f: impl FnOnce(&mut AttrWriter<'_>)) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut of = false;
    f(&mut AttrWriter::new(&mut buf, &mut of));
    assert!(!of);
    buf
}

#[test]
fn base_chain_round_trip() {
    let c = ChainRepr {
        family: nfproto::IPV4,
        table: "nat".into(),
        name: "PREROUTING".into(),
        hook: Some(HookRepr {
            hooknum: 0,
            priority: -100,
            device: None,
        }),
        policy: Some(1),
        chain_type: Some("nat".into()),
        ..Default::default()
    };
    let bytes = emit(|w| c.emit(w));
    assert_eq!(ChainRepr::parse(nfproto::IPV4, &bytes).unwrap(), c);
}

#[test]
fn base_chain_counters_round_trip_and_layout() {
    let c = ChainRepr {
        family: nfproto::IPV4,
        table: "filter".into(),
        name: "INPUT".into(),
        policy: Some(0),
        counters: Some(ChainCounters {
            packets: 12,
            bytes: 3456,
        }),
        ..Default::default()
    };
    let bytes = emit(|w| c.emit(w));
    assert_eq!(ChainRepr::parse(nfproto::IPV4, &bytes).unwrap(), c);
    // NFTA_CHAIN_COUNTERS (8, nested): NFTA_COUNTER_PACKETS (2) then NFTA_COUNTER_BYTES (1),
    // as libnftnl writes them.
    let tail: &[u8] = &[
        28, 0, 8, 0x80, 12, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 12, 12, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x0d,
        0x80,
    ];
    assert!(bytes.ends_with(tail), "{bytes:02x?}");
}

#[test]
fn chain_counters_need_both_counts() {
    // NFTA_CHAIN_TABLE "t", NFTA_CHAIN_NAME "c", NFTA_CHAIN_COUNTERS with packets only.
    let bytes = emit(|w| {
        w.strz(1, "t").strz(3, "c").nested(8, |w| {
            w.u64_be(2, 1);
        });
    });
    let e = ChainRepr::parse(nfproto::IPV4, &bytes).unwrap_err();
    assert!(e.to_string().contains("NFTA_COUNTER_BYTES"), "{e}");
    // A kernel dump pads the u64s (NFTA_COUNTER_PAD, 3): ignored.
    let bytes = emit(|w| {
        w.strz(1, "t").strz(3, "c").nested(8, |w| {
            w.bytes(3, &[]).u64_be(2, 5).bytes(3, &[]).u64_be(1, 6);
        });
    });
    let c = ChainRepr::parse(nfproto::IPV4, &bytes).unwrap();
    assert_eq!(
        c.counters,
        Some(ChainCounters {
            packets: 5,
            bytes: 6
        })
    );
}

#[test]
fn rule_round_trip_with_comment() {
    let r = RuleRepr {
        family: nfproto::IPV4,
        table: "nat".into(),
        chain: "PREROUTING".into(),
        handle: Some(42),
        position: None,
        exprs: vec![
            Expr::Counter(Counter {
                packets: 0,
                bytes: 0,
            }),
            Expr::Immediate(Immediate {
                dreg: 0,
                data: ImmediateData::Verdict(Verdict::Jump("vcld-5205".into())),
            }),
        ],
        userdata: udata::encode_comment("VCL: jump"),
        compat: None,
    };
    let bytes = emit(|w| r.emit(w));
    let back = RuleRepr::parse(nfproto::IPV4, &bytes).unwrap();
    assert_eq!(back, r);
    assert_eq!(
        udata::comment(back.userdata.as_deref().unwrap()).as_deref(),
        Some("VCL: jump")
    );
}

#[test]
fn rule_compat_round_trips_with_exact_bytes() {
    let r = RuleRepr {
        family: nfproto::IPV4,
        table: "filter".into(),
        chain: "INPUT".into(),
        compat: Some(RuleCompat::new(6, true)),
        ..Default::default()
    };
    let bytes = emit(|w| r.emit(w));
    // After "filter\0" (12) and "INPUT\0" (12): the nest of two big-endian u32s.
    let nest = &bytes[24..];
    assert_eq!(nest.len(), 20);
    assert_eq!(&nest[..4], &[20, 0, 5, 0x80]);
    assert_eq!(&nest[4..12], &[8, 0, 1, 0, 0, 0, 0, 6]);
    assert_eq!(&nest[12..20], &[8, 0, 2, 0, 0, 0, 0, 2]);
    let back = RuleRepr::parse(nfproto::IPV4, &bytes).unwrap();
    assert_eq!(back, r);
    assert!(back.compat.unwrap().inverted());
}

#[test]
fn rule_compat_without_flags_is_refused() {
    let bytes = emit(|w| {
        w.strz(rule_attr::TABLE, "filter")
            .strz(rule_attr::CHAIN, "INPUT")
            .nested(rule_attr::COMPAT, |w| {
                w.u32_be(rule_compat_attr::PROTO, 17);
            });
    });
    let err = RuleRepr::parse(nfproto::IPV4, &bytes).unwrap_err();
    assert!(err.to_string().contains("NFTA_RULE_COMPAT_FLAGS"), "{err}");
}

#[test]
fn missing_name_is_named() {
    let bytes = emit(|w| {
        w.strz(chain_attr::TABLE, "nat");
    });
    let err = ChainRepr::parse(nfproto::IPV4, &bytes).unwrap_err();
    assert!(err.to_string().contains("NFTA_CHAIN_NAME"), "{err}");
}

#[test]
fn comment_too_long_is_refused() {
    assert!(udata::encode_comment(&"x".repeat(254)).is_some());
    assert!(udata::encode_comment(&"x".repeat(255)).is_none());
}
