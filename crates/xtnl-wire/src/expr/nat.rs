use std::fmt;

use super::all_known;
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod nat_attr {
    pub const TYPE: u16 = 1;
    pub const FAMILY: u16 = 2;
    pub const REG_ADDR_MIN: u16 = 3;
    pub const REG_ADDR_MAX: u16 = 4;
    pub const REG_PROTO_MIN: u16 = 5;
    pub const REG_PROTO_MAX: u16 = 6;
    pub const FLAGS: u16 = 7;
}

mod masq_attr {
    pub const FLAGS: u16 = 1;
    pub const REG_PROTO_MIN: u16 = 2;
    pub const REG_PROTO_MAX: u16 = 3;
}

/// `NFTA_NAT_TYPE`: `enum nft_nat_types`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NatKind {
    /// `NFT_NAT_SNAT`: rewrite the source.
    Snat,
    /// `NFT_NAT_DNAT`: rewrite the destination.
    Dnat,
}

/// The native `nat` expression: addresses and ports are taken from registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nat {
    /// `NFTA_NAT_TYPE`.
    pub kind: NatKind,
    /// NFPROTO_IPV4 or NFPROTO_IPV6.
    pub family: u32,
    /// `NFTA_NAT_REG_ADDR_MIN`: the register holding the lowest address.
    pub reg_addr_min: Option<u32>,
    /// `NFTA_NAT_REG_ADDR_MAX`: the register holding the highest address (a range).
    pub reg_addr_max: Option<u32>,
    /// `NFTA_NAT_REG_PROTO_MIN`: the register holding the lowest port (big endian, 2 bytes).
    pub reg_proto_min: Option<u32>,
    /// `NFTA_NAT_REG_PROTO_MAX`: the register holding the highest port.
    pub reg_proto_max: Option<u32>,
    /// `NF_NAT_RANGE_*` flags.
    pub flags: Option<u32>,
}

impl Nat {
    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        use nat_attr::*;
        if !all_known(
            data,
            &[
                TYPE,
                FAMILY,
                REG_ADDR_MIN,
                REG_ADDR_MAX,
                REG_PROTO_MIN,
                REG_PROTO_MAX,
                FLAGS,
            ],
        )? {
            return Ok(None);
        }
        let mut n = Nat {
            kind: NatKind::Snat,
            family: 0,
            reg_addr_min: None,
            reg_addr_max: None,
            reg_proto_min: None,
            reg_proto_max: None,
            flags: None,
        };
        let (mut kind, mut family) = (None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                TYPE => kind = Some(a.u32_be("NFTA_NAT_TYPE")?),
                FAMILY => family = Some(a.u32_be("NFTA_NAT_FAMILY")?),
                REG_ADDR_MIN => n.reg_addr_min = Some(a.u32_be("NFTA_NAT_REG_ADDR_MIN")?),
                REG_ADDR_MAX => n.reg_addr_max = Some(a.u32_be("NFTA_NAT_REG_ADDR_MAX")?),
                REG_PROTO_MIN => n.reg_proto_min = Some(a.u32_be("NFTA_NAT_REG_PROTO_MIN")?),
                REG_PROTO_MAX => n.reg_proto_max = Some(a.u32_be("NFTA_NAT_REG_PROTO_MAX")?),
                FLAGS => n.flags = Some(a.u32_be("NFTA_NAT_FLAGS")?),
                _ => {}
            }
        }
        n.kind = match kind.ok_or_else(|| WireError::missing("NFTA_NAT_TYPE"))? {
            0 => NatKind::Snat,
            1 => NatKind::Dnat,
            _ => return Ok(None),
        };
        n.family = family.ok_or_else(|| WireError::missing("NFTA_NAT_FAMILY"))?;
        Ok(Some(n))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        use nat_attr::*;
        w.u32_be(TYPE, if self.kind == NatKind::Dnat { 1 } else { 0 });
        w.u32_be(FAMILY, self.family);
        for (ty, reg) in [
            (REG_ADDR_MIN, self.reg_addr_min),
            (REG_ADDR_MAX, self.reg_addr_max),
            (REG_PROTO_MIN, self.reg_proto_min),
            (REG_PROTO_MAX, self.reg_proto_max),
            (FLAGS, self.flags),
        ] {
            if let Some(v) = reg {
                w.u32_be(ty, v);
            }
        }
    }
}

impl fmt::Display for Nat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.kind == NatKind::Dnat {
            "dnat"
        } else {
            "snat"
        };
        let fam = match self.family {
            2 => "ip",
            10 => "ip6",
            _ => "?",
        };
        write!(f, "nat {kind} {fam}")?;
        for (label, reg) in [
            ("addr_min", self.reg_addr_min),
            ("addr_max", self.reg_addr_max),
            ("proto_min", self.reg_proto_min),
            ("proto_max", self.reg_proto_max),
        ] {
            if let Some(r) = reg {
                write!(f, " {label} reg {r}")?;
            }
        }
        if let Some(fl) = self.flags {
            write!(f, " flags 0x{fl:x}")?;
        }
        Ok(())
    }
}

/// The native `masq` expression, with an optional port range from registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Masq {
    /// `NFTA_MASQ_FLAGS` (`NF_NAT_RANGE_*`: random, fully random, persistent).
    pub flags: Option<u32>,
    /// `NFTA_MASQ_REG_PROTO_MIN`: the register holding the lowest port.
    pub reg_proto_min: Option<u32>,
    /// `NFTA_MASQ_REG_PROTO_MAX`: the register holding the highest port.
    pub reg_proto_max: Option<u32>,
}

impl Masq {
    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        use masq_attr::*;
        if !all_known(data, &[FLAGS, REG_PROTO_MIN, REG_PROTO_MAX])? {
            return Ok(None);
        }
        let mut m = Masq {
            flags: None,
            reg_proto_min: None,
            reg_proto_max: None,
        };
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                FLAGS => m.flags = Some(a.u32_be("NFTA_MASQ_FLAGS")?),
                REG_PROTO_MIN => m.reg_proto_min = Some(a.u32_be("NFTA_MASQ_REG_PROTO_MIN")?),
                REG_PROTO_MAX => m.reg_proto_max = Some(a.u32_be("NFTA_MASQ_REG_PROTO_MAX")?),
                _ => {}
            }
        }
        Ok(Some(m))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        use masq_attr::*;
        if let Some(f) = self.flags {
            w.u32_be(FLAGS, f);
        }
        if let Some(r) = self.reg_proto_min {
            w.u32_be(REG_PROTO_MIN, r);
        }
        if let Some(r) = self.reg_proto_max {
            w.u32_be(REG_PROTO_MAX, r);
        }
    }
}

impl fmt::Display for Masq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "masq")?;
        if let Some(fl) = self.flags {
            write!(f, " flags 0x{fl:x}")?;
        }
        if let Some(r) = self.reg_proto_min {
            write!(f, " proto_min reg {r}")?;
        }
        if let Some(r) = self.reg_proto_max {
            write!(f, " proto_max reg {r}")?;
        }
        Ok(())
    }
}
