//! Unit tests of the map layout's elements and operations.
use super::*;

fn f(spec: &str, comment: Option<&str>) -> Forward {
    let mut f = Forward::parse_spec(spec).unwrap();
    f.comment = comment.map(str::to_owned);
    f
}

#[test]
fn elements_round_trip_with_membership_and_comment() {
    for (family, spec) in [
        (Family::Ipv4, "eth1:tcp/50443=192.0.2.3:3389"),
        (Family::Ipv4, "udp/53=192.0.2.4:5353"),
        (Family::Ipv6, "eth1:tcp/22=[2001:db8::3]:2222"),
    ] {
        let fw = f(spec, Some("VCL: forward x"));
        let (map, e) = element(family, "vcld-7", &fw).unwrap();
        assert_eq!(
            map,
            if fw.in_interface.is_some() {
                FWD_MAP
            } else {
                FWD_ANY_MAP
            }
        );
        let back = decode_element(map, &e).unwrap();
        assert_eq!(back.reservation, "vcld-7");
        assert_eq!(back.forward, fw);
        assert_eq!(element_key(&fw.key()), (map, e.key.clone()));
    }
}

#[test]
fn wrong_family_and_long_comments_are_refused() {
    let err = element(Family::Ipv6, "r", &f("tcp/1=192.0.2.1:1", None)).unwrap_err();
    assert!(err.to_string().contains("is not an IPv6 address"), "{err}");
    let long = "x".repeat(250);
    let err = element(Family::Ipv4, "vcld-7", &f("tcp/1=192.0.2.1:1", Some(&long)));
    assert!(
        err.unwrap_err()
            .to_string()
            .contains("an element comment holds 253"),
        "comment too long must be refused"
    );
}

#[test]
fn only_nathost_operations_have_a_map_form() {
    let op = crate::nathost::Operation::CreateChain {
        table: "nat".into(),
        chain: "x".into(),
    };
    let err = MapOp::from_operation(&op).unwrap_err().to_string();
    assert!(err.contains("create_chain has no map-layout form"), "{err}");
    assert_eq!(Layout::parse("map").unwrap(), Layout::Map);
    assert!(Layout::parse("maps").is_err());
}

#[test]
fn a_chain_layout_table_is_refused_in_the_map_layout() {
    let op = crate::nathost::Operation::Teardown {
        table: "other".into(),
        chain: "vcld-1".into(),
        entry: "PREROUTING".into(),
    };
    let err = MapOp::from_operation(&op).unwrap_err().to_string();
    assert!(
        err.contains("table other does not apply to the map layout"),
        "{err}"
    );
}

#[test]
fn the_generation_after_a_commit_skips_zero() {
    assert_eq!(handle::next_generation(7), 8);
    assert_eq!(handle::next_generation(u32::MAX), 1);
}
