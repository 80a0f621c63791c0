//! `-m ttl` (IPv4) / `-m hl` (IPv6) and `-j TTL` / `-j HL`; `-m dscp` and `-j DSCP`.

use super::*;
use crate::xt::small::{DscpMatch, DscpTarget, TtlMatch, TtlTarget};

/// `ttl`/`hl` (a match) or `TTL`/`HL` (a target).
pub(crate) struct Ttl {
    name: &'static str,
    word: &'static str,
    target: bool,
    fams: Fams,
}

pub(crate) const TTL_MATCH: Ttl = Ttl {
    name: "ttl",
    word: "ttl",
    target: false,
    fams: Fams::V4,
};
pub(crate) const HL_MATCH: Ttl = Ttl {
    name: "hl",
    word: "hl",
    target: false,
    fams: Fams::V6,
};
pub(crate) const TTL_TARGET: Ttl = Ttl {
    name: "TTL",
    word: "ttl",
    target: true,
    fams: Fams::V4,
};
pub(crate) const HL_TARGET: Ttl = Ttl {
    name: "HL",
    word: "hl",
    target: true,
    fams: Fams::V6,
};

/// Match modes eq, ne, lt, gt; target modes set, inc, dec (the kernel's numbering).
const MATCH_OPS: [&str; 4] = ["eq", "ne", "lt", "gt"];
const TARGET_OPS: [&str; 3] = ["set", "inc", "dec"];

impl Ext for Ttl {
    fn name(&self) -> &'static str {
        self.name
    }
    fn is_target(&self) -> bool {
        self.target
    }
    fn fams(&self) -> Fams {
        self.fams
    }
    fn options(&self) -> &'static [Opt] {
        match (self.word, self.target) {
            ("ttl", false) => opts![
                opt("ttl-lt", Arg::One, false),
                opt("ttl-gt", Arg::One, false),
                opt("ttl-eq", Arg::One, true),
                opt("ttl", Arg::One, false),
            ],
            ("hl", false) => opts![
                opt("hl-lt", Arg::One, false),
                opt("hl-gt", Arg::One, false),
                opt("hl-eq", Arg::One, true),
                opt("hl", Arg::One, false),
            ],
            ("ttl", true) => opts![
                opt("ttl-set", Arg::One, false),
                opt("ttl-dec", Arg::One, false),
                opt("ttl-inc", Arg::One, false),
            ],
            _ => opts![
                opt("hl-set", Arg::One, false),
                opt("hl-dec", Arg::One, false),
                opt("hl-inc", Arg::One, false),
            ],
        }
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        if given.len() > 1 {
            return Err(bad(format!("{}: only one option may be given", self.name)));
        }
        let g = given.first().ok_or_else(|| {
            bad(if self.target {
                format!("{}: You must specify an action", self.name)
            } else {
                format!(
                    "{} match: You must specify one of `--{w}-eq', `--{w}-lt', `--{w}-gt'",
                    self.name.to_uppercase(),
                    w = self.word
                )
            })
        })?;
        let value = num(g.arg(), 255, self.name)? as u8;
        let op = g
            .opt
            .strip_prefix(self.word)
            .unwrap_or("")
            .trim_start_matches('-');
        if self.target {
            let mode = TARGET_OPS.iter().position(|o| *o == op).unwrap_or(0) as u8;
            if mode != 0 && value == 0 {
                return Err(bad(format!(
                    "{}: --{} needs a value of at least 1",
                    self.name, g.opt
                )));
            }
            return Ok(TtlTarget { mode, value }.encode());
        }
        let mode = match op {
            "lt" => 2,
            "gt" => 3,
            _ => u8::from(g.neg),
        };
        Ok(TtlMatch { mode, value }.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        if self.target {
            let t = TtlTarget::decode(info).ok()?;
            let op = TARGET_OPS.get(usize::from(t.mode))?;
            let _ = write!(out, " --{}-{op} {}", self.word, t.value);
        } else {
            let m = TtlMatch::decode(info).ok()?;
            let op = MATCH_OPS.get(usize::from(m.mode))?;
            if *op == "ne" {
                let _ = write!(out, " ! --{}-eq {}", self.word, m.value);
            } else {
                let _ = write!(out, " --{}-{op} {}", self.word, m.value);
            }
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let who = if self.word == "ttl" { "TTL" } else { "HL" };
        if self.target {
            let t = TtlTarget::decode(info).ok()?;
            let op = ["set to", "increment by", "decrement by"].get(usize::from(t.mode))?;
            let _ = write!(out, " {who} {op} {}", t.value);
        } else {
            let m = TtlMatch::decode(info).ok()?;
            let op = ["==", "!=", "<", ">"].get(usize::from(m.mode))?;
            let _ = write!(out, " {who} match {who} {op} {}", m.value);
        }
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        if self.target {
            TtlTarget::decode(info).ok().map(|t| t.encode())
        } else {
            TtlMatch::decode(info).ok().map(|t| t.encode())
        }
    }
}

const CLASSES: [(&str, u8); 22] = [
    ("CS0", 0x00),
    ("CS1", 0x08),
    ("CS2", 0x10),
    ("CS3", 0x18),
    ("CS4", 0x20),
    ("CS5", 0x28),
    ("CS6", 0x30),
    ("CS7", 0x38),
    ("BE", 0x00),
    ("AF11", 0x0a),
    ("AF12", 0x0c),
    ("AF13", 0x0e),
    ("AF21", 0x12),
    ("AF22", 0x14),
    ("AF23", 0x16),
    ("AF31", 0x1a),
    ("AF32", 0x1c),
    ("AF33", 0x1e),
    ("AF41", 0x22),
    ("AF42", 0x24),
    ("AF43", 0x26),
    ("EF", 0x2e),
];

/// iptables' `class_to_dscp`: the first class the name starts with (any case).
fn class(name: &str) -> Result<u8> {
    CLASSES
        .iter()
        .find(|(c, _)| name.len() >= c.len() && name[..c.len()].eq_ignore_ascii_case(c))
        .map(|(_, v)| *v)
        .ok_or_else(|| bad(format!("Invalid DSCP value `{name}'")))
}

pub(crate) struct Dscp;
pub(crate) struct DscpSet;

impl Ext for Dscp {
    fn name(&self) -> &'static str {
        "dscp"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("dscp", Arg::One, true),
            opt("dscp-class", Arg::One, true)
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        if given.len() != 1 {
            return Err(bad(
                "dscp match: exactly one of --dscp and --dscp-class is required",
            ));
        }
        let g = &given[0];
        let dscp = if g.opt == "dscp" {
            num(g.arg(), 0x3f, "dscp")? as u8
        } else {
            class(g.arg())?
        };
        Ok(DscpMatch {
            dscp,
            invert: u8::from(g.neg),
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let d = DscpMatch::decode(info).ok()?;
        if d.invert > 1 || d.dscp > 0x3f {
            return None;
        }
        bang(out, d.invert != 0);
        let _ = write!(out, " --dscp 0x{:02x}", d.dscp);
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let d = DscpMatch::decode(info).ok()?;
        let inv = if d.invert != 0 { "!" } else { "" };
        let _ = write!(out, " DSCP match {inv}0x{:02x}", d.dscp);
        Some(())
    }
    canonical_via!(DscpMatch);
}

impl Ext for DscpSet {
    fn name(&self) -> &'static str {
        "DSCP"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("set-dscp", Arg::One, false),
            opt("set-dscp-class", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        exclusive("DSCP", given, &["set-dscp", "set-dscp-class"])?;
        if given.len() != 1 {
            return Err(bad(if given.is_empty() {
                "DSCP target: Parameter --set-dscp is required"
            } else {
                "DSCP target: --set-dscp and --set-dscp-class cannot be used together"
            }));
        }
        let g = &given[0];
        let dscp = if g.opt == "set-dscp" {
            num(g.arg(), 0x3f, "DSCP")? as u8
        } else {
            class(g.arg())?
        };
        Ok(DscpTarget { dscp }.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let d = DscpTarget::decode(info).ok()?;
        if d.dscp > 0x3f {
            return None;
        }
        let _ = write!(out, " --set-dscp 0x{:02x}", d.dscp);
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let d = DscpTarget::decode(info).ok()?;
        let _ = write!(out, " DSCP set 0x{:02x}", d.dscp);
        Some(())
    }
    canonical_via!(DscpTarget);
}
