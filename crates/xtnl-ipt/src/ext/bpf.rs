//! `-m bpf --bytecode "N,code jt jf k,..."` (revision 1, IPv4 and IPv6): the payload of
//! [`crate::xt::bpf`], through nft_compat in iptables-nft; the program is what
//! `nfbpf_compile RAW 'filter'` prints, read as libxt_bpf reads it and printed back in its
//! words (`-L`: `match bpf ` and the instructions, ended by a NUL byte as iptables ends them).
//!
//! `--object-pinned PATH` is refused: it makes the writer open a pinned BPF object by a path
//! the caller names, as root, which a privileged helper must not do on a caller's word.
//! A pinned rule another tool wrote is printed as iptables prints it.
//!
//! Refused on purpose where iptables takes it and changes it: an instruction field out of
//! its range (iptables keeps the low bits) and words after an instruction's four numbers
//! (iptables ignores them).

use super::*;
use crate::xt::bpf::{BPF_MAX_INSTR, BpfProgram, BpfV1 as Info, SockFilter};

pub(crate) struct Bpf;

/// A decimal field of an instruction, as `%hu`/`%hhu`/`%u` read it but within its range.
fn field(w: &str, max: u64, i: usize) -> Result<u64> {
    w.parse::<u64>()
        .ok()
        .filter(|v| *v <= max && !w.starts_with('+'))
        .ok_or_else(|| bad(format!("bpf: error at instr {i}")))
}

/// `N,code jt jf k,...` as `bpf_parse_string` reads it.
fn parse_program(s: &str) -> Result<Vec<SockFilter>> {
    let (head, rest) = s
        .split_once(',')
        .ok_or_else(|| bad("bpf: error parsing program length"))?;
    let len = head
        .trim_start()
        .parse::<u16>()
        .map_err(|_| bad("bpf: error parsing program length"))?;
    if len == 0 {
        return Err(bad("bpf: illegal zero length program"));
    }
    if usize::from(len) > BPF_MAX_INSTR {
        return Err(bad("bpf: number of instructions exceeds maximum"));
    }
    let mut prog = Vec::new();
    // One trailing comma ends the list, as in iptables.
    let rest = rest.strip_suffix(',').unwrap_or(rest);
    if !rest.is_empty() {
        for (i, tok) in rest.split(',').enumerate() {
            if i >= usize::from(len) {
                return Err(bad(
                    "bpf: real program length exceeds the encoded length parameter",
                ));
            }
            let w: Vec<&str> = tok.split_ascii_whitespace().collect();
            let [code, jt, jf, k] = w[..] else {
                return Err(bad(format!("bpf: error at instr {i}")));
            };
            prog.push(SockFilter {
                code: field(code, u64::from(u16::MAX), i)? as u16,
                jt: field(jt, u64::from(u8::MAX), i)? as u8,
                jf: field(jf, u64::from(u8::MAX), i)? as u8,
                k: field(k, u64::from(u32::MAX), i)? as u32,
            });
        }
    }
    if prog.len() != usize::from(len) {
        return Err(bad(
            "bpf: parsed program length is less than the encoded length parameter",
        ));
    }
    Ok(prog)
}

fn code_text(p: &[SockFilter]) -> String {
    p.iter()
        .map(|f| format!("{} {} {} {}", f.code, f.jt, f.jf, f.k))
        .collect::<Vec<_>>()
        .join(",")
}

/// A pinned path `-S` can print as one word.
fn path_text(path: &[u8]) -> Option<&str> {
    let p = std::str::from_utf8(path).ok()?;
    let plain = !p.is_empty()
        && p.chars()
            .all(|c| c.is_ascii_graphic() && !matches!(c, '"' | '\'' | '\\'));
    plain.then_some(p)
}

impl Ext for Bpf {
    fn name(&self) -> &'static str {
        "bpf"
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("bytecode", Arg::One, false),
            opt("object-pinned", Arg::One, false)
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "bpf")?;
        if get(given, "object-pinned").is_some() {
            return Err(bad(
                "bpf: --object-pinned is not supported by xtnl (it would open a pinned BPF \
                 object by a path the caller names, as root); give the program with --bytecode",
            ));
        }
        let g = get(given, "bytecode")
            .ok_or_else(|| bad("bpf: one of --bytecode or --pinned is required"))?;
        Ok(Info {
            program: BpfProgram::Bytecode(parse_program(g.arg())?),
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        match Info::decode(info).ok()?.program {
            BpfProgram::Bytecode(p) if !p.is_empty() => {
                let _ = write!(out, " --bytecode \"{},{}\"", p.len(), code_text(&p));
            }
            BpfProgram::Pinned { path, .. } => {
                let _ = write!(out, " --object-pinned {}", path_text(&path)?);
            }
            _ => return None,
        }
        Some(())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        self.save(info, family, &mut String::new())?;
        // iptables' `print` starts with no space and ends the program with a NUL byte.
        out.push_str("match bpf ");
        match Info::decode(info).ok()?.program {
            BpfProgram::Bytecode(p) => {
                out.push_str(&code_text(&p));
                out.push('\0');
            }
            BpfProgram::Pinned { path, .. } => {
                let _ = write!(out, "pinned {}", path_text(&path)?);
            }
            BpfProgram::Other(_) => return None,
        }
        Some(())
    }
    canonical_via!(Info);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_read_as_iptables_reads_them() {
        let p = parse_program("4,48 0 0 9,21 0 1 6,6 0 0 1,6 0 0 0").unwrap();
        assert_eq!(code_text(&p), "48 0 0 9,21 0 1 6,6 0 0 1,6 0 0 0");
        assert_eq!(parse_program(" 1, 6  0 0 65535,").unwrap().len(), 1);
        for b in [
            "",
            "0,",
            "65,6 0 0 0",
            "1 ,6 0 0 0",
            "2,6 0 0 0",
            "1,6 0 0 0,6 0 0 0",
            "1,6 0 0",
            "1,6 0 256 0",
            "1,6 0 0 0 junk",
            "1,6,0,0,0",
        ] {
            assert!(parse_program(b).is_err(), "{b:?}");
        }
        let info = Info {
            program: BpfProgram::Bytecode(p),
        }
        .encode();
        assert_eq!(info.len(), 528);
        assert_eq!(&info[..2], &0u16.to_ne_bytes());
        assert_eq!(&info[2..4], &4u16.to_ne_bytes());
        assert_eq!(&info[8..10], &48u16.to_ne_bytes());
        assert_eq!(&info[12..16], &9u32.to_ne_bytes());
    }
}
