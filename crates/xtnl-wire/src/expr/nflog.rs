//! `log` in every form nft writes (group, snaplen, queue threshold as well as prefix, level
//! and flags). [`Log`](super::Log) types the kernel-log form that xtnl's iptables front uses;
//! the rest stays raw in [`Expr::Other`](super::Expr::Other) and is read here.

use std::fmt;

use super::{Expr, all_known, other_expr};
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod attr {
    pub const GROUP: u16 = 1;
    pub const PREFIX: u16 = 2;
    pub const SNAPLEN: u16 = 3;
    pub const QTHRESHOLD: u16 = 4;
    pub const LEVEL: u16 = 5;
    pub const FLAGS: u16 = 6;
}

/// Every attribute of a `log` expression.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogAll {
    /// `NFTA_LOG_GROUP`: the nflog group.
    pub group: Option<u16>,
    /// `NFTA_LOG_PREFIX`.
    pub prefix: Option<String>,
    /// `NFTA_LOG_SNAPLEN`.
    pub snaplen: Option<u32>,
    /// `NFTA_LOG_QTHRESHOLD`.
    pub qthreshold: Option<u16>,
    /// `NFTA_LOG_LEVEL`.
    pub level: Option<u32>,
    /// `NFTA_LOG_FLAGS`.
    pub flags: Option<u32>,
}

impl LogAll {
    /// Decodes the expression's attributes; `None` for a form this type does not model.
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        use attr::*;
        if !all_known(data, &[GROUP, PREFIX, SNAPLEN, QTHRESHOLD, LEVEL, FLAGS])? {
            return Ok(None);
        }
        let mut l = LogAll::default();
        let u16_be = |p: &[u8], name: &'static str| -> Result<u16, WireError> {
            <[u8; 2]>::try_from(p)
                .map(u16::from_be_bytes)
                .map_err(|_| WireError::bad_value("not 2 bytes").within(name))
        };
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                GROUP => l.group = Some(u16_be(a.payload, "NFTA_LOG_GROUP")?),
                PREFIX => l.prefix = Some(a.string("NFTA_LOG_PREFIX")?),
                SNAPLEN => l.snaplen = Some(a.u32_be("NFTA_LOG_SNAPLEN")?),
                QTHRESHOLD => l.qthreshold = Some(u16_be(a.payload, "NFTA_LOG_QTHRESHOLD")?),
                LEVEL => l.level = Some(a.u32_be("NFTA_LOG_LEVEL")?),
                FLAGS => l.flags = Some(a.u32_be("NFTA_LOG_FLAGS")?),
                _ => {}
            }
        }
        Ok(Some(l))
    }

    /// Encodes the expression's attributes in nft's order.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        if let Some(p) = &self.prefix {
            w.strz(attr::PREFIX, p);
        }
        if let Some(g) = self.group {
            w.bytes(attr::GROUP, &g.to_be_bytes());
        }
        if let Some(s) = self.snaplen {
            w.u32_be(attr::SNAPLEN, s);
        }
        if let Some(q) = self.qthreshold {
            w.bytes(attr::QTHRESHOLD, &q.to_be_bytes());
        }
        if let Some(l) = self.level {
            w.u32_be(attr::LEVEL, l);
        }
        if let Some(f) = self.flags {
            w.u32_be(attr::FLAGS, f);
        }
    }

    /// The log of an expression, typed ([`Expr::Log`]) or raw; `None` for another kind.
    pub fn from_expr(e: &Expr) -> Result<Option<Self>, WireError> {
        match e {
            Expr::Log(l) => Ok(Some(LogAll {
                prefix: l.prefix.clone(),
                level: l.level,
                flags: l.flags,
                ..Default::default()
            })),
            Expr::Other(o) if o.name == "log" => Self::parse(&o.data),
            _ => Ok(None),
        }
    }

    /// The expression as [`Expr::parse`] would give it back: typed when it has no group,
    /// snaplen or queue threshold, raw otherwise.
    pub fn to_expr(&self) -> Expr {
        if self.group.is_none() && self.snaplen.is_none() && self.qthreshold.is_none() {
            return Expr::Log(super::Log {
                prefix: self.prefix.clone(),
                level: self.level,
                flags: self.flags,
            });
        }
        Expr::Other(other_expr("log", |w| self.emit(w)))
    }
}

impl fmt::Display for LogAll {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "log {self:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captured_group_log_round_trips() {
        // `log group 2 snaplen 64` as the kernel lists it: group, snaplen, qthreshold 0.
        let data: &[u8] = &[
            6, 0, 1, 0, 0, 2, 0, 0, 8, 0, 3, 0, 0, 0, 0, 64, 6, 0, 4, 0, 0, 0, 0, 0,
        ];
        let l = LogAll::parse(data).unwrap().unwrap();
        assert_eq!(
            (l.group, l.snaplen, l.qthreshold),
            (Some(2), Some(64), Some(0))
        );
        let Expr::Other(o) = l.to_expr() else {
            panic!("a group log stays raw")
        };
        assert_eq!(LogAll::parse(&o.data).unwrap().unwrap(), l);
    }
}
