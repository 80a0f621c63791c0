//! `-m pkttype` rev 0.

use super::*;
use crate::xt::pkttype::Pkttype as Info;

pub(crate) struct Pkttype;

/// iptables' names (`PACKET_*`), then its aliases.
const TYPES: [(&str, i32); 7] = [
    ("unicast", 0),
    ("broadcast", 1),
    ("multicast", 2),
    ("otherhost", 3),
    ("bcast", 1),
    ("mcast", 2),
    ("host", 0),
];

impl Ext for Pkttype {
    fn name(&self) -> &'static str {
        "pkttype"
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("pkt-type", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "pkttype")?;
        let g = given
            .first()
            .ok_or_else(|| bad("pkttype: option \"--pkt-type\" must be specified"))?;
        let t = TYPES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(g.arg()))
            .map(|(_, t)| *t)
            .ok_or_else(|| bad(format!("Bad packet type '{}'", g.arg())))?;
        Ok(Info {
            pkttype: t,
            invert: i32::from(g.neg),
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        if !(0..=1).contains(&i.invert) {
            return None;
        }
        bang(out, i.invert != 0);
        out.push_str(" --pkt-type ");
        match TYPES.iter().find(|(_, t)| *t == i.pkttype) {
            Some((n, _)) => out.push_str(n),
            None => {
                let _ = write!(out, "{}", i.pkttype);
            }
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        let _ = write!(out, " PKTTYPE {}= ", if i.invert != 0 { "!" } else { "" });
        match TYPES.iter().find(|(_, t)| *t == i.pkttype) {
            Some((n, _)) => out.push_str(n),
            None => {
                let _ = write!(out, "{}", i.pkttype);
            }
        }
        Some(())
    }
    canonical_via!(Info);
}
