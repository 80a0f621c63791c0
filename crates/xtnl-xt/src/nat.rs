//! `struct nf_nat_range` (revision 1 of SNAT/DNAT; MASQUERADE and REDIRECT for IPv6) and
//! `struct nf_nat_range2` (revision 2, which adds the base port of `a-b/base` port shifting),
//! and the per-target choice between those and the IPv4 compat struct.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::{NatIpv4MultiRange, Out, ipv6_of, nat_flags, sized};
use xtnl_core::model::Family;
use xtnl_wire::WireError;

pub(super) mod field {
    pub const FLAGS: usize = 0;
    pub const MIN_ADDR: usize = 4;
    pub const MAX_ADDR: usize = 20;
    pub const MIN_PROTO: usize = 36;
    pub const MAX_PROTO: usize = 38;
    pub const SIZE: usize = 40;
    pub const BASE_PROTO: usize = 40;
    /// 42 bytes of fields, rounded up to the struct's 4-byte alignment.
    pub const SIZE2: usize = 44;
}

/// `struct nf_nat_range`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NatRange {
    /// [`nat_flags`]; unknown bits are kept.
    pub flags: u32,
    /// `union nf_inet_addr`: an IPv4 address fills the first 4 of its 16 bytes.
    pub min_addr: IpAddr,
    /// The highest address of the range (as `min_addr`).
    pub max_addr: IpAddr,
    /// Port (or ICMP id) range, big endian on the wire.
    pub min_port: u16,
    /// The highest port of the range.
    pub max_port: u16,
}

/// `struct nf_nat_range2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NatRange2 {
    /// The `nf_nat_range` part.
    pub range: NatRange,
    /// With [`nat_flags::PROTO_OFFSET`]: the port that `min_port` maps from.
    pub base_port: u16,
}

fn put_addr(o: &mut Out, at: usize, a: IpAddr) {
    match a {
        IpAddr::V4(v4) => o.put(at, &v4.octets()),
        IpAddr::V6(v6) => o.put(at, &v6.octets()),
    };
}

impl NatRange {
    /// As iptables builds it: `MAP_IPS` with addresses, `PROTO_SPECIFIED` with ports. Without
    /// addresses the zero address of the family is stored (IPv6 if `ipv6`).
    pub fn new(ipv6: bool, addrs: Option<(IpAddr, IpAddr)>, ports: Option<(u16, u16)>) -> Self {
        use nat_flags::*;
        let zero = if ipv6 {
            IpAddr::V6(Ipv6Addr::UNSPECIFIED)
        } else {
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        };
        let (min_addr, max_addr) = addrs.unwrap_or((zero, zero));
        let (min_port, max_port) = ports.unwrap_or((0, 0));
        NatRange {
            flags: if addrs.is_some() { MAP_IPS } else { 0 }
                | if ports.is_some() { PROTO_SPECIFIED } else { 0 },
            min_addr,
            max_addr,
            min_port,
            max_port,
        }
    }

    /// The address range, if mapped ([`nat_flags::MAP_IPS`]).
    pub fn addrs(&self) -> Option<(IpAddr, IpAddr)> {
        (self.flags & nat_flags::MAP_IPS != 0).then_some((self.min_addr, self.max_addr))
    }

    /// The port range, if given ([`nat_flags::PROTO_SPECIFIED`]).
    pub fn ports(&self) -> Option<(u16, u16)> {
        (self.flags & nat_flags::PROTO_SPECIFIED != 0).then_some((self.min_port, self.max_port))
    }

    fn write(&self, o: &mut Out) {
        o.u32_ne(field::FLAGS, self.flags);
        put_addr(o, field::MIN_ADDR, self.min_addr);
        put_addr(o, field::MAX_ADDR, self.max_addr);
        o.u16_be(field::MIN_PROTO, self.min_port)
            .u16_be(field::MAX_PROTO, self.max_port);
    }

    fn read(f: &super::Fields<'_>, ipv6: bool) -> Result<NatRange, WireError> {
        let addr = |at: usize| -> Result<IpAddr, WireError> {
            Ok(if ipv6 {
                IpAddr::V6(Ipv6Addr::from(f.bytes::<16>(at)?))
            } else {
                IpAddr::V4(Ipv4Addr::from(f.bytes::<4>(at)?))
            })
        };
        Ok(NatRange {
            flags: f.u32_ne(field::FLAGS)?,
            min_addr: addr(field::MIN_ADDR)?,
            max_addr: addr(field::MAX_ADDR)?,
            min_port: f.u16_be(field::MIN_PROTO)?,
            max_port: f.u16_be(field::MAX_PROTO)?,
        })
    }

    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Out::new(field::SIZE);
        self.write(&mut o);
        o.done()
    }

    /// `ipv6` says how to read the addresses.
    pub fn decode(info: &[u8], ipv6: bool) -> Result<NatRange, WireError> {
        NatRange::read(&sized(info, field::SIZE, "nf_nat_range")?, ipv6)
    }
}

impl NatRange2 {
    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Out::new(field::SIZE2);
        self.range.write(&mut o);
        o.u16_be(field::BASE_PROTO, self.base_port);
        o.done()
    }

    /// Checks the payload's size and reads its fields; an error names the struct (never panics).
    pub fn decode(info: &[u8], ipv6: bool) -> Result<NatRange2, WireError> {
        let f = sized(info, field::SIZE2, "nf_nat_range2")?;
        Ok(NatRange2 {
            range: NatRange::read(&f, ipv6)?,
            base_port: f.u16_be(field::BASE_PROTO)?,
        })
    }
}

/// The payload of SNAT and DNAT, whose layout is chosen by the revision. iptables-nft 1.8.9
/// writes DNAT as revision 2 for both families, SNAT as revision 0 for IPv4 and revision 1
/// for IPv6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NatInfo {
    /// Revision 0: `struct nf_nat_ipv4_multi_range_compat` (IPv4 only).
    V0(NatIpv4MultiRange),
    /// Revision 1: `struct nf_nat_range`.
    V1(NatRange),
    /// Revision 2: `struct nf_nat_range2`.
    V2(NatRange2),
}

impl NatInfo {
    /// `-j DNAT --to-destination ...` in the revision iptables-nft 1.8.9 writes: 2, for both
    /// families. iptables-nft 1.8.9 reads a NAT payload with the layout of the revision it
    /// would write itself, whatever revision the rule says, so another revision is
    /// misprinted by `iptables -S` (revision 0 as garbage addresses).
    pub fn for_dnat(
        family: Family,
        addrs: Option<(IpAddr, IpAddr)>,
        ports: Option<(u16, u16)>,
    ) -> Result<NatInfo, WireError> {
        let ipv6 = ipv6_of(family, "DNAT")?;
        check_family(ipv6, addrs)?;
        Ok(NatInfo::V2(NatRange2 {
            range: NatRange::new(ipv6, addrs, ports),
            base_port: 0,
        }))
    }

    /// `-j SNAT --to-source ...` in the revision iptables-nft 1.8.9 writes: 0 for IPv4, 1
    /// for IPv6 (see [`NatInfo::for_dnat`] for why that matters).
    pub fn for_snat(
        family: Family,
        addrs: Option<(IpAddr, IpAddr)>,
        ports: Option<(u16, u16)>,
    ) -> Result<NatInfo, WireError> {
        let ipv6 = ipv6_of(family, "SNAT")?;
        check_family(ipv6, addrs)?;
        if ipv6 {
            return Ok(NatInfo::V1(NatRange::new(true, addrs, ports)));
        }
        let v4 = |a: IpAddr| match a {
            IpAddr::V4(v) => v,
            // check_family let only IPv4 through.
            IpAddr::V6(_) => Ipv4Addr::UNSPECIFIED,
        };
        Ok(NatInfo::V0(NatIpv4MultiRange::new(
            addrs.map(|(a, b)| (v4(a), v4(b))),
            ports,
        )))
    }

    /// The revision the payload's layout belongs to.
    pub fn revision(&self) -> u32 {
        match self {
            NatInfo::V0(_) => 0,
            NatInfo::V1(_) => 1,
            NatInfo::V2(_) => 2,
        }
    }

    /// The [`nat_flags`] of the payload, whatever its layout.
    pub fn flags(&self) -> u32 {
        match self {
            NatInfo::V0(r) => r.flags,
            NatInfo::V1(r) => r.flags,
            NatInfo::V2(r) => r.range.flags,
        }
    }

    /// The address range, if mapped.
    pub fn addrs(&self) -> Option<(IpAddr, IpAddr)> {
        match self {
            NatInfo::V0(r) => r.addrs().map(|(a, b)| (IpAddr::V4(a), IpAddr::V4(b))),
            NatInfo::V1(r) => r.addrs(),
            NatInfo::V2(r) => r.range.addrs(),
        }
    }

    /// The port range, if given.
    pub fn ports(&self) -> Option<(u16, u16)> {
        match self {
            NatInfo::V0(r) => r.ports(),
            NatInfo::V1(r) => r.ports(),
            NatInfo::V2(r) => r.range.ports(),
        }
    }

    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            NatInfo::V0(r) => r.encode(),
            NatInfo::V1(r) => r.encode(),
            NatInfo::V2(r) => r.encode(),
        }
    }

    /// Checks the payload's size and reads its fields; an error names the struct (never panics).
    pub fn decode(rev: u32, info: &[u8], family: Family) -> Result<NatInfo, WireError> {
        match rev {
            0 => {
                if ipv6_of(family, "nat revision 0")? {
                    return Err(WireError::bad_value(
                        "revision 0 (nf_nat_ipv4_multi_range_compat) is IPv4 only",
                    ));
                }
                NatIpv4MultiRange::decode(info).map(NatInfo::V0)
            }
            1 => NatRange::decode(info, ipv6_of(family, "nf_nat_range")?).map(NatInfo::V1),
            2 => NatRange2::decode(info, ipv6_of(family, "nf_nat_range2")?).map(NatInfo::V2),
            _ => Err(WireError::bad_value(format!("no NAT revision {rev}"))),
        }
    }
}

fn check_family(ipv6: bool, addrs: Option<(IpAddr, IpAddr)>) -> Result<(), WireError> {
    match addrs {
        Some((a, b)) if a.is_ipv6() != ipv6 || b.is_ipv6() != ipv6 => Err(WireError::bad_value(
            format!("NAT to {a}-{b} in an IPv{} rule", if ipv6 { 6 } else { 4 }),
        )),
        _ => Ok(()),
    }
}

/// The payload of MASQUERADE and REDIRECT, whose only revision is 0 and whose layout is
/// chosen by the family: the IPv4 compat struct, or `nf_nat_range` for IPv6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NatRev0 {
    /// IPv4: `struct nf_nat_ipv4_multi_range_compat`.
    Ipv4(NatIpv4MultiRange),
    /// IPv6: `struct nf_nat_range`.
    Ipv6(NatRange),
}

impl NatRev0 {
    /// `--to-ports` (and no addresses), as iptables writes it for the family.
    pub fn ports(ipv6: bool, ports: Option<(u16, u16)>) -> NatRev0 {
        if ipv6 {
            NatRev0::Ipv6(NatRange::new(true, None, ports))
        } else {
            NatRev0::Ipv4(NatIpv4MultiRange::new(None, ports))
        }
    }

    /// The [`nat_flags`] of the payload.
    pub fn flags(&self) -> u32 {
        match self {
            NatRev0::Ipv4(r) => r.flags,
            NatRev0::Ipv6(r) => r.flags,
        }
    }

    /// The `--to-ports` range, if given.
    pub fn port_range(&self) -> Option<(u16, u16)> {
        match self {
            NatRev0::Ipv4(r) => r.ports(),
            NatRev0::Ipv6(r) => r.ports(),
        }
    }

    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            NatRev0::Ipv4(r) => r.encode(),
            NatRev0::Ipv6(r) => r.encode(),
        }
    }

    /// Checks the payload's size and reads its fields; an error names the struct (never panics).
    pub fn decode(info: &[u8], family: Family) -> Result<NatRev0, WireError> {
        if ipv6_of(family, "MASQUERADE/REDIRECT")? {
            NatRange::decode(info, true).map(NatRev0::Ipv6)
        } else {
            NatIpv4MultiRange::decode(info).map(NatRev0::Ipv4)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-j DNAT --to-destination 192.0.2.1:8080` from iptables-nft 1.8.9.
    #[test]
    fn dnat_v2_matches_captured_bytes() {
        let r = NatRange2 {
            range: NatRange::new(
                false,
                Some(([192, 0, 2, 1].into(), [192, 0, 2, 1].into())),
                Some((8080, 8080)),
            ),
            base_port: 0,
        };
        let mut want = vec![0u8; 48];
        want[0..4].copy_from_slice(&3u32.to_ne_bytes());
        want[4..8].copy_from_slice(&[192, 0, 2, 1]);
        want[20..24].copy_from_slice(&[192, 0, 2, 1]);
        want[36..40].copy_from_slice(&[0x1f, 0x90, 0x1f, 0x90]);
        assert_eq!(r.encode(), want);
        assert_eq!(NatRange2::decode(&want, false).unwrap(), r);
        let info = NatInfo::decode(2, &want, Family::Ipv4).unwrap();
        assert_eq!(info.ports(), Some((8080, 8080)));
        assert_eq!(info.revision(), 2);
    }

    #[test]
    fn port_offset_and_ipv6() {
        let a: IpAddr = "2001:db8::1".parse().unwrap();
        let r = NatRange2 {
            range: NatRange {
                flags: nat_flags::MAP_IPS | nat_flags::PROTO_SPECIFIED | nat_flags::PROTO_OFFSET,
                min_addr: a,
                max_addr: a,
                min_port: 1000,
                max_port: 2000,
            },
            base_port: 1500,
        };
        let b = r.encode();
        assert_eq!(&b[4..20], &a_octets(a));
        assert_eq!(&b[40..42], &[0x05, 0xdc]);
        assert_eq!(&b[42..], &[0; 6]);
        assert_eq!(NatRange2::decode(&b, true).unwrap(), r);
    }

    fn a_octets(a: IpAddr) -> [u8; 16] {
        match a {
            IpAddr::V6(v) => v.octets(),
            IpAddr::V4(v) => v.to_ipv6_mapped().octets(),
        }
    }

    #[test]
    fn iptables_revisions_per_family() {
        let a4 = Some((IpAddr::from([192, 0, 2, 1]), IpAddr::from([192, 0, 2, 1])));
        let a6: Option<(IpAddr, IpAddr)> = Some((
            "2001:db8::1".parse().unwrap(),
            "2001:db8::1".parse().unwrap(),
        ));
        let rev = |r: Result<NatInfo, WireError>| r.unwrap().revision();
        assert_eq!(rev(NatInfo::for_dnat(Family::Ipv4, a4, None)), 2);
        assert_eq!(rev(NatInfo::for_dnat(Family::Ipv6, a6, None)), 2);
        assert_eq!(rev(NatInfo::for_snat(Family::Ipv4, a4, Some((1, 2)))), 0);
        assert_eq!(rev(NatInfo::for_snat(Family::Ipv6, a6, None)), 1);
        let s = NatInfo::for_snat(Family::Ipv4, a4, Some((1, 2))).unwrap();
        assert_eq!(s.addrs(), a4);
        assert_eq!(s.ports(), Some((1, 2)));
        assert!(NatInfo::for_snat(Family::Ipv4, a6, None).is_err());
        assert!(NatInfo::for_dnat(Family::Ipv6, a4, None).is_err());
        assert!(NatInfo::for_dnat(Family::Inet, None, None).is_err());
    }

    #[test]
    fn range_v1_is_40_bytes_and_needs_a_family() {
        let r = NatRange::new(true, None, Some((1024, 2048)));
        let b = r.encode();
        assert_eq!(b.len(), 40);
        assert_eq!(NatRev0::decode(&b, Family::Ipv6).unwrap(), NatRev0::Ipv6(r));
        assert!(NatRev0::decode(&b, Family::Inet).is_err());
        assert!(NatInfo::decode(1, &b, Family::Inet).is_err());
        // The IPv4 layout is 24 bytes: the 40-byte one is refused.
        assert!(NatRev0::decode(&b, Family::Ipv4).is_err());
        assert!(NatInfo::decode(0, &[0; 24], Family::Ipv6).is_err());
        assert!(NatInfo::decode(3, &[0; 48], Family::Ipv4).is_err());
    }
}
