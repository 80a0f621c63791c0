//! `-m string` (revision 1): `--string TEXT` or `--hex-string TEXT|hex|TEXT` (either
//! inverted), `--algo bm|kmp|fsm`, `--from`, `--to`, `--icase`. iptables-nft writes it
//! through nft_compat. `-S` quotes the pattern as iptables does, in hex when it holds a
//! byte that is not printable ASCII or ends in a backslash.

use super::*;
use crate::xt::layout::Raw;
use crate::xt::string::StringInfo as Info;

pub(crate) struct StringMatch;

/// The pattern of `--hex-string`, read as iptables' `parse_hex_string` reads it.
fn hex_string(s: &str) -> Result<Vec<u8>> {
    let b = s.as_bytes();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    if b.is_empty() {
        return Err(bad("STRING must contain at least one char"));
    }
    let (mut i, mut hex, mut literal) = (0usize, false, false);
    let mut out = Vec::new();
    while i < b.len() {
        if out.len() >= 128 {
            return Err(bad(format!("STRING too long \"{s}\"")));
        }
        if b[i] == b'\\' && !hex {
            literal = true;
        } else if b[i] == b'\\' {
            return Err(bad("Cannot include literals in hex data"));
        } else if b[i] == b'|' {
            if hex {
                hex = false;
            } else {
                hex = true;
                while at(i + 1) == b' ' {
                    i += 1;
                }
            }
            if i + 1 >= b.len() {
                break;
            }
            i += 1;
        }
        if literal {
            if i + 1 >= b.len() {
                return Err(bad("Bad literal placement at end of string"));
            }
            out.push(b[i + 1]);
            i += 2;
            literal = false;
        } else if hex {
            if i + 1 >= b.len() {
                return Err(bad("Odd number of hex digits"));
            }
            if i + 2 >= b.len() {
                return Err(bad("Invalid hex block"));
            }
            for c in [b[i], b[i + 1]] {
                if !c.is_ascii_hexdigit() {
                    return Err(bad(format!("Invalid hex char '{}'", char::from(c))));
                }
            }
            let v = std::str::from_utf8(&b[i..i + 2])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| bad("Invalid hex char"))?;
            out.push(v);
            i += if b[i + 2] == b' ' { 3 } else { 2 };
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

impl Ext for StringMatch {
    fn name(&self) -> &'static str {
        "string"
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("from", Arg::One, false),
            opt("to", Arg::One, false),
            opt("algo", Arg::One, false),
            opt("string", Arg::One, true),
            opt("hex-string", Arg::One, true),
            opt("icase", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "string")?;
        let mut s = Info {
            to_offset: u16::MAX,
            ..Info::default()
        };
        let mut pat: Option<Vec<u8>> = None;
        for g in given {
            match g.opt {
                "from" => s.from_offset = num(g.arg(), 65535, "string --from")? as u16,
                "to" => s.to_offset = num(g.arg(), 65535, "string --to")? as u16,
                "algo" => {
                    if !["bm", "kmp", "fsm"].contains(&g.arg()) {
                        return Err(bad(format!(
                            "string: unknown --algo \"{}\" (the kernel has bm, kmp, fsm)",
                            g.arg()
                        )));
                    }
                    s.algo = Raw::from_str(g.arg(), "string --algo").map_err(wire)?;
                }
                "icase" => s.flags |= Info::IGNORECASE,
                _ => {
                    let p = if g.opt == "string" {
                        if g.arg().len() > 128 {
                            return Err(bad(format!("STRING too long \"{}\"", g.arg())));
                        }
                        g.arg().as_bytes().to_vec()
                    } else {
                        hex_string(g.arg())?
                    };
                    if p.is_empty() {
                        return Err(bad("string: the pattern is empty"));
                    }
                    pat = Some(p);
                    if g.neg {
                        s.flags |= Info::INVERT;
                    }
                }
            }
        }
        exclusive("string", given, &["string", "hex-string"])?;
        let p =
            pat.ok_or_else(|| bad("STRING match: You must specify `--string' or `--hex-string'"))?;
        if !given.iter().any(|g| g.opt == "algo") {
            return Err(bad("string: option \"--algo\" must be specified"));
        }
        if s.from_offset > s.to_offset {
            return Err(bad("string: --from is beyond --to"));
        }
        s.pattern.0[..p.len()].copy_from_slice(&p);
        s.patlen = p.len() as u8;
        Ok(s.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let s = Info::decode(info).ok()?;
        let p = s.pat();
        if s.flags & !3 != 0 || p.is_empty() || s.patlen > 128 {
            return None;
        }
        bang(out, s.flags & Info::INVERT != 0);
        out.push_str(if is_hex(p) {
            " --hex-string"
        } else {
            " --string"
        });
        pattern(out, p);
        let _ = write!(out, " --algo {}", s.algo.text());
        if s.from_offset != 0 {
            let _ = write!(out, " --from {}", s.from_offset);
        }
        if s.to_offset != u16::MAX {
            let _ = write!(out, " --to {}", s.to_offset);
        }
        if s.flags & Info::IGNORECASE != 0 {
            out.push_str(" --icase");
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let s = Info::decode(info).ok()?;
        let inv = if s.flags & Info::INVERT != 0 { "!" } else { "" };
        let _ = write!(out, " STRING match {inv}");
        pattern(out, s.pat());
        let _ = write!(out, " ALGO name {}", s.algo.text());
        if s.from_offset != 0 {
            let _ = write!(out, " FROM {}", s.from_offset);
        }
        if s.to_offset != u16::MAX {
            let _ = write!(out, " TO {}", s.to_offset);
        }
        if s.flags & Info::IGNORECASE != 0 {
            out.push_str(" ICASE");
        }
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut s = Info::decode(info).ok()?;
        s.algo = s.algo.canonical_text();
        let n = usize::from(s.patlen).min(128);
        s.pattern.0[n..].fill(0);
        Some(s.encode())
    }
}

/// Whether iptables prints the pattern as `|hex|`.
fn is_hex(p: &[u8]) -> bool {
    p.iter().any(|c| !(0x20..0x7f).contains(c)) || p.last() == Some(&b'\\')
}

/// ` "pattern"` with `"` and `\` escaped, or ` "|00ff|"` (iptables' print_string and
/// print_hex_string).
fn pattern(out: &mut String, p: &[u8]) {
    if is_hex(p) {
        out.push_str(" \"|");
        for c in p {
            let _ = write!(out, "{c:02x}");
        }
        out.push_str("|\"");
    } else {
        out.push_str(" \"");
        for &c in p {
            if c == b'"' || c == b'\\' {
                out.push('\\');
            }
            out.push(char::from(c));
        }
        out.push('"');
    }
}
