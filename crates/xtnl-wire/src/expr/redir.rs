use std::fmt;

use super::all_known;
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod attr {
    pub const REG_PROTO_MIN: u16 = 1;
    pub const REG_PROTO_MAX: u16 = 2;
    pub const FLAGS: u16 = 3;
}

/// The native `redir` expression (redirect to the local machine), ports from registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redir {
    /// `NFTA_REDIR_REG_PROTO_MIN`: the register holding the lowest port.
    pub reg_proto_min: Option<u32>,
    /// `NFTA_REDIR_REG_PROTO_MAX`: the register holding the highest port.
    pub reg_proto_max: Option<u32>,
    /// `NFTA_REDIR_FLAGS` (`NF_NAT_RANGE_*`).
    pub flags: Option<u32>,
}

impl Redir {
    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(
            data,
            &[attr::REG_PROTO_MIN, attr::REG_PROTO_MAX, attr::FLAGS],
        )? {
            return Ok(None);
        }
        let mut r = Redir {
            reg_proto_min: None,
            reg_proto_max: None,
            flags: None,
        };
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                attr::REG_PROTO_MIN => {
                    r.reg_proto_min = Some(a.u32_be("NFTA_REDIR_REG_PROTO_MIN")?)
                }
                attr::REG_PROTO_MAX => {
                    r.reg_proto_max = Some(a.u32_be("NFTA_REDIR_REG_PROTO_MAX")?)
                }
                attr::FLAGS => r.flags = Some(a.u32_be("NFTA_REDIR_FLAGS")?),
                _ => {}
            }
        }
        Ok(Some(r))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        for (ty, v) in [
            (attr::REG_PROTO_MIN, self.reg_proto_min),
            (attr::REG_PROTO_MAX, self.reg_proto_max),
            (attr::FLAGS, self.flags),
        ] {
            if let Some(v) = v {
                w.u32_be(ty, v);
            }
        }
    }
}

impl fmt::Display for Redir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "redir")?;
        if let Some(r) = self.reg_proto_min {
            write!(f, " proto_min reg {r}")?;
        }
        if let Some(r) = self.reg_proto_max {
            write!(f, " proto_max reg {r}")?;
        }
        if let Some(fl) = self.flags {
            write!(f, " flags 0x{fl:x}")?;
        }
        Ok(())
    }
}
