//! `struct nf_nat_ipv4_multi_range_compat`: the IPv4-only NAT payload of revision 0 targets
//! (SNAT, DNAT, MASQUERADE, REDIRECT). Despite "multi", every kernel since 2.6 refuses any
//! `rangesize` but 1, so the type holds exactly one range.

use std::net::Ipv4Addr;

use super::{Out, sized};
use xtnl_wire::WireError;

/// `NF_NAT_RANGE_*`, the flags of this struct and of `nf_nat_range`/`nf_nat_range2` (nat.rs)
/// alike.
pub mod nat_flags {
    /// `NF_NAT_RANGE_MAP_IPS`: the address range is given.
    pub const MAP_IPS: u32 = 1 << 0;
    /// `NF_NAT_RANGE_PROTO_SPECIFIED`: the port range is given.
    pub const PROTO_SPECIFIED: u32 = 1 << 1;
    /// `NF_NAT_RANGE_PROTO_RANDOM`: `--random`, a random source port.
    pub const PROTO_RANDOM: u32 = 1 << 2;
    /// `NF_NAT_RANGE_PERSISTENT`: `--persistent`, the same address for a client across connections.
    pub const PERSISTENT: u32 = 1 << 3;
    /// `NF_NAT_RANGE_PROTO_RANDOM_FULLY`: `--random-fully`, fully randomised port selection.
    pub const PROTO_RANDOM_FULLY: u32 = 1 << 4;
    /// Revision 2 only: ports are shifted by `base_port` instead of picked in the range.
    pub const PROTO_OFFSET: u32 = 1 << 5;
    /// `NF_NAT_RANGE_NETMAP`: map the address range one to one (`-j NETMAP`).
    pub const NETMAP: u32 = 1 << 6;
}

pub(super) mod field {
    pub const RANGESIZE: usize = 0;
    pub const FLAGS: usize = 4;
    pub const MIN_IP: usize = 8;
    pub const MAX_IP: usize = 12;
    pub const MIN: usize = 16;
    pub const MAX: usize = 18;
    pub const SIZE: usize = 20;
}

const WHAT: &str = "nf_nat_ipv4_multi_range_compat";

/// `struct nf_nat_ipv4_multi_range_compat` with its one range (`rangesize` is always 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NatIpv4MultiRange {
    /// [`nat_flags`]; unknown bits are kept.
    pub flags: u32,
    /// The lowest address (`min_ip`).
    pub min_ip: Ipv4Addr,
    /// The highest address (`max_ip`).
    pub max_ip: Ipv4Addr,
    /// Port (or ICMP id) range, big endian on the wire (`union nf_conntrack_man_proto`).
    pub min_port: u16,
    /// The highest port (or ICMP id).
    pub max_port: u16,
}

impl NatIpv4MultiRange {
    /// As iptables builds it: `NF_NAT_RANGE_MAP_IPS` with addresses, `PROTO_SPECIFIED` with
    /// ports; MASQUERADE and REDIRECT give no addresses.
    pub fn new(addrs: Option<(Ipv4Addr, Ipv4Addr)>, ports: Option<(u16, u16)>) -> Self {
        use nat_flags::*;
        let (min_ip, max_ip) = addrs.unwrap_or((Ipv4Addr::UNSPECIFIED, Ipv4Addr::UNSPECIFIED));
        let (min_port, max_port) = ports.unwrap_or((0, 0));
        NatIpv4MultiRange {
            flags: if addrs.is_some() { MAP_IPS } else { 0 }
                | if ports.is_some() { PROTO_SPECIFIED } else { 0 },
            min_ip,
            max_ip,
            min_port,
            max_port,
        }
    }

    /// The address range, if the flags say addresses are mapped.
    pub fn addrs(&self) -> Option<(Ipv4Addr, Ipv4Addr)> {
        (self.flags & nat_flags::MAP_IPS != 0).then_some((self.min_ip, self.max_ip))
    }

    /// The port range, if the flags say ports are given.
    pub fn ports(&self) -> Option<(u16, u16)> {
        (self.flags & nat_flags::PROTO_SPECIFIED != 0).then_some((self.min_port, self.max_port))
    }

    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        Out::new(field::SIZE)
            .u32_ne(field::RANGESIZE, 1)
            .u32_ne(field::FLAGS, self.flags)
            .put(field::MIN_IP, &self.min_ip.octets())
            .put(field::MAX_IP, &self.max_ip.octets())
            .u16_be(field::MIN, self.min_port)
            .u16_be(field::MAX, self.max_port)
            .done()
    }

    /// Checks the payload's size and reads its fields; an error names the struct (never panics).
    pub fn decode(info: &[u8]) -> Result<NatIpv4MultiRange, WireError> {
        let f = sized(info, field::SIZE, WHAT)?;
        let rangesize = f.u32_ne(field::RANGESIZE)?;
        if rangesize != 1 {
            return Err(f.bad(format!("rangesize {rangesize}, the kernel accepts only 1")));
        }
        Ok(NatIpv4MultiRange {
            flags: f.u32_ne(field::FLAGS)?,
            min_ip: Ipv4Addr::from(f.bytes::<4>(field::MIN_IP)?),
            max_ip: Ipv4Addr::from(f.bytes::<4>(field::MAX_IP)?),
            min_port: f.u16_be(field::MIN)?,
            max_port: f.u16_be(field::MAX)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nat_flags;

    /// `-j REDIRECT --to-ports 8080` from iptables-nft 1.8.9.
    #[test]
    fn redirect_matches_captured_bytes() {
        let r = NatIpv4MultiRange::new(None, Some((8080, 8080)));
        let mut want = vec![0u8; 24];
        want[0..4].copy_from_slice(&1u32.to_ne_bytes());
        want[4..8].copy_from_slice(&2u32.to_ne_bytes());
        want[16..20].copy_from_slice(&[0x1f, 0x90, 0x1f, 0x90]);
        assert_eq!(r.encode(), want);
        assert_eq!(NatIpv4MultiRange::decode(&want).unwrap(), r);
    }

    #[test]
    fn snat_with_ports() {
        let r = NatIpv4MultiRange::new(
            Some(([203, 0, 113, 5].into(), [203, 0, 113, 9].into())),
            Some((1000, 2000)),
        );
        assert_eq!(r.flags, nat_flags::MAP_IPS | nat_flags::PROTO_SPECIFIED);
        let b = r.encode();
        assert_eq!(
            &b[8..20],
            &[203, 0, 113, 5, 203, 0, 113, 9, 3, 0xe8, 7, 0xd0]
        );
        let back = NatIpv4MultiRange::decode(&b).unwrap();
        assert_eq!(back.ports(), Some((1000, 2000)));
        assert_eq!(back.addrs().unwrap().1, Ipv4Addr::new(203, 0, 113, 9));
    }

    #[test]
    fn other_rangesize_is_refused() {
        let mut b = NatIpv4MultiRange::new(None, None).encode();
        b[0..4].copy_from_slice(&2u32.to_ne_bytes());
        let err = NatIpv4MultiRange::decode(&b).unwrap_err();
        assert!(err.to_string().contains("rangesize 2"), "{err}");
    }
}
