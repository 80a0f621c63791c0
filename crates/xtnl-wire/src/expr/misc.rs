//! Small expressions nft writes that [`Expr::parse`](super::Expr::parse) keeps raw, typed
//! here for the nft rule codec: `connlimit` (`ct count`), `hash` (`jhash`, `symhash`), `rt`,
//! `socket`, `tproxy`, `synproxy`, `xfrm`, `osf`, and the shift form of `bitwise`. Each is read from and written to
//! [`OtherExpr`] with `from_other`/`to_other`, attributes in the order the kernel lists them.

use super::data::value;

/// `NFTA_DATA_VALUE` inside an `NFTA_DATA` attribute.
const NFTA_DATA_VALUE: u16 = 1;
use super::{OtherExpr, all_known, other_expr};
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

/// The attributes of a raw expression of kind `name`, `None` for another kind or an
/// attribute outside `known`.
fn attrs_of<'a>(
    o: &'a OtherExpr,
    name: &str,
    known: &[u16],
) -> Result<Option<Attrs<'a>>, WireError> {
    if o.name != name || !all_known(&o.data, known)? {
        return Ok(None);
    }
    Ok(Some(Attrs::new(&o.data)))
}

/// `connlimit count <count> flags <flags>` (`ct count [over] N`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connlimit {
    /// `NFTA_CONNLIMIT_COUNT`.
    pub count: u32,
    /// `NFTA_CONNLIMIT_FLAGS`: 1 (`NFT_CONNLIMIT_F_INV`) for `over`.
    pub flags: u32,
}

impl Connlimit {
    /// The limit an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let Some(attrs) = attrs_of(o, "connlimit", &[1, 2])? else {
            return Ok(None);
        };
        let mut c = Connlimit { count: 0, flags: 0 };
        for a in attrs {
            let a = a?;
            match a.ty {
                1 => c.count = a.u32_be("NFTA_CONNLIMIT_COUNT")?,
                _ => c.flags = a.u32_be("NFTA_CONNLIMIT_FLAGS")?,
            }
        }
        Ok(Some(c))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("connlimit", |w| {
            w.u32_be(1, self.count).u32_be(2, self.flags);
        })
    }
}

/// `hash reg <dreg> = jhash(reg <sreg>, <len>, <seed>) % mod <modulus> [+ <offset>]`, or
/// `symhash() % mod <modulus>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hash {
    /// `NFTA_HASH_SREG` (jhash).
    pub sreg: Option<u32>,
    /// `NFTA_HASH_DREG`.
    pub dreg: u32,
    /// `NFTA_HASH_LEN`: bytes hashed (jhash).
    pub len: Option<u32>,
    /// `NFTA_HASH_MODULUS`.
    pub modulus: u32,
    /// `NFTA_HASH_SEED` (jhash).
    pub seed: Option<u32>,
    /// `NFTA_HASH_OFFSET`.
    pub offset: Option<u32>,
    /// `NFTA_HASH_TYPE`: [`Hash::JENKINS`] or [`Hash::SYM`].
    pub kind: u32,
}

impl Hash {
    /// `NFT_HASH_JENKINS`.
    pub const JENKINS: u32 = 0;
    /// `NFT_HASH_SYM`.
    pub const SYM: u32 = 1;

    /// The hash an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let Some(attrs) = attrs_of(o, "hash", &[1, 2, 3, 4, 5, 6, 7])? else {
            return Ok(None);
        };
        let mut h = Hash {
            sreg: None,
            dreg: 0,
            len: None,
            modulus: 0,
            seed: None,
            offset: None,
            kind: Self::JENKINS,
        };
        for a in attrs {
            let a = a?;
            match a.ty {
                1 => h.sreg = Some(a.u32_be("NFTA_HASH_SREG")?),
                2 => h.dreg = a.u32_be("NFTA_HASH_DREG")?,
                3 => h.len = Some(a.u32_be("NFTA_HASH_LEN")?),
                4 => h.modulus = a.u32_be("NFTA_HASH_MODULUS")?,
                5 => h.seed = Some(a.u32_be("NFTA_HASH_SEED")?),
                6 => h.offset = Some(a.u32_be("NFTA_HASH_OFFSET")?),
                _ => h.kind = a.u32_be("NFTA_HASH_TYPE")?,
            }
        }
        Ok(Some(h))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("hash", |w| {
            if let Some(s) = self.sreg {
                w.u32_be(1, s);
            }
            w.u32_be(2, self.dreg);
            if let Some(l) = self.len {
                w.u32_be(3, l);
            }
            w.u32_be(4, self.modulus);
            if let Some(s) = self.seed {
                w.u32_be(5, s);
            }
            if let Some(o) = self.offset {
                w.u32_be(6, o);
            }
            w.u32_be(7, self.kind);
        })
    }
}

/// A load of one key into a register: `rt load <key>` (`NFTA_RT_DREG` 1, `NFTA_RT_KEY` 2)
/// and `socket load <key>` (`NFTA_SOCKET_KEY` 1, `NFTA_SOCKET_DREG` 2, `NFTA_SOCKET_LEVEL` 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyLoad {
    /// The expression's kind: `rt` or `socket`.
    pub kind: &'static str,
    /// `NFTA_*_DREG`.
    pub dreg: u32,
    /// `NFTA_*_KEY` (`enum nft_rt_keys`, `enum nft_socket_keys`).
    pub key: u32,
    /// `NFTA_SOCKET_LEVEL` (cgroupv2).
    pub level: Option<u32>,
}

impl KeyLoad {
    /// The load an `rt` or `socket` expression kept raw holds; `None` for another kind.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let kind = match o.name.as_str() {
            "rt" => "rt",
            "socket" => "socket",
            _ => return Ok(None),
        };
        let Some(attrs) = attrs_of(o, kind, &[1, 2, 3])? else {
            return Ok(None);
        };
        // rt: NFTA_RT_DREG 1, NFTA_RT_KEY 2; socket: NFTA_SOCKET_KEY 1, NFTA_SOCKET_DREG 2.
        let (dreg_ty, key_ty) = if kind == "rt" { (1, 2) } else { (2, 1) };
        let (mut dreg, mut key, mut level) = (None, None, None);
        for a in attrs {
            let a = a?;
            match a.ty {
                t if t == dreg_ty => dreg = Some(a.u32_be("DREG")?),
                t if t == key_ty => key = Some(a.u32_be("KEY")?),
                _ => level = Some(a.u32_be("NFTA_SOCKET_LEVEL")?),
            }
        }
        Ok(Some(KeyLoad {
            kind,
            dreg: dreg.ok_or_else(|| WireError::missing("DREG"))?,
            key: key.ok_or_else(|| WireError::missing("KEY"))?,
            level,
        }))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it (the kernel lists
    /// the key first).
    pub fn to_other(&self) -> OtherExpr {
        other_expr(self.kind, |w| {
            if self.kind == "rt" {
                w.u32_be(2, self.key).u32_be(1, self.dreg);
            } else {
                w.u32_be(1, self.key).u32_be(2, self.dreg);
            }
            if let Some(l) = self.level {
                w.u32_be(3, l);
            }
        })
    }
}

/// `tproxy <family> addr reg <a> port reg <p>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tproxy {
    /// `NFTA_TPROXY_FAMILY` (`NFPROTO_IPV4`, `NFPROTO_IPV6`, or unspecified in inet).
    pub family: u32,
    /// `NFTA_TPROXY_REG_ADDR`.
    pub reg_addr: Option<u32>,
    /// `NFTA_TPROXY_REG_PORT`.
    pub reg_port: Option<u32>,
}

impl Tproxy {
    /// The tproxy an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let Some(attrs) = attrs_of(o, "tproxy", &[1, 2, 3])? else {
            return Ok(None);
        };
        let mut t = Tproxy {
            family: 0,
            reg_addr: None,
            reg_port: None,
        };
        for a in attrs {
            let a = a?;
            match a.ty {
                1 => t.family = a.u32_be("NFTA_TPROXY_FAMILY")?,
                2 => t.reg_addr = Some(a.u32_be("NFTA_TPROXY_REG_ADDR")?),
                _ => t.reg_port = Some(a.u32_be("NFTA_TPROXY_REG_PORT")?),
            }
        }
        Ok(Some(t))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("tproxy", |w| {
            w.u32_be(1, self.family);
            if let Some(r) = self.reg_addr {
                w.u32_be(2, r);
            }
            if let Some(r) = self.reg_port {
                w.u32_be(3, r);
            }
        })
    }
}

/// `bitwise reg <dreg> = ( reg <sreg> << n )` or `>> n`: the shift form of `bitwise`
/// (`NFTA_BITWISE_OP` 1 or 2, the amount in `NFTA_BITWISE_DATA`, host order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shift {
    /// `NFTA_BITWISE_SREG`.
    pub sreg: u32,
    /// `NFTA_BITWISE_DREG`.
    pub dreg: u32,
    /// `NFTA_BITWISE_LEN`.
    pub len: u32,
    /// `true` for `<<` (`NFT_BITWISE_LSHIFT`), `false` for `>>`.
    pub left: bool,
    /// `NFTA_BITWISE_DATA`: the amount, as the kernel holds it (a host-order u32).
    pub amount: Vec<u8>,
}

impl Shift {
    /// The shift an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let Some(attrs) = attrs_of(o, "bitwise", &[1, 2, 3, 6, 7])? else {
            return Ok(None);
        };
        let (mut sreg, mut dreg, mut len, mut op, mut amount) = (None, None, None, None, None);
        for a in attrs {
            let a = a?;
            match a.ty {
                1 => sreg = Some(a.u32_be("NFTA_BITWISE_SREG")?),
                2 => dreg = Some(a.u32_be("NFTA_BITWISE_DREG")?),
                3 => len = Some(a.u32_be("NFTA_BITWISE_LEN")?),
                6 => op = Some(a.u32_be("NFTA_BITWISE_OP")?),
                _ => amount = Some(value(&a, "NFTA_BITWISE_DATA")?),
            }
        }
        let left = match op {
            Some(1) => true,
            Some(2) => false,
            _ => return Ok(None),
        };
        Ok(Some(Shift {
            sreg: sreg.ok_or_else(|| WireError::missing("NFTA_BITWISE_SREG"))?,
            dreg: dreg.ok_or_else(|| WireError::missing("NFTA_BITWISE_DREG"))?,
            len: len.ok_or_else(|| WireError::missing("NFTA_BITWISE_LEN"))?,
            left,
            amount: amount.ok_or_else(|| WireError::missing("NFTA_BITWISE_DATA"))?,
        }))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("bitwise", |w: &mut AttrWriter<'_>| {
            w.u32_be(1, self.sreg)
                .u32_be(2, self.dreg)
                .u32_be(3, self.len)
                .u32_be(6, if self.left { 1 } else { 2 });
            // NFTA_BITWISE_DATA holds one NFTA_DATA_VALUE; the kernel lists it without
            // NLA_F_NESTED, and so it is written here (the kernel reads both).
            let mut inner = Vec::new();
            let mut overflow = false;
            AttrWriter::new(&mut inner, &mut overflow).bytes(NFTA_DATA_VALUE, &self.amount);
            w.bytes(7, &inner);
        })
    }
}

/// `synproxy mss <mss> wscale <wscale> [timestamp] [sack-perm]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synproxy {
    /// `NFTA_SYNPROXY_MSS`.
    pub mss: Option<u16>,
    /// `NFTA_SYNPROXY_WSCALE`.
    pub wscale: Option<u8>,
    /// `NFTA_SYNPROXY_FLAGS` (`NF_SYNPROXY_OPT_*`: mss 1, wscale 2, sack-perm 4, timestamp 8).
    pub flags: u32,
}

impl Synproxy {
    /// The synproxy an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let Some(attrs) = attrs_of(o, "synproxy", &[1, 2, 3])? else {
            return Ok(None);
        };
        let mut p = Synproxy {
            mss: None,
            wscale: None,
            flags: 0,
        };
        for a in attrs {
            let a = a?;
            match a.ty {
                1 => {
                    let b = <[u8; 2]>::try_from(a.payload).map_err(|_| {
                        WireError::bad_value("not 2 bytes").within("NFTA_SYNPROXY_MSS")
                    })?;
                    p.mss = Some(u16::from_be_bytes(b));
                }
                2 => p.wscale = Some(a.u8("NFTA_SYNPROXY_WSCALE")?),
                _ => p.flags = a.u32_be("NFTA_SYNPROXY_FLAGS")?,
            }
        }
        Ok(Some(p))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("synproxy", |w| {
            if let Some(m) = self.mss {
                w.bytes(1, &m.to_be_bytes());
            }
            if let Some(s) = self.wscale {
                w.u8(2, s);
            }
            w.u32_be(3, self.flags);
        })
    }
}

/// `xfrm load <dir> <spnum> <key> => reg <dreg>` (`ipsec in reqid`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Xfrm {
    /// `NFTA_XFRM_DREG`.
    pub dreg: u32,
    /// `NFTA_XFRM_KEY` (`enum nft_xfrm_keys`: daddr ip 1, daddr ip6 2, saddr ip 3, saddr ip6
    /// 4, reqid 5, spi 6).
    pub key: u32,
    /// `NFTA_XFRM_DIR`: 0 in, 1 out.
    pub dir: u8,
    /// `NFTA_XFRM_SPNUM`.
    pub spnum: u32,
}

impl Xfrm {
    /// The xfrm load an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let Some(attrs) = attrs_of(o, "xfrm", &[1, 2, 3, 4])? else {
            return Ok(None);
        };
        let mut x = Xfrm {
            dreg: 0,
            key: 0,
            dir: 0,
            spnum: 0,
        };
        for a in attrs {
            let a = a?;
            match a.ty {
                1 => x.dreg = a.u32_be("NFTA_XFRM_DREG")?,
                2 => x.key = a.u32_be("NFTA_XFRM_KEY")?,
                3 => x.dir = a.u8("NFTA_XFRM_DIR")?,
                _ => x.spnum = a.u32_be("NFTA_XFRM_SPNUM")?,
            }
        }
        Ok(Some(x))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("xfrm", |w| {
            w.u32_be(1, self.dreg)
                .u32_be(2, self.key)
                .u8(3, self.dir)
                .u32_be(4, self.spnum);
        })
    }
}

/// `osf dreg <dreg> [ttl <ttl>] [flags]`: the passive OS fingerprint's name or version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Osf {
    /// `NFTA_OSF_DREG`.
    pub dreg: u32,
    /// `NFTA_OSF_TTL`: 0 true, 1 loose, 2 skip.
    pub ttl: Option<u8>,
    /// `NFTA_OSF_FLAGS`: 1 (`NFT_OSF_F_VERSION`) for the version.
    pub flags: Option<u32>,
}

impl Osf {
    /// The osf load an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        let Some(attrs) = attrs_of(o, "osf", &[1, 2, 3])? else {
            return Ok(None);
        };
        let mut x = Osf {
            dreg: 0,
            ttl: None,
            flags: None,
        };
        for a in attrs {
            let a = a?;
            match a.ty {
                1 => x.dreg = a.u32_be("NFTA_OSF_DREG")?,
                2 => x.ttl = Some(a.u8("NFTA_OSF_TTL")?),
                _ => x.flags = Some(a.u32_be("NFTA_OSF_FLAGS")?),
            }
        }
        Ok(Some(x))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("osf", |w| {
            if let Some(t) = self.ttl {
                w.u8(2, t);
            }
            if let Some(f) = self.flags {
                w.u32_be(3, f);
            }
            w.u32_be(1, self.dreg);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_round_trips_and_refuses_other_kinds() {
        let c = Connlimit {
            count: 20,
            flags: 1,
        };
        assert_eq!(Connlimit::from_other(&c.to_other()).unwrap(), Some(c));
        let h = Hash {
            sreg: Some(2),
            dreg: 1,
            len: Some(8),
            modulus: 8,
            seed: Some(0xdead),
            offset: None,
            kind: Hash::JENKINS,
        };
        assert_eq!(Hash::from_other(&h.to_other()).unwrap(), Some(h));
        let r = KeyLoad {
            kind: "rt",
            dreg: 1,
            key: 1,
            level: None,
        };
        assert_eq!(KeyLoad::from_other(&r.to_other()).unwrap(), Some(r));
        // `socket load transparent => reg 1` as the kernel lists it: key 0 first, then dreg.
        let o = OtherExpr {
            name: "socket".into(),
            data: vec![8, 0, 1, 0, 0, 0, 0, 0, 8, 0, 2, 0, 0, 0, 0, 1],
        };
        let so = KeyLoad::from_other(&o).unwrap().unwrap();
        assert_eq!((so.key, so.dreg), (0, 1));
        assert_eq!(so.to_other(), o);
        let t = Tproxy {
            family: 2,
            reg_addr: Some(1),
            reg_port: Some(2),
        };
        assert_eq!(Tproxy::from_other(&t.to_other()).unwrap(), Some(t.clone()));
        let s = Shift {
            sreg: 1,
            dreg: 1,
            len: 4,
            left: true,
            amount: 1u32.to_ne_bytes().to_vec(),
        };
        assert_eq!(Shift::from_other(&s.to_other()).unwrap(), Some(s));
        let p = Synproxy {
            mss: Some(1460),
            wscale: Some(7),
            flags: 0xf,
        };
        assert_eq!(Synproxy::from_other(&p.to_other()).unwrap(), Some(p));
        let x = Xfrm {
            dreg: 1,
            key: 5,
            dir: 0,
            spnum: 0,
        };
        assert_eq!(Xfrm::from_other(&x.to_other()).unwrap(), Some(x));
        let f = Osf {
            dreg: 1,
            ttl: Some(1),
            flags: None,
        };
        assert_eq!(Osf::from_other(&f.to_other()).unwrap(), Some(f));
        // Another kind is not read as this one.
        assert_eq!(Connlimit::from_other(&t.to_other()).unwrap(), None);
    }
}
