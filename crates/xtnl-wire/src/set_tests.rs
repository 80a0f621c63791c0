//! Byte-exact checks against what `nft --debug=mnl` (nftables 1.0.6) sent for
//! `map fwds { type ifname . inet_proto . inet_service : ipv4_addr . inet_service; counter;
//! comment "fwds"; }`, `set blocked { type ipv4_addr; flags interval, timeout; timeout 1h;
//! size 1000; policy memory; }`, `map vmp { type inet_service : verdict; }` and their
//! elements (the attributes after the `nfgenmsg`).

use super::*;
use crate::expr::Counter;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn emit(f: impl FnOnce(&mut AttrWriter<'_>)) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut of = false;
    f(&mut AttrWriter::new(&mut buf, &mut of));
    assert!(!of);
    buf
}

const NEWSET_FWDS: &str = "06000100740000000900020066776473000000000800030000000008080004000002930d080005000000001808000600000001cd080007000000000808000a000000000131000d00000400000000010400000000030800040d0000000100040800040d000000010006040000000007056677647300000000140011800c000100636f756e7465720004000280";
const NEWSET_BLOCKED: &str = "06000100740000000c000200626c6f636b65640008000300000000140800040000000007080005000000000408000a000000000208000800000000010c00098008000100000003e80c000b00000000000036ee800a000d000004020000000000";
const NEWSET_VMP: &str = "060001007400000008000200766d70000800030000000008080004000000000d080005000000000208000600ffffff00080007000000000008000a000000000316000d000004020000000104000000000604000000000000";
const NEWSETELEM_FWDS: &str = "060001007400000009000200667764730000000008000400000000014800038044000180200001801c0001006574683100000000000000000000000006000000c50b0000100002800c000100c00002030d3d00000d000600000776636c642d3700000000";
const NEWSETELEM_VMP: &str = "060001007400000008000200766d700008000400000000034c000380200001800c0001800600010000160000100002800c0002800800010000000000280002800c0001800600010000500000180002801400028008000100fffffffd0800020070726500";
const NEWSETELEM_BLOCKED: &str = "06000100740000000c000200626c6f636b6564000800040000000002580003801800018008000300000000010c0001800800010000000000240002800c00040000000000000075300c00018008000100c000020908000600000278001800038008000300000000010c00018008000100c000020a";

#[test]
fn concatenated_map_with_counter_parses_as_nft_sent_it() {
    let s = SetDefRepr::parse(2, &unhex(NEWSET_FWDS)).unwrap();
    assert_eq!(s.table, "t");
    assert_eq!(s.name, "fwds");
    assert_eq!(s.flags, flags::MAP);
    assert!(s.is_map());
    // ifname (41) . inet_proto (12) . inet_service (13), 6 bits each.
    assert_eq!(s.key_type, (41 << 12) | (12 << 6) | 13);
    assert_eq!(s.key_len, 24);
    assert_eq!(s.data_type, Some((7 << 6) | 13));
    assert_eq!(s.data_len, Some(8));
    assert_eq!(s.id, Some(1));
    assert_eq!(s.comment().as_deref(), Some("fwds"));
    assert_eq!(s.exprs, vec![Expr::Counter(Counter::default())]);
    assert!(s.unknown.is_empty());
    // Re-emitted, it parses to the same set (our counter carries explicit zeroes).
    let again = emit(|w| s.emit(w));
    assert_eq!(SetDefRepr::parse(2, &again).unwrap(), s);
}

#[test]
fn interval_timeout_set_emits_exactly_what_nft_sends() {
    let bytes = unhex(NEWSET_BLOCKED);
    let s = SetDefRepr::parse(2, &bytes).unwrap();
    assert_eq!(s.flags, flags::INTERVAL | flags::TIMEOUT);
    assert_eq!(flags::names(s.flags), ["interval", "timeout"]);
    assert_eq!(s.key_type, 7);
    assert_eq!(s.key_len, 4);
    assert_eq!(s.policy, Some(SetPolicy::Memory));
    assert_eq!(s.size, Some(1000));
    assert_eq!(s.timeout_ms, Some(3_600_000));
    assert_eq!(
        udata::find(s.userdata.as_deref().unwrap(), udata::SET_KEYBYTEORDER),
        Some(&udata::BYTEORDER_BIG.to_ne_bytes()[..])
    );
    assert_eq!(emit(|w| s.emit(w)), bytes);
}

#[test]
fn verdict_map_emits_exactly_what_nft_sends() {
    let bytes = unhex(NEWSET_VMP);
    let s = SetDefRepr::parse(2, &bytes).unwrap();
    assert_eq!(s.data_type, Some(DATA_VERDICT));
    assert_eq!(s.data_len, Some(0));
    assert_eq!(emit(|w| s.emit(w)), bytes);
}

#[test]
fn map_element_with_comment_emits_exactly_what_nft_sends() {
    let mut key = b"eth1".to_vec();
    key.resize(16, 0);
    key.extend_from_slice(&[6, 0, 0, 0]);
    key.extend_from_slice(&[0xc5, 0x0b, 0, 0]);
    let e = ElemRepr {
        data: Some(ElemData::Value(vec![192, 0, 2, 3, 0x0d, 0x3d, 0, 0])),
        ..ElemRepr::key(key)
    }
    .with_comment("vcld-7")
    .unwrap();
    let list = ElemListRepr {
        family: 2,
        table: "t".into(),
        set: "fwds".into(),
        set_id: Some(1),
        elements: vec![e.clone()],
    };
    let bytes = unhex(NEWSETELEM_FWDS);
    assert_eq!(emit(|w| list.emit(w)), bytes);
    let back = ElemListRepr::parse(2, &bytes).unwrap();
    assert_eq!(back, list);
    assert_eq!(back.elements[0].comment().as_deref(), Some("vcld-7"));
}

#[test]
fn verdict_elements_emit_exactly_what_nft_sends() {
    let list = ElemListRepr {
        family: 2,
        table: "t".into(),
        set: "vmp".into(),
        set_id: Some(3),
        elements: vec![
            ElemRepr {
                data: Some(ElemData::Verdict(Verdict::Drop)),
                ..ElemRepr::key(vec![0, 22])
            },
            ElemRepr {
                data: Some(ElemData::Verdict(Verdict::Jump("pre".into()))),
                ..ElemRepr::key(vec![0, 80])
            },
        ],
    };
    let bytes = unhex(NEWSETELEM_VMP);
    assert_eq!(emit(|w| list.emit(w)), bytes);
    assert_eq!(ElemListRepr::parse(2, &bytes).unwrap(), list);
    assert_eq!(
        list.elements[1].to_string(),
        "element 0x00005000 : jump pre 0"
    );
}

#[test]
fn interval_elements_with_timeout_parse() {
    let l = ElemListRepr::parse(2, &unhex(NEWSETELEM_BLOCKED)).unwrap();
    // nft opens the interval map with 0.0.0.0 as an interval end, then the element, then
    // the end of its one-address range.
    assert_eq!(l.elements.len(), 3);
    assert_eq!(l.elements[0].flags, elem_flags::INTERVAL_END);
    assert_eq!(l.elements[1].key, vec![192, 0, 2, 9]);
    assert_eq!(l.elements[1].timeout_ms, Some(30_000));
    assert_eq!(l.elements[1].comment().as_deref(), Some("x"));
    assert_eq!(l.elements[2].key, vec![192, 0, 2, 10]);
    assert_eq!(l.elements[2].flags, elem_flags::INTERVAL_END);
}

#[test]
fn element_counter_and_unknown_attributes_are_kept() {
    let e = ElemRepr {
        exprs: vec![Expr::Counter(Counter {
            packets: 3,
            bytes: 180,
        })],
        ..ElemRepr::key(vec![1, 2, 3, 4])
    };
    let list = ElemListRepr {
        family: 2,
        table: "t".into(),
        set: "s".into(),
        set_id: None,
        elements: vec![e],
    };
    let mut bytes = emit(|w| list.emit(w));
    let back = ElemListRepr::parse(2, &bytes).unwrap();
    assert_eq!(back.elements[0].counter(), Some((3, 180)));
    // An attribute type from a newer kernel is listed, not dropped silently.
    let extra = emit(|w| {
        w.nested(field::LIST_ELEMENTS, |w| {
            w.nested(NFTA_LIST_ELEM, |w| {
                crate::expr::data::emit_value(w, field::ELEM_KEY, &[9, 9, 9, 9]);
                w.u32_be(42, 7);
            });
        });
    });
    bytes.extend_from_slice(&extra);
    let back = ElemListRepr::parse(2, &bytes).unwrap();
    assert_eq!(back.elements[1].unknown, vec![42]);
}

#[test]
fn missing_key_is_named_with_its_path() {
    let bytes = emit(|w| {
        w.strz(field::LIST_TABLE, "t").strz(field::LIST_SET, "s");
        w.nested(field::LIST_ELEMENTS, |w| {
            w.nested(NFTA_LIST_ELEM, |w| {
                w.u32_be(field::ELEM_FLAGS, 0);
            });
        });
    });
    let err = ElemListRepr::parse(2, &bytes).unwrap_err().to_string();
    assert!(err.contains("NFTA_SET_ELEM_KEY"), "{err}");
    assert!(err.contains("element #0"), "{err}");
    let err = SetDefRepr::parse(
        2,
        &emit(|w| {
            w.strz(field::SET_TABLE, "t");
        }),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("NFTA_SET_NAME"), "{err}");
}
