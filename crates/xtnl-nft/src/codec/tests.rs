use super::*;
use crate::model::Dir;

fn round_trip(family: Family, rule: Rule) {
    let (exprs, ud) = encode(&rule, family).unwrap();
    let back = decode(family, &exprs, ud.as_deref());
    assert_eq!(back, rule, "exprs: {exprs:?}");
}

#[test]
fn model_round_trips_through_expressions() {
    let any = || Rule::new();
    round_trip(
        Family::Ipv4,
        any()
            .protocol(L4Proto::Tcp)
            .dport(PortRange::single(22))
            .counted()
            .action(Action::Accept),
    );
    round_trip(
        Family::Ipv4,
        any()
            .source("10.0.0.0/24".parse().unwrap())
            .with(Match::Address {
                dir: Dir::Destination,
                net: "10.1.0.0/20".parse().unwrap(),
                negated: true,
            })
            .action(Action::Drop),
    );
    round_trip(
        Family::Ipv4,
        any()
            .in_interface(Interface::new("eth0").unwrap())
            .with(Match::OutInterface {
                name: Interface::new("veth+").unwrap(),
                negated: true,
            })
            .action(Action::Return),
    );
    round_trip(
        Family::Ipv6,
        any()
            .protocol(L4Proto::Tcp)
            .dport(PortRange::new(8000, 8010).unwrap())
            .action(Action::Dnat(NatTarget {
                addr: "2001:db8::2".parse().unwrap(),
                ports: Some(PortRange::single(80)),
            })),
    );
    round_trip(
        Family::Inet,
        any()
            .source("192.0.2.0/24".parse().unwrap())
            .comment("hi")
            .action(Action::Jump("x".into())),
    );
    round_trip(
        Family::Ipv4,
        any()
            .protocol(L4Proto::Udp)
            .with(Match::Port {
                dir: Dir::Source,
                ports: PortRange::new(100, 200).unwrap(),
                negated: true,
            })
            .action(Action::Masquerade {
                ports: Some(PortRange::new(1024, 2048).unwrap()),
            }),
    );
}

#[test]
fn unknown_parts_are_kept_in_place_and_flag_the_rule() {
    let (mut exprs, _) = encode(
        &Rule::new().protocol(L4Proto::Tcp).action(Action::Accept),
        Family::Ipv4,
    )
    .unwrap();
    // meta pkttype compare: not modelled
    exprs.insert(
        0,
        Expr::Meta(Meta {
            key: MetaKey::PKTTYPE,
            dreg: REG_1,
        }),
    );
    exprs.insert(
        1,
        Expr::Cmp(Cmp {
            sreg: REG_1,
            op: CmpOp::Eq,
            data: vec![0],
        }),
    );
    let rule = decode(Family::Ipv4, &exprs, None);
    assert!(!rule.is_expressible());
    assert!(
        matches!(&rule.matches[0], Match::Opaque(o) if o.parts::<Exprs>().is_some_and(|x| x.0.len() == 2))
    );
    assert_eq!(rule.action, Some(Action::Accept));
    assert!(
        encode(&rule, Family::Ipv4).is_err(),
        "opaque rules must not be re-encoded"
    );
}

#[test]
fn port_sets_round_trip_through_nft_element_layout() {
    let p = |a, b| PortRange::new(a, b).unwrap();
    let interval = port_set_elements(&[p(443, 443), p(80, 80), p(1000, 2000)]);
    assert!(interval.interval);
    // `0 [end]`, then start / end+1 pairs, as nft writes `{ 80, 443, 1000-2000 }`.
    let keys: Vec<(u16, u32)> = interval
        .elements
        .iter()
        .map(|e| (u16::from_be_bytes([e.key[0], e.key[1]]), e.flags))
        .collect();
    assert_eq!(
        keys,
        [
            (0, 1),
            (80, 0),
            (81, 1),
            (443, 0),
            (444, 1),
            (1000, 0),
            (2001, 1)
        ]
    );
    assert_eq!(
        ports_of_elements(&interval.elements).unwrap(),
        [p(80, 80), p(443, 443), p(1000, 2000)]
    );
    let merged = port_set_elements(&[p(1, 5), p(6, 9), p(65535, 65535)]);
    assert_eq!(
        ports_of_elements(&merged.elements).unwrap(),
        [p(1, 9), p(65535, 65535)]
    );
    let plain = port_set_elements(&[p(22, 22), p(80, 80)]);
    assert!(!plain.interval);
    assert_eq!(
        ports_of_elements(&plain.elements).unwrap(),
        [p(22, 22), p(80, 80)]
    );
}

#[test]
fn invalid_rules_are_refused_before_encoding() {
    let port_without_proto = Rule::new().dport(PortRange::single(80));
    assert!(encode(&port_without_proto, Family::Ipv4).is_err());
    let v6_in_ip = Rule::new().source("2001:db8::1".parse().unwrap());
    assert!(encode(&v6_in_ip, Family::Ipv4).is_err());
    let long_comment = Rule::new().action(Action::Accept).comment("x".repeat(300));
    assert!(encode(&long_comment, Family::Ipv4).is_err());
    assert!(
        encode(&Rule::new(), Family::Ipv4).is_err(),
        "a rule with no statement"
    );
    assert!(encode(&Rule::new().comment("only a note"), Family::Ipv4).is_err());
    let other_tcp = Rule::new()
        .protocol(L4Proto::Other(6))
        .action(Action::Accept);
    assert!(encode(&other_tcp, Family::Ipv4).is_err(), "Other(6) is Tcp");
    assert!(Interface::new("+").is_err());
    assert!(Interface::new("").is_err());
    assert!(Interface::new("eth+").is_ok());
}
