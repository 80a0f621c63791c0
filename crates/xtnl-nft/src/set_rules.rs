//! Expressions of rules that use named sets and maps, register for register as nft 1.0.6
//! writes them (`nft --debug=netlink`; tests/sets.rs checks each against nft):
//!
//! - `ip saddr [!=] @set`: a load into register 1 and a lookup (with the invert flag);
//! - `tcp dport vmap @map`: a lookup with the verdict register as destination;
//! - `dnat ip to iifname . meta l4proto . th dport map @map`: the three fields loaded into
//!   consecutive 4-byte registers, a lookup that loads address and port, and a nat
//!   expression reading them.

#![deny(missing_docs)]

use crate::model::Family;
use crate::wire::expr::{
    Expr, Lookup, Meta, MetaKey, Nat, NatKind, Payload, PayloadBase, REG_1, REG_VERDICT,
};

/// `NFT_REG32_00`: the first 4-byte register; 16-byte register n covers 4-byte registers
/// 8 + 4(n-1) to 11 + 4(n-1). nft names a field by the 16-byte register when it starts one.
const REG32_00: u32 = 8;

/// The register nft names for a field at byte `offset` of the register file.
fn reg_at(offset: u32) -> u32 {
    if offset % 16 == 0 {
        REG_1 + offset / 16
    } else {
        REG32_00 + offset / 4
    }
}

/// `lookup reg <sreg> set <set>`, inverted for `!=`.
pub fn lookup(set: &str, sreg: u32, inverted: bool) -> Expr {
    Expr::Lookup(Lookup {
        set: set.into(),
        sreg,
        set_id: None,
        dreg: None,
        flags: inverted.then_some(Lookup::F_INV),
    })
}

/// `lookup reg <sreg> set <map> dreg <dreg>`: a map lookup loading the element's data.
pub fn map_lookup(map: &str, sreg: u32, dreg: u32) -> Expr {
    Expr::Lookup(Lookup {
        set: map.into(),
        sreg,
        set_id: None,
        dreg: Some(dreg),
        flags: None,
    })
}

/// `vmap @map` on register `sreg`: the element's verdict ends the rule.
pub fn vmap(map: &str, sreg: u32) -> Expr {
    map_lookup(map, sreg, REG_VERDICT)
}

/// Loads for `iifname . meta l4proto . th dport` (with the interface) or `meta l4proto . th
/// dport` (without), from register 1 on; returns them and the key's length.
pub fn forward_key_loads(with_iface: bool) -> (Vec<Expr>, u32) {
    let mut out = Vec::new();
    let mut at = 0;
    if with_iface {
        out.push(Expr::Meta(Meta {
            key: MetaKey::IIFNAME,
            dreg: reg_at(at),
        }));
        at += 16;
    }
    out.push(Expr::Meta(Meta {
        key: MetaKey::L4PROTO,
        dreg: reg_at(at),
    }));
    at += 4;
    out.push(Expr::Payload(Payload {
        dreg: reg_at(at),
        base: PayloadBase::Transport,
        offset: 2,
        len: 2,
    }));
    at += 4;
    (out, at)
}

/// `dnat <family> to [iifname .] meta l4proto . th dport map @map`: the whole rule.
pub fn dnat_map(family: Family, map: &str, with_iface: bool) -> Vec<Expr> {
    let (mut out, _) = forward_key_loads(with_iface);
    out.push(map_lookup(map, REG_1, REG_1));
    let addr_len = if family == Family::Ipv6 { 16 } else { 4 };
    out.push(Expr::Nat(Nat {
        kind: NatKind::Dnat,
        family: family.nfproto().into(),
        reg_addr_min: Some(REG_1),
        reg_addr_max: None,
        reg_proto_min: Some(reg_at(addr_len)),
        reg_proto_max: None,
        flags: None,
    }));
    out
}
