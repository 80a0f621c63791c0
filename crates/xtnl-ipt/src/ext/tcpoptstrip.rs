//! `-j TCPOPTSTRIP [--strip-options LIST]`: TCP option kinds (numbers 2-255 or iptables'
//! names) to strip. TCP only, table mangle (the kernel says so); `-S` prints numbers.

use super::*;
use crate::xt::tcpoptstrip::Tcpoptstrip as Info;

pub(crate) struct Tcpoptstrip;

const NAMES: [(&str, u8); 6] = [
    ("wscale", 3),
    ("mss", 2),
    ("sack-permitted", 4),
    ("sack", 5),
    ("timestamp", 8),
    ("md5", 19),
];

impl Ext for Tcpoptstrip {
    fn name(&self) -> &'static str {
        "TCPOPTSTRIP"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("strip-options", Arg::One, false)]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "TCPOPTSTRIP")?;
        if ctx.proto() != Some(crate::model::L4Proto::Tcp) {
            return Err(bad(
                "TCPOPTSTRIP: the target works on TCP only; give `-p tcp'",
            ));
        }
        let mut t = Info::default();
        if let Some(g) = given.first() {
            for w in g.arg().split(',') {
                let k = match NAMES.iter().find(|(n, _)| *n == w) {
                    Some((_, k)) => u64::from(*k),
                    None => num(w, 255, "TCPOPTSTRIP --strip-options")
                        .map_err(|_| bad(format!("Bad TCP option value \"{w}\"")))?,
                };
                if k < 2 {
                    return Err(bad("Option value may not be 0 or 1"));
                }
                if t.test(k as u8) {
                    return Err(bad(format!("Option \"{w}\" already specified")));
                }
                t.set(k as u8);
            }
        }
        Ok(t.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let t = Info::decode(info).ok()?;
        let kinds: Vec<String> = (0..=255u8)
            .filter(|&k| t.test(k))
            .map(|k| k.to_string())
            .collect();
        if !kinds.is_empty() {
            let _ = write!(out, " --strip-options {}", kinds.join(","));
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        let t = Info::decode(info).ok()?;
        let kinds: Vec<String> = (0..=255u8)
            .filter(|&k| t.test(k))
            .map(
                |k| match NAMES.iter().find(|(_, n)| *n == k).filter(|_| !numeric) {
                    Some((name, _)) => name.to_string(),
                    None => k.to_string(),
                },
            )
            .collect();
        if !kinds.is_empty() {
            let _ = write!(out, " TCPOPTSTRIP options {}", kinds.join(","));
        }
        Some(())
    }
    canonical_via!(Info);
}
