//! `-m iprange` rev 1 and `-m owner` rev 1.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::*;
use crate::xt::iprange::{IPRANGE_DST, IPRANGE_DST_INV, IPRANGE_SRC, IPRANGE_SRC_INV, IprangeV1};
use crate::xt::layout::Raw;
use crate::xt::owner::{OWNER_GID, OWNER_SOCKET, OWNER_SUPPL_GROUPS, OWNER_UID, Owner as OInfo};

pub(crate) struct Iprange;
pub(crate) struct Owner;

fn addr(s: &str, family: Family) -> Result<Raw<16>> {
    let a: IpAddr = s
        .parse()
        .map_err(|_| bad(format!("iprange: could not parse \"{s}\" as an address")))?;
    let mut r = [0u8; 16];
    match (a, family) {
        (IpAddr::V4(x), Family::Ipv4) => r[..4].copy_from_slice(&x.octets()),
        (IpAddr::V6(x), Family::Ipv6) => r = x.octets(),
        _ => return Err(bad(format!("iprange: \"{s}\" is not of this family"))),
    }
    Ok(Raw(r))
}

fn show(a: &Raw<16>, family: Family) -> String {
    if family == Family::Ipv6 {
        Ipv6Addr::from(a.0).to_string()
    } else {
        Ipv4Addr::new(a.0[0], a.0[1], a.0[2], a.0[3]).to_string()
    }
}

impl Ext for Iprange {
    fn name(&self) -> &'static str {
        "iprange"
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("src-range", Arg::One, true),
            opt("dst-range", Arg::One, true)
        ]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "iprange")?;
        if given.is_empty() {
            return Err(bad(
                "iprange match: You must specify `--src-range' or `--dst-range'",
            ));
        }
        let mut i = IprangeV1::default();
        for g in given {
            let (a, b) = match g.arg().split_once('-') {
                Some((a, b)) => (addr(a, ctx.family)?, addr(b, ctx.family)?),
                None => {
                    let a = addr(g.arg(), ctx.family)?;
                    (a, a)
                }
            };
            if g.opt == "src-range" {
                (i.src_min, i.src_max) = (a, b);
                i.flags |= IPRANGE_SRC | if g.neg { IPRANGE_SRC_INV } else { 0 };
            } else {
                (i.dst_min, i.dst_max) = (a, b);
                i.flags |= IPRANGE_DST | if g.neg { IPRANGE_DST_INV } else { 0 };
            }
        }
        Ok(i.encode())
    }
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()> {
        let i = IprangeV1::decode(info).ok()?;
        if i.flags & !0x33 != 0 {
            return None;
        }
        if i.flags & IPRANGE_SRC != 0 {
            bang(out, i.flags & IPRANGE_SRC_INV != 0);
            let _ = write!(
                out,
                " --src-range {}-{}",
                show(&i.src_min, family),
                show(&i.src_max, family)
            );
        }
        if i.flags & IPRANGE_DST != 0 {
            bang(out, i.flags & IPRANGE_DST_INV != 0);
            let _ = write!(
                out,
                " --dst-range {}-{}",
                show(&i.dst_min, family),
                show(&i.dst_max, family)
            );
        }
        Some(())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        let i = IprangeV1::decode(info).ok()?;
        for (on, inv, word, lo, hi) in [
            (
                IPRANGE_SRC,
                IPRANGE_SRC_INV,
                "source",
                &i.src_min,
                &i.src_max,
            ),
            (
                IPRANGE_DST,
                IPRANGE_DST_INV,
                "destination",
                &i.dst_min,
                &i.dst_max,
            ),
        ] {
            if i.flags & on != 0 {
                let _ = write!(out, " {word} IP range");
                bang(out, i.flags & inv != 0);
                let _ = write!(out, " {}-{}", show(lo, family), show(hi, family));
            }
        }
        Some(())
    }
    canonical_via!(IprangeV1);
}

/// The first name /etc/passwd or /etc/group gives `id` (what `-L` prints without `-n`,
/// as iptables' getpwuid/getgrgid do on a host whose users are in those files).
fn name_of(db: &str, id: u32) -> Option<String> {
    let text = std::fs::read_to_string(db).ok()?;
    text.lines().find_map(|l| {
        let mut f = l.split(':');
        let name = f.next()?;
        (f.nth(1)?.parse::<u32>().ok()? == id && !name.is_empty()).then(|| name.to_string())
    })
}

/// A user or group by name (from /etc/passwd or /etc/group), number, or `a-b` range.
fn id_range(s: &str, db: &str, opt: &str) -> Result<(u32, u32)> {
    if let Ok(text) = std::fs::read_to_string(db) {
        for l in text.lines() {
            let mut f = l.split(':');
            if f.next() == Some(s)
                && let Some(id) = f.nth(1).and_then(|x| x.parse::<u32>().ok())
            {
                return Ok((id, id));
            }
        }
    }
    let one = |t: &str| -> Result<u32> {
        t.parse::<u32>()
            .ok()
            .filter(|&n| n < u32::MAX)
            .ok_or_else(|| bad(format!("owner: Bad value for \"{opt}\" option: \"{s}\"")))
    };
    match s.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (one(a)?, one(b)?);
            if a > b {
                return Err(bad(format!(
                    "owner: Bad value for \"{opt}\" option: \"{s}\""
                )));
            }
            Ok((a, b))
        }
        None => {
            let a = one(s)?;
            Ok((a, a))
        }
    }
}

impl Ext for Owner {
    fn name(&self) -> &'static str {
        "owner"
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("uid-owner", Arg::One, true),
            opt("gid-owner", Arg::One, true),
            opt("socket-exists", Arg::None, true),
            opt("suppl-groups", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "owner")?;
        need_some(given, "owner")?;
        let mut o = OInfo::default();
        for g in given {
            let bit = match g.opt {
                "uid-owner" => {
                    (o.uid_min, o.uid_max) = id_range(g.arg(), "/etc/passwd", "--uid-owner")?;
                    OWNER_UID
                }
                "gid-owner" => {
                    (o.gid_min, o.gid_max) = id_range(g.arg(), "/etc/group", "--gid-owner")?;
                    OWNER_GID
                }
                "socket-exists" => OWNER_SOCKET,
                _ => {
                    if o.match_ & OWNER_GID == 0 {
                        return Err(bad(
                            "owner: Bad value for \"--suppl-groups\" option: you need to use --gid-owner first",
                        ));
                    }
                    OWNER_SUPPL_GROUPS
                }
            };
            o.match_ |= bit;
            if g.neg {
                o.invert |= bit;
            }
        }
        Ok(o.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let o = OInfo::decode(info).ok()?;
        if o.match_ & !0xf != 0 || o.invert & !0xf != 0 {
            return None;
        }
        let item = |out: &mut String, label: &str, bit: u8, range: Option<(u32, u32)>| {
            if o.match_ & bit == 0 {
                return;
            }
            bang(out, o.invert & bit != 0);
            let _ = write!(out, " {label}");
            match range {
                Some((a, b)) if a != b => {
                    let _ = write!(out, " {a}-{b}");
                }
                Some((a, _)) => {
                    let _ = write!(out, " {a}");
                }
                None => {}
            }
        };
        item(out, "--socket-exists", OWNER_SOCKET, None);
        item(out, "--uid-owner", OWNER_UID, Some((o.uid_min, o.uid_max)));
        item(out, "--gid-owner", OWNER_GID, Some((o.gid_min, o.gid_max)));
        item(out, "--suppl-groups", OWNER_SUPPL_GROUPS, None);
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        let o = OInfo::decode(info).ok()?;
        let item = |out: &mut String, label: &str, bit: u8, range: Option<((u32, u32), &str)>| {
            if o.match_ & bit == 0 {
                return;
            }
            bang(out, o.invert & bit != 0);
            let _ = write!(out, " {label}");
            match range {
                Some(((a, b), _)) if a != b => {
                    let _ = write!(out, " {a}-{b}");
                }
                Some(((a, _), db)) => match name_of(db, a).filter(|_| !numeric) {
                    Some(n) => {
                        let _ = write!(out, " {n}");
                    }
                    None => {
                        let _ = write!(out, " {a}");
                    }
                },
                None => {}
            }
        };
        item(out, "owner socket exists", OWNER_SOCKET, None);
        let uid = ((o.uid_min, o.uid_max), "/etc/passwd");
        item(out, "owner UID match", OWNER_UID, Some(uid));
        let gid = ((o.gid_min, o.gid_max), "/etc/group");
        item(out, "owner GID match", OWNER_GID, Some(gid));
        item(out, "incl. suppl. groups", OWNER_SUPPL_GROUPS, None);
        Some(())
    }
    canonical_via!(OInfo);
}
