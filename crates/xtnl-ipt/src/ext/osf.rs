//! `-m osf [!] --genre G [--ttl 0-2] [--log 0-2]` (revision 0, IPv4; the kernel wants
//! `-p tcp` and an input hook): the payload of [`crate::xt::osf`], through nft_compat in
//! iptables-nft. Refused on purpose: a genre of more than 31 bytes (iptables cuts it) or
//! one `-S` could not print as one word.

use super::*;
use crate::xt::layout::Raw;
use crate::xt::osf::{Osf as Info, XT_OSF_INVERT, XT_OSF_LOG, XT_OSF_TTL};

pub(crate) struct Osf;

fn one_word(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_graphic() && !matches!(c, '"' | '\'' | '\\'))
}

impl Ext for Osf {
    fn name(&self) -> &'static str {
        "osf"
    }
    fn fams(&self) -> Fams {
        Fams::V4
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("genre", Arg::One, true),
            opt("ttl", Arg::One, false),
            opt("log", Arg::One, false)
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "osf")?;
        let mut o = Info::default();
        for g in given {
            match g.opt {
                "genre" => {
                    if !one_word(g.arg()) {
                        return Err(bad(format!(
                            "osf: --genre \"{}\" is not one word iptables could print back",
                            g.arg()
                        )));
                    }
                    o.genre = Raw::from_str(g.arg(), "osf --genre").map_err(wire)?;
                    o.len = g.arg().len() as u32;
                    if g.neg {
                        o.flags |= XT_OSF_INVERT;
                    }
                }
                "ttl" => {
                    o.ttl = num(g.arg(), 2, "osf --ttl")? as u32;
                    o.flags |= XT_OSF_TTL;
                }
                _ => {
                    o.loglevel = num(g.arg(), 2, "osf --log")? as u32;
                    o.flags |= XT_OSF_LOG;
                }
            }
        }
        if get(given, "genre").is_none() {
            return Err(bad("osf: option \"--genre\" must be specified"));
        }
        Ok(o.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let o = Info::decode(info).ok()?;
        let genre = o.genre.text();
        let ok = one_word(&genre)
            && o.len as usize == genre.len()
            && o.flags & !(XT_OSF_TTL | XT_OSF_LOG | XT_OSF_INVERT) == 0
            && o.ttl <= 2
            && o.loglevel <= 2
            && (o.flags & XT_OSF_TTL != 0 || o.ttl == 0)
            && (o.flags & XT_OSF_LOG != 0 || o.loglevel == 0);
        if !ok {
            return None;
        }
        bang(out, o.flags & XT_OSF_INVERT != 0);
        let _ = write!(out, " --genre {genre}");
        if o.flags & XT_OSF_TTL != 0 {
            let _ = write!(out, " --ttl {}", o.ttl);
        }
        if o.flags & XT_OSF_LOG != 0 {
            let _ = write!(out, " --log {}", o.loglevel);
        }
        Some(())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        self.save(info, family, &mut String::new())?;
        let o = Info::decode(info).ok()?;
        let inv = if o.flags & XT_OSF_INVERT != 0 {
            "! "
        } else {
            ""
        };
        let _ = write!(out, " OS fingerprint match {inv}{}", o.genre.text());
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut o = Info::decode(info).ok()?;
        o.genre = o.genre.canonical_text();
        Some(o.encode())
    }
}
