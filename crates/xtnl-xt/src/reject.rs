//! `struct ipt_reject_info` / `struct ip6t_reject_info`: one `u32` saying what to answer
//! with. The enums differ between IPv4 and IPv6, so decoding needs the family.

use std::fmt;

use super::{Out, ipv6_of, sized};
use xtnl_core::model::Family;
use xtnl_wire::WireError;

const SIZE: usize = 4;

/// `enum ipt_reject_with`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectV4 {
    /// `IPT_ICMP_NET_UNREACHABLE`: `icmp-net-unreachable`.
    NetUnreachable,
    /// `IPT_ICMP_HOST_UNREACHABLE`: `icmp-host-unreachable`.
    HostUnreachable,
    /// `IPT_ICMP_PROT_UNREACHABLE`: `icmp-proto-unreachable`.
    ProtoUnreachable,
    /// iptables' default.
    PortUnreachable,
    /// The kernel refuses it since 2.6; kept so that such a payload still decodes.
    EchoReply,
    /// `IPT_ICMP_NET_PROHIBITED`: `icmp-net-prohibited`.
    NetProhibited,
    /// `IPT_ICMP_HOST_PROHIBITED`: `icmp-host-prohibited`.
    HostProhibited,
    /// `IPT_TCP_RESET`: `tcp-reset`.
    TcpReset,
    /// `IPT_ICMP_ADMIN_PROHIBITED`: `icmp-admin-prohibited`.
    AdminProhibited,
    /// A code this version does not know, kept as sent.
    Unknown(u32),
}

/// `enum ip6t_reject_with`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectV6 {
    /// `IP6T_ICMP6_NO_ROUTE`: `icmp6-no-route`.
    NoRoute,
    /// `IP6T_ICMP6_ADM_PROHIBITED`: `icmp6-adm-prohibited`.
    AdmProhibited,
    /// `IP6T_ICMP6_NOT_NEIGHBOUR`: `icmp6-not-neighbour`.
    NotNeighbour,
    /// `IP6T_ICMP6_ADDR_UNREACH`: `icmp6-addr-unreachable`.
    AddrUnreachable,
    /// ip6tables' default.
    PortUnreachable,
    /// `IP6T_ICMP6_ECHOREPLY`: `echo-reply` (refused by the kernel; kept so that it decodes).
    EchoReply,
    /// `IP6T_TCP_RESET`: `tcp-reset`.
    TcpReset,
    /// `IP6T_ICMP6_POLICY_FAIL`: `icmp6-policy-fail`.
    PolicyFail,
    /// `IP6T_ICMP6_REJECT_ROUTE`: `icmp6-reject-route`.
    RejectRoute,
    /// A code this version does not know, kept as sent.
    Unknown(u32),
}

const V4: [(RejectV4, &str); 9] = [
    (RejectV4::NetUnreachable, "icmp-net-unreachable"),
    (RejectV4::HostUnreachable, "icmp-host-unreachable"),
    (RejectV4::ProtoUnreachable, "icmp-proto-unreachable"),
    (RejectV4::PortUnreachable, "icmp-port-unreachable"),
    (RejectV4::EchoReply, "echo-reply"),
    (RejectV4::NetProhibited, "icmp-net-prohibited"),
    (RejectV4::HostProhibited, "icmp-host-prohibited"),
    (RejectV4::TcpReset, "tcp-reset"),
    (RejectV4::AdminProhibited, "icmp-admin-prohibited"),
];

const V6: [(RejectV6, &str); 9] = [
    (RejectV6::NoRoute, "icmp6-no-route"),
    (RejectV6::AdmProhibited, "icmp6-adm-prohibited"),
    (RejectV6::NotNeighbour, "icmp6-not-neighbour"),
    (RejectV6::AddrUnreachable, "icmp6-addr-unreachable"),
    (RejectV6::PortUnreachable, "icmp6-port-unreachable"),
    (RejectV6::EchoReply, "echo-reply"),
    (RejectV6::TcpReset, "tcp-reset"),
    (RejectV6::PolicyFail, "icmp6-policy-fail"),
    (RejectV6::RejectRoute, "icmp6-reject-route"),
];

impl RejectV4 {
    /// The kernel's number (`enum ipt_reject_with`).
    pub fn code(self) -> u32 {
        match self {
            RejectV4::Unknown(n) => n,
            // The table is in enum order.
            known => V4.iter().position(|(r, _)| *r == known).unwrap_or(0) as u32,
        }
    }
    /// The variant for the kernel's number; unknown numbers are kept.
    pub fn from_code(n: u32) -> RejectV4 {
        V4.get(n as usize)
            .map(|(r, _)| *r)
            .unwrap_or(RejectV4::Unknown(n))
    }
    /// The `--reject-with` name iptables prints; `None` for unknown codes.
    pub fn name(self) -> Option<&'static str> {
        V4.iter().find(|(r, _)| *r == self).map(|(_, n)| *n)
    }
    /// The variant for a `--reject-with` name (`tcp-reset`, ...).
    pub fn from_name(name: &str) -> Option<RejectV4> {
        V4.iter().find(|(_, n)| *n == name).map(|(r, _)| *r)
    }
}

impl RejectV6 {
    /// The kernel's number (`enum ip6t_reject_with`).
    pub fn code(self) -> u32 {
        match self {
            RejectV6::Unknown(n) => n,
            known => V6.iter().position(|(r, _)| *r == known).unwrap_or(0) as u32,
        }
    }
    /// The variant for the kernel's number; unknown numbers are kept.
    pub fn from_code(n: u32) -> RejectV6 {
        V6.get(n as usize)
            .map(|(r, _)| *r)
            .unwrap_or(RejectV6::Unknown(n))
    }
    /// The `--reject-with` name ip6tables prints; `None` for unknown codes.
    pub fn name(self) -> Option<&'static str> {
        V6.iter().find(|(r, _)| *r == self).map(|(_, n)| *n)
    }
    /// The variant for a `--reject-with` name (`icmp6-adm-prohibited`, ...).
    pub fn from_name(name: &str) -> Option<RejectV6> {
        V6.iter().find(|(_, n)| *n == name).map(|(r, _)| *r)
    }
}

/// `-j REJECT`: `struct ipt_reject_info` or `struct ip6t_reject_info`, by family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reject {
    /// IPv4.
    Ipv4(RejectV4),
    /// IPv6.
    Ipv6(RejectV6),
}

impl Reject {
    /// The kernel's number for what to answer with.
    pub fn code(&self) -> u32 {
        match self {
            Reject::Ipv4(r) => r.code(),
            Reject::Ipv6(r) => r.code(),
        }
    }

    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        Out::new(SIZE).u32_ne(0, self.code()).done()
    }

    /// Checks the payload's size and reads its fields; an error names the struct (never panics).
    pub fn decode(info: &[u8], family: Family) -> Result<Reject, WireError> {
        let ipv6 = ipv6_of(family, "reject_info")?;
        let what = if ipv6 {
            "ip6t_reject_info"
        } else {
            "ipt_reject_info"
        };
        let code = sized(info, SIZE, what)?.u32_ne(0)?;
        Ok(if ipv6 {
            Reject::Ipv6(RejectV6::from_code(code))
        } else {
            Reject::Ipv4(RejectV4::from_code(code))
        })
    }
}

/// `--reject-with` as iptables prints it, or the number for an unknown code.
impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Reject::Ipv4(r) => r.name(),
            Reject::Ipv6(r) => r.name(),
        };
        match name {
            Some(n) => f.write_str(n),
            None => write!(f, "{}", self.code()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_headers() {
        assert_eq!(RejectV4::PortUnreachable.code(), 3);
        assert_eq!(RejectV4::HostProhibited.code(), 6);
        assert_eq!(RejectV4::TcpReset.code(), 7);
        assert_eq!(RejectV4::AdminProhibited.code(), 8);
        assert_eq!(RejectV6::PortUnreachable.code(), 4);
        assert_eq!(RejectV6::TcpReset.code(), 6);
        assert_eq!(RejectV6::RejectRoute.code(), 8);
        for n in 0..12 {
            assert_eq!(RejectV4::from_code(n).code(), n);
            assert_eq!(RejectV6::from_code(n).code(), n);
        }
        assert_eq!(RejectV4::from_code(9), RejectV4::Unknown(9));
    }

    #[test]
    fn encodes_and_decodes_by_family() {
        let b = Reject::Ipv4(RejectV4::TcpReset).encode();
        assert_eq!(b.len(), 8);
        assert_eq!(&b[..4], &7u32.to_ne_bytes());
        assert_eq!(
            Reject::decode(&b, Family::Ipv4).unwrap(),
            Reject::Ipv4(RejectV4::TcpReset)
        );
        // The same code means something else for IPv6.
        assert_eq!(
            Reject::decode(&b, Family::Ipv6).unwrap(),
            Reject::Ipv6(RejectV6::PolicyFail)
        );
        assert_eq!(
            Reject::Ipv6(RejectV6::PolicyFail).to_string(),
            "icmp6-policy-fail"
        );
        assert_eq!(Reject::Ipv4(RejectV4::Unknown(42)).to_string(), "42");
        assert_eq!(
            RejectV4::from_name("icmp-host-prohibited"),
            Some(RejectV4::HostProhibited)
        );
    }
}
