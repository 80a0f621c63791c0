use std::fmt;

use super::all_known;
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod attr {
    pub const PREFIX: u16 = 2;
    pub const LEVEL: u16 = 5;
    pub const FLAGS: u16 = 6;
}

/// `log [prefix <p>] [level <l>]` to the kernel log (NFLOG groups, snaplen and queue
/// thresholds are not modelled and keep the expression raw).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Log {
    /// `NFTA_LOG_PREFIX`: text before each log line.
    pub prefix: Option<String>,
    /// syslog level; the kernel reports 4 (warning) when none was given.
    pub level: Option<u32>,
    /// `NFTA_LOG_FLAGS` (`NF_LOG_TCPSEQ`, `NF_LOG_IPOPT`, ...).
    pub flags: Option<u32>,
}

impl Log {
    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(data, &[attr::PREFIX, attr::LEVEL, attr::FLAGS])? {
            return Ok(None);
        }
        let mut l = Log {
            prefix: None,
            level: None,
            flags: None,
        };
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                attr::PREFIX => l.prefix = Some(a.string("NFTA_LOG_PREFIX")?),
                attr::LEVEL => l.level = Some(a.u32_be("NFTA_LOG_LEVEL")?),
                attr::FLAGS => l.flags = Some(a.u32_be("NFTA_LOG_FLAGS")?),
                _ => {}
            }
        }
        Ok(Some(l))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        if let Some(p) = &self.prefix {
            w.strz(attr::PREFIX, p);
        }
        if let Some(l) = self.level {
            w.u32_be(attr::LEVEL, l);
        }
        if let Some(f) = self.flags {
            w.u32_be(attr::FLAGS, f);
        }
    }
}

impl fmt::Display for Log {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "log")?;
        if let Some(p) = &self.prefix {
            write!(f, " prefix {p}")?;
        }
        if let Some(l) = self.level {
            write!(f, " level {l}")?;
        }
        if let Some(fl) = self.flags {
            write!(f, " flags {fl}")?;
        }
        Ok(())
    }
}
