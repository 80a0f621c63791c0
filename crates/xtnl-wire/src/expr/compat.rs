//! nft_compat's `match` and `target`: an x_tables extension run inside nf_tables. The
//! extension's own C struct travels opaque in `INFO`; the xtnl-xt crate (`xtnl::xt`) gives it
//! meaning. Both expressions share one attribute numbering, so one parser serves both.

use std::fmt;

use super::all_known;
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

/// `NFTA_MATCH_*` and `NFTA_TARGET_*` (identical numbering).
mod attr {
    pub const NAME: u16 = 1;
    pub const REV: u16 = 2;
    pub const INFO: u16 = 3;
}

/// An xt match (`-m comment`, `-m multiport`, ...) as nft_compat carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    /// `NFTA_MATCH_NAME`: the x_tables extension's name (`comment`, `multiport`, ...).
    pub name: String,
    /// `NFTA_MATCH_REV`: the revision of the extension's struct.
    pub rev: u32,
    /// The extension's struct, padded to `XT_ALIGN` as the kernel stores it.
    pub info: Vec<u8>,
}

/// An xt target (`-j DNAT`, `-j LOG`, ...) as nft_compat carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `NFTA_TARGET_NAME`: the x_tables target's name (`DNAT`, `LOG`, ...).
    pub name: String,
    /// `NFTA_TARGET_REV`: the revision of the target's struct.
    pub rev: u32,
    /// `NFTA_TARGET_INFO`: the target's struct, padded to `XT_ALIGN`.
    pub info: Vec<u8>,
}

/// The three attributes, or `None` when an attribute we do not know is present (the caller
/// then keeps the expression raw rather than dropping that attribute on re-emit).
fn parse_parts(
    data: &[u8],
    what: &'static str,
) -> Result<Option<(String, u32, Vec<u8>)>, WireError> {
    if !all_known(data, &[attr::NAME, attr::REV, attr::INFO])? {
        return Ok(None);
    }
    let (mut name, mut rev, mut info) = (None, None, None);
    for a in Attrs::new(data) {
        let a = a?;
        match a.ty {
            attr::NAME => name = Some(a.string(what)?),
            attr::REV => rev = Some(a.u32_be(what)?),
            attr::INFO => info = Some(a.payload.to_vec()),
            _ => {}
        }
    }
    // The kernel refuses a compat expression without any of the three, and always dumps all
    // of them; a missing one means the message is not what it claims to be.
    let name = name.ok_or_else(|| WireError::missing("NFTA_MATCH_NAME/NFTA_TARGET_NAME"))?;
    let rev = rev.ok_or_else(|| WireError::missing("NFTA_MATCH_REV/NFTA_TARGET_REV"))?;
    let info = info.ok_or_else(|| WireError::missing("NFTA_MATCH_INFO/NFTA_TARGET_INFO"))?;
    Ok(Some((name, rev, info)))
}

fn emit_parts(w: &mut AttrWriter<'_>, name: &str, rev: u32, info: &[u8]) {
    w.strz(attr::NAME, name)
        .u32_be(attr::REV, rev)
        .bytes(attr::INFO, info);
}

impl Match {
    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        Ok(parse_parts(data, "NFTA_MATCH")?.map(|(name, rev, info)| Match { name, rev, info }))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        emit_parts(w, &self.name, self.rev, &self.info);
    }
}

impl Target {
    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        Ok(parse_parts(data, "NFTA_TARGET")?.map(|(name, rev, info)| Target { name, rev, info }))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        emit_parts(w, &self.name, self.rev, &self.info);
    }
}

/// As `nft --debug=netlink` prints it; the payload is not shown there either.
impl fmt::Display for Match {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "match name {} rev {}", self.name, self.rev)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "target name {} rev {}", self.name, self.rev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Expr;

    fn emit_expr(e: &Expr) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut of = false;
        e.emit(&mut AttrWriter::new(&mut buf, &mut of));
        assert!(!of);
        buf
    }

    /// `-m comment --comment ab` as iptables-nft sends it, byte for byte.
    fn comment_match_bytes() -> Vec<u8> {
        let mut v = Vec::new();
        // NFTA_EXPR_NAME "match\0", padded to 8 + 4 header = 12.
        v.extend_from_slice(&10u16.to_ne_bytes());
        v.extend_from_slice(&1u16.to_ne_bytes());
        v.extend_from_slice(b"match\0\0\0");
        // NFTA_EXPR_DATA, nested: 4 + name 12 + rev 8 + info 260 = 284.
        v.extend_from_slice(&284u16.to_ne_bytes());
        v.extend_from_slice(&(2u16 | 0x8000).to_ne_bytes());
        v.extend_from_slice(&12u16.to_ne_bytes());
        v.extend_from_slice(&1u16.to_ne_bytes());
        v.extend_from_slice(b"comment\0");
        v.extend_from_slice(&8u16.to_ne_bytes());
        v.extend_from_slice(&2u16.to_ne_bytes());
        v.extend_from_slice(&0u32.to_be_bytes());
        v.extend_from_slice(&260u16.to_ne_bytes());
        v.extend_from_slice(&3u16.to_ne_bytes());
        let mut info = [0u8; 256];
        info[..2].copy_from_slice(b"ab");
        v.extend_from_slice(&info);
        v
    }

    #[test]
    fn match_parses_from_and_emits_to_exact_bytes() {
        let bytes = comment_match_bytes();
        let e = Expr::parse(&bytes).unwrap();
        let Expr::Match(m) = &e else {
            panic!("not a match: {e:?}")
        };
        assert_eq!(m.name, "comment");
        assert_eq!(m.rev, 0);
        assert_eq!(m.info.len(), 256);
        assert_eq!(&m.info[..3], b"ab\0");
        assert_eq!(emit_expr(&e), bytes);
        assert_eq!(e.to_string(), "[ match name comment rev 0 ]");
        assert_eq!(e.name(), "match");
    }

    #[test]
    fn target_round_trips_with_big_endian_revision() {
        let e = Expr::Target(Target {
            name: "DNAT".into(),
            rev: 2,
            info: vec![0xaa; 48],
        });
        let bytes = emit_expr(&e);
        // The revision attribute: len 8, type 2, value 2 big endian.
        let rev_at = 4 + 8 + 4 + 4 + 8;
        assert_eq!(&bytes[rev_at..rev_at + 8], &[8, 0, 2, 0, 0, 0, 0, 2]);
        assert_eq!(Expr::parse(&bytes).unwrap(), e);
        assert_eq!(e.to_string(), "[ target name DNAT rev 2 ]");
    }

    #[test]
    fn unknown_attribute_keeps_the_expression_raw() {
        let mut buf = Vec::new();
        let mut of = false;
        let mut w = AttrWriter::new(&mut buf, &mut of);
        w.strz(1, "match");
        w.nested(2, |w| {
            w.strz(attr::NAME, "comment")
                .u32_be(attr::REV, 0)
                .bytes(attr::INFO, &[0; 8])
                .u32_be(9, 1);
        });
        let e = Expr::parse(&buf).unwrap();
        assert!(matches!(&e, Expr::Other(o) if o.name == "match"), "{e:?}");
        assert_eq!(emit_expr(&e), buf);
    }

    #[test]
    fn missing_info_is_an_error_that_names_it() {
        let mut buf = Vec::new();
        let mut of = false;
        let mut w = AttrWriter::new(&mut buf, &mut of);
        w.strz(1, "target");
        w.nested(2, |w| {
            w.strz(attr::NAME, "LOG").u32_be(attr::REV, 0);
        });
        let err = Expr::parse(&buf).unwrap_err();
        assert!(err.to_string().contains("INFO"), "{err}");
        assert!(err.to_string().contains("target"), "{err}");
    }

    #[test]
    fn short_revision_is_an_error() {
        let mut buf = Vec::new();
        let mut of = false;
        let mut w = AttrWriter::new(&mut buf, &mut of);
        w.strz(1, "match");
        w.nested(2, |w| {
            w.strz(attr::NAME, "comment")
                .bytes(attr::REV, &[0, 0])
                .bytes(attr::INFO, &[]);
        });
        assert!(Expr::parse(&buf).is_err());
    }
}
