//! `-m ipcomp [!] --ipcompspi SPI[:SPI] [--compres]` (revision 0, IPv4 and IPv6; the kernel
//! wants `-p ipcomp`): the payload of [`crate::xt::ipcomp`], through nft_compat in
//! iptables-nft. As in iptables, a rule without `--ipcompspi` matches SPI 0 only (libxt_ipcomp
//! sets no default) and `-S` says so.

use super::*;
use crate::xt::ipcomp::{Ipcomp as Info, XT_IPCOMP_INV_SPI};

pub(crate) struct Ipcomp;

impl Ext for Ipcomp {
    fn name(&self) -> &'static str {
        "ipcomp"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("ipcompspi", Arg::One, true),
            opt("compres", Arg::None, false)
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "ipcomp")?;
        let mut c = Info::default();
        for g in given {
            if g.opt == "compres" {
                c.hdrres = 1;
                continue;
            }
            let (a, b) = super::conntrack::range(g.arg(), u64::from(u32::MAX), "ipcomp")?;
            (c.spi_min, c.spi_max) = (a as u32, b as u32);
            if g.neg {
                if (a, b) == (0, u64::from(u32::MAX)) {
                    return Err(bad(
                        "ipcomp: ! --ipcompspi 0:4294967295 can never match, and iptables \
                         prints it as no option at all",
                    ));
                }
                c.invflags |= XT_IPCOMP_INV_SPI;
            }
        }
        Ok(c.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let c = Info::decode(info).ok()?;
        if c.invflags & !XT_IPCOMP_INV_SPI != 0 || c.hdrres > 1 {
            return None;
        }
        if !(c.spi_min == 0 && c.spi_max == u32::MAX) {
            bang(out, c.invflags != 0);
            if c.spi_min != c.spi_max {
                let _ = write!(out, " --ipcompspi {}:{}", c.spi_min, c.spi_max);
            } else {
                let _ = write!(out, " --ipcompspi {}", c.spi_min);
            }
        } else if c.invflags != 0 {
            // `! --ipcompspi 0:4294967295` (never matches) prints as nothing in iptables.
            return None;
        }
        if c.hdrres != 0 {
            out.push_str(" --compres");
        }
        Some(())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        self.save(info, family, &mut String::new())?;
        let c = Info::decode(info).ok()?;
        out.push_str(" comp ");
        let inv = c.invflags != 0;
        if c.spi_min != 0 || c.spi_max != u32::MAX || inv {
            let inv = if inv { "!" } else { "" };
            if c.spi_min == c.spi_max {
                let _ = write!(out, "spi:{inv}{}", c.spi_min);
            } else {
                let _ = write!(out, "spis:{inv}{}:{}", c.spi_min, c.spi_max);
            }
        }
        if c.hdrres != 0 {
            out.push_str(" reserved");
        }
        Some(())
    }
    canonical_via!(Info);
}
