//! `-j DNAT`, `SNAT`, `MASQUERADE`, `REDIRECT` with every option: `--random`,
//! `--random-fully`, `--persistent` on top of the address/port ranges. A payload without
//! those flags reads back as the typed [`crate::ipt::IptTarget::Dnat`] (and friends) as
//! before; with them it is this extension's.

use super::*;
use crate::ipt::rule::NatRange as IptNatRange;
use crate::xt::{NatInfo, NatRev0, nat_flags as nf};

pub(crate) struct Nat {
    name: &'static str,
}

pub(crate) const DNAT: Nat = Nat { name: "DNAT" };
pub(crate) const SNAT: Nat = Nat { name: "SNAT" };
pub(crate) const MASQUERADE: Nat = Nat { name: "MASQUERADE" };
pub(crate) const REDIRECT: Nat = Nat { name: "REDIRECT" };

const FLAGS: [(&str, u32); 3] = [
    ("random", nf::PROTO_RANDOM),
    ("random-fully", nf::PROTO_RANDOM_FULLY),
    ("persistent", nf::PERSISTENT),
];

impl Nat {
    fn range_opt(&self) -> &'static str {
        match self.name {
            "DNAT" => "to-destination",
            "SNAT" => "to-source",
            _ => "to-ports",
        }
    }
    fn rev0(&self) -> bool {
        matches!(self.name, "MASQUERADE" | "REDIRECT")
    }
}

fn set_flags(info: &mut NatInfo, extra: u32) {
    match info {
        NatInfo::V0(r) => r.flags |= extra,
        NatInfo::V1(r) => r.flags |= extra,
        NatInfo::V2(r) => r.range.flags |= extra,
    }
}

fn set_flags0(info: &mut NatRev0, extra: u32) {
    match info {
        NatRev0::Ipv4(r) => r.flags |= extra,
        NatRev0::Ipv6(r) => r.flags |= extra,
    }
}

impl Ext for Nat {
    fn name(&self) -> &'static str {
        self.name
    }
    fn is_target(&self) -> bool {
        true
    }
    fn revision(&self) -> u32 {
        if self.rev0() { 0 } else { 2 }
    }
    fn payload_revision(&self, info: &[u8]) -> u32 {
        // iptables-nft 1.8.9 writes SNAT as rev 0 (IPv4) or 1 (IPv6), DNAT as rev 2: the
        // sizes differ (24, 40, 48 bytes).
        match (self.rev0(), info.len()) {
            (true, _) => 0,
            (false, 24) => 0,
            (false, 40) => 1,
            _ => 2,
        }
    }
    fn reads(&self, rev: u32) -> bool {
        if self.rev0() { rev == 0 } else { rev <= 2 }
    }
    fn options(&self) -> &'static [Opt] {
        match self.name {
            "DNAT" => opts![
                opt("to-destination", Arg::One, false),
                opt("random", Arg::None, false),
                opt("persistent", Arg::None, false),
            ],
            "SNAT" => opts![
                opt("to-source", Arg::One, false),
                opt("random", Arg::None, false),
                opt("random-fully", Arg::None, false),
                opt("persistent", Arg::None, false),
            ],
            "MASQUERADE" => opts![
                opt("to-ports", Arg::One, false),
                opt("random", Arg::None, false),
                opt("random-fully", Arg::None, false),
            ],
            _ => opts![
                opt("to-ports", Arg::One, false),
                opt("random", Arg::None, false)
            ],
        }
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, self.name)?;
        let flags = FLAGS
            .iter()
            .filter(|(n, _)| get(given, n).is_some())
            .fold(0, |a, (_, f)| a | f);
        let ro = self.range_opt();
        let family = ctx.family;
        if self.rev0() {
            let ports = match get(given, ro) {
                Some(g) => {
                    crate::ipt::parse::nat_ports_proto(ctx.rule)?;
                    Some(crate::ipt::parse::parse_to_ports(g.arg())?)
                }
                None => None,
            };
            let mut info =
                NatRev0::ports(family == Family::Ipv6, ports.map(|p| (p.first(), p.last())));
            set_flags0(&mut info, flags);
            return Ok(info.encode());
        }
        let g = get(given, ro).ok_or_else(|| {
            bad(format!(
                "{}: option \"--{ro}\" must be specified",
                self.name
            ))
        })?;
        let (arg, base) = split_base(g.arg())?;
        let r = crate::ipt::parse::parse_nat_range(&arg, family, &format!("--{ro}"))?;
        if r.ports.is_some() {
            crate::ipt::parse::nat_ports_proto(ctx.rule)?;
        }
        let addrs = r.addr_min.map(|a| (a, r.addr_max.unwrap_or(a)));
        let ports = r.ports.map(|p| (p.first(), p.last()));
        let mut info = if self.name == "DNAT" {
            NatInfo::for_dnat(family, addrs, ports)
        } else {
            NatInfo::for_snat(family, addrs, ports)
        }
        .map_err(wire)?;
        set_flags(&mut info, flags);
        if let Some(b) = base {
            // iptables sets the flag whatever the revision; only revision 2 (DNAT) has room
            // for the base port, so SNAT's is lost and shows as `/0`, as with iptables.
            set_flags(&mut info, nf::PROTO_OFFSET);
            if let NatInfo::V2(r) = &mut info {
                r.base_port = b;
            }
        }
        Ok(info.encode())
    }
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()> {
        let allowed = self
            .options()
            .iter()
            .filter_map(|o| FLAGS.iter().find(|(n, _)| *n == o.name))
            .fold(nf::MAP_IPS | nf::PROTO_SPECIFIED, |a, (_, f)| a | f);
        let (flags, addrs, ports) = if self.rev0() {
            let n = NatRev0::decode(info, family).ok()?;
            (n.flags(), None, n.port_range())
        } else {
            // The revision is not known here; the size tells (rev 0 is IPv4 only).
            let n = [2, 1, 0]
                .iter()
                .find_map(|&rev| NatInfo::decode(rev, info, family).ok())?;
            (n.flags(), n.addrs(), n.ports())
        };
        let base = match (self.rev0(), flags & nf::PROTO_OFFSET != 0) {
            (true, _) | (false, false) => None,
            (false, true) => Some(match NatInfo::decode(2, info, family) {
                Ok(NatInfo::V2(r)) => r.base_port,
                _ => 0,
            }),
        };
        let allowed = if self.rev0() {
            allowed
        } else {
            allowed | nf::PROTO_OFFSET
        };
        if flags & !allowed != 0 || (self.rev0() && flags & nf::MAP_IPS != 0) {
            return None;
        }
        let ports = match ports {
            Some((a, b)) => Some(crate::model::PortRange::new(a, b).ok()?),
            None => None,
        };
        if self.rev0() {
            if let Some(p) = ports {
                out.push_str(" --to-ports ");
                out.push_str(&p.first().to_string());
                if !p.is_single() {
                    let _ = write!(out, "-{}", p.last());
                }
            }
        } else {
            let r = IptNatRange {
                addr_min: addrs.map(|(a, _)| a),
                addr_max: addrs.and_then(|(a, b)| (a != b).then_some(b)),
                ports,
            };
            let mut text = crate::ipt::print::nat_range(&r);
            if let (Some(b), Some(_)) = (base, ports) {
                let _ = write!(text, "/{b}");
            }
            if !text.is_empty() {
                let _ = write!(out, " --{} {text}", self.range_opt());
            }
        }
        for (n, f) in FLAGS {
            if flags & f != 0 {
                let _ = write!(out, " --{n}");
            }
        }
        Some(())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        // libxt_NAT prints the same range with another label, and the flags without `--`
        // (the range holds no `--`: addresses, ports and `/base`).
        let mut t = String::new();
        self.save(info, family, &mut t)?;
        let label = match self.name {
            "DNAT" | "SNAT" => "to:",
            "MASQUERADE" => "masq ports: ",
            _ => "redir ports ",
        };
        let t = t.replace(&format!(" --{} ", self.range_opt()), &format!(" {label}"));
        out.push_str(&t.replace(" --", " "));
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        // NAT payloads decode only with the family (see `save`); they are kept as read.
        Some(info.to_vec())
    }
}

/// `ADDR:A-B/BASE` (port shifting, `NF_NAT_RANGE_PROTO_OFFSET`): the text without `/BASE`,
/// and the base port (1-65535 or a service name), read as iptables' libxt_NAT reads it.
fn split_base(arg: &str) -> Result<(String, Option<u16>)> {
    // The ports follow `]:` in the bracketed form, else the first `:` (IPv4 only; a bare
    // IPv6 address has no ports).
    let ports_at = match arg.find("]:") {
        Some(i) => Some(i + 2),
        None if !arg.starts_with('[') => arg.find(':').map(|i| i + 1),
        None => None,
    };
    let Some(at) = ports_at else {
        return Ok((arg.to_string(), None));
    };
    let Some((ports, b)) = arg[at..].split_once('/') else {
        return Ok((arg.to_string(), None));
    };
    if !ports.contains('-') {
        return Err(bad(format!("Garbage after port value: `/{b}'")));
    }
    let base = crate::ipt::parse::parse_to_ports(b)
        .ok()
        .filter(|r| r.is_single() && r.first() != 0)
        .ok_or_else(|| bad(format!("Port `{b}' not valid")))?;
    Ok((format!("{}{ports}", &arg[..at]), Some(base.first())))
}
