//! The backend-neutral rule model: what a rule matches and what it does, independent of how
//! nf_tables (natively or the iptables-nft way) or x_tables encode it.
//!
//! A decoded rule may hold parts that no model type expresses ([`Opaque`]); such a rule lists
//! and prints, but [`Rule::is_expressible`] is false and encoders refuse it, so nothing
//! rewrites a rule it cannot fully see.

#![deny(missing_docs)]

mod addr;
mod chain;
mod display;
mod opaque;
mod validate;

use std::fmt;

pub use addr::{IpNet, PortRange};
pub use chain::{BaseChain, ChainPolicy, ChainType, Hook};
pub use opaque::{Opaque, OpaqueParts};
pub use validate::{MAX_COMMENT_LEN, MAX_NAME_LEN, MAX_SET_ELEMENTS, validate_name};

/// The family of a table (and of the rules in it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// `ip`: IPv4 (iptables).
    Ipv4,
    /// `ip6`: IPv6 (ip6tables).
    Ipv6,
    /// `inet`: both.
    Inet,
}

impl Family {
    /// The `NFPROTO_*` number of the family (`nfgenmsg.nfgen_family`).
    pub fn nfproto(self) -> u8 {
        use xtnl_wire::nftables::nfproto;
        match self {
            Family::Ipv4 => nfproto::IPV4,
            Family::Ipv6 => nfproto::IPV6,
            Family::Inet => nfproto::INET,
        }
    }
    /// The family of an `NFPROTO_*` number, if it is one of the three.
    pub fn from_nfproto(v: u8) -> Option<Family> {
        use xtnl_wire::nftables::nfproto;
        match v {
            nfproto::IPV4 => Some(Family::Ipv4),
            nfproto::IPV6 => Some(Family::Ipv6),
            nfproto::INET => Some(Family::Inet),
            _ => None,
        }
    }
    /// The name nft uses (`ip`, `ip6`, `inet`).
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Ipv4 => "ip",
            Family::Ipv6 => "ip6",
            Family::Inet => "inet",
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Family {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "ip" | "ipv4" => Ok(Family::Ipv4),
            "ip6" | "ipv6" => Ok(Family::Ipv6),
            "inet" => Ok(Family::Inet),
            _ => Err(crate::Error::InvalidInput(format!(
                "unknown table family {s:?} (expected ip, ip6 or inet)"
            ))),
        }
    }
}

/// Layer-4 protocol of a protocol match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum L4Proto {
    /// TCP (6).
    Tcp,
    /// UDP (17).
    Udp,
    /// ICMP (1).
    Icmp,
    /// ICMPv6 (58).
    Icmpv6,
    /// Any other protocol, by number.
    Other(u8),
}

impl L4Proto {
    /// The IP protocol number.
    pub fn number(self) -> u8 {
        match self {
            L4Proto::Tcp => 6,
            L4Proto::Udp => 17,
            L4Proto::Icmp => 1,
            L4Proto::Icmpv6 => 58,
            L4Proto::Other(n) => n,
        }
    }
    /// The canonical value for a protocol number (`Other` only for unnamed protocols).
    pub fn from_number(n: u8) -> L4Proto {
        match n {
            6 => L4Proto::Tcp,
            17 => L4Proto::Udp,
            1 => L4Proto::Icmp,
            58 => L4Proto::Icmpv6,
            n => L4Proto::Other(n),
        }
    }
    /// Whether ports can be matched after this protocol (tcp, udp).
    pub fn has_ports(self) -> bool {
        matches!(self, L4Proto::Tcp | L4Proto::Udp)
    }

    /// Whether iptables' NAT targets (`DNAT`, `SNAT`, `MASQUERADE`, `REDIRECT`) take a port
    /// after `-p` of this protocol: TCP, UDP, SCTP, DCCP and ICMP (its id), in both families,
    /// whether or not `-p` is inverted (libxt_NAT.c, `__NAT_parse`, looks at the protocol
    /// number alone).
    pub fn nat_ports_ok(self) -> bool {
        matches!(self.number(), 6 | 17 | 132 | 33 | 1)
    }
}

impl fmt::Display for L4Proto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            L4Proto::Tcp => f.write_str("tcp"),
            L4Proto::Udp => f.write_str("udp"),
            L4Proto::Icmp => f.write_str("icmp"),
            L4Proto::Icmpv6 => f.write_str("icmpv6"),
            L4Proto::Other(n) => write!(f, "{n}"),
        }
    }
}

/// A network interface name; a trailing `+` matches every name with that prefix (iptables).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Interface(String);

impl Interface {
    /// IFNAMSIZ less the NUL.
    pub const MAX_LEN: usize = 15;

    /// An interface name or `prefix+` wildcard; refuses empty, overlong and NUL-holding names.
    pub fn new(name: impl Into<String>) -> crate::Result<Self> {
        let name = name.into();
        let bare = name.strip_suffix('+').unwrap_or(&name);
        if bare.is_empty() || bare.len() > Self::MAX_LEN {
            return Err(crate::Error::InvalidInput(format!(
                "interface name {name:?} must be 1 to {} bytes (a lone \"+\" would match every interface; leave the match out instead)",
                Self::MAX_LEN
            )));
        }
        if bare
            .bytes()
            .any(|b| b == 0 || b == b'/' || b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(crate::Error::InvalidInput(format!(
                "interface name {name:?} holds a character interfaces cannot have"
            )));
        }
        Ok(Interface(name))
    }
    /// The name as given (with its `+`, if a wildcard).
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// The name without the wildcard, and whether it is a prefix match.
    pub fn prefix(&self) -> (&str, bool) {
        match self.0.strip_suffix('+') {
            Some(p) => (p, true),
            None => (&self.0, false),
        }
    }
}

impl fmt::Display for Interface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Connection-tracking states as nf_tables numbers them (`NF_CT_STATE_*_BIT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CtStateSet(pub u32);

impl CtStateSet {
    /// `IP_CT_INVALID`'s bit: packets conntrack could not classify.
    pub const INVALID: u32 = 1;
    /// Packets of a connection that has seen traffic both ways.
    pub const ESTABLISHED: u32 = 1 << 1;
    /// Packets that start a connection related to an existing one.
    pub const RELATED: u32 = 1 << 2;
    /// Packets that start a new connection.
    pub const NEW: u32 = 1 << 3;
    /// Packets conntrack was told not to track.
    pub const UNTRACKED: u32 = 1 << 6;
    /// nft's names, in the order it prints them.
    pub const NAMES: [(&'static str, u32); 5] = [
        ("invalid", Self::INVALID),
        ("established", Self::ESTABLISHED),
        ("related", Self::RELATED),
        ("new", Self::NEW),
        ("untracked", Self::UNTRACKED),
    ];
    /// Every state above.
    pub const ALL: u32 =
        Self::INVALID | Self::ESTABLISHED | Self::RELATED | Self::NEW | Self::UNTRACKED;
}

impl fmt::Display for CtStateSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Self::NAMES
            .iter()
            .filter(|(_, b)| self.0 & b != 0)
            .map(|(n, _)| *n)
            .collect();
        f.write_str(&names.join(","))
    }
}

/// What a REJECT answers with: a TCP reset, or an ICMP "unreachable" code of the table's
/// family (ICMPX: a family-neutral code, for inet tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectKind {
    /// A TCP reset (`--reject-with tcp-reset`).
    TcpReset,
    /// ICMP destination-unreachable code (IPv4 tables): 3 port, 1 host, 10 host-prohibited...
    Icmp(u8),
    /// ICMPv6 destination-unreachable code (IPv6 tables): 4 port, 1 admin-prohibited...
    Icmpv6(u8),
    /// `NFT_REJECT_ICMPX_*` (inet tables): 0 no-route, 1 port, 2 host, 3 admin-prohibited.
    Icmpx(u8),
}

/// Which end of a packet a match looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    /// The packet's source.
    Source,
    /// The packet's destination.
    Destination,
}

/// One condition of a rule. Every match can be negated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    /// The layer-4 protocol is `proto`.
    Protocol {
        /// The protocol.
        proto: L4Proto,
        /// Whether the match is inverted (`!`).
        negated: bool,
    },
    /// The source or destination address is in `net`.
    Address {
        /// Which address.
        dir: Dir,
        /// The network (a host is a /32 or /128).
        net: IpNet,
        /// Whether the match is inverted (`!`).
        negated: bool,
    },
    /// Needs an earlier, non-negated `Protocol` match of tcp or udp.
    Port {
        /// Which port.
        dir: Dir,
        /// The port or range.
        ports: PortRange,
        /// Whether the match is inverted (`!`).
        negated: bool,
    },
    /// The packet came in on `name` (`iifname`, `-i`).
    InInterface {
        /// The interface name or wildcard.
        name: Interface,
        /// Whether the match is inverted (`!`).
        negated: bool,
    },
    /// The packet goes out on `name` (`oifname`, `-o`).
    OutInterface {
        /// The interface name or wildcard.
        name: Interface,
        /// Whether the match is inverted (`!`).
        negated: bool,
    },
    /// The port is one of `ports` (an anonymous set, nft's `tcp dport { 80, 443 }`); needs a
    /// tcp or udp protocol match before it, like `Port`.
    PortSet {
        /// Which port.
        dir: Dir,
        /// The ports and ranges of the set.
        ports: Vec<PortRange>,
        /// Whether the match is inverted (`!`).
        negated: bool,
    },
    /// Connection-tracking state is one of `states` (or, negated, none of them).
    CtState {
        /// The states.
        states: CtStateSet,
        /// Whether the match is inverted (`!`).
        negated: bool,
    },
    /// Decoded expressions that form no match the model knows.
    Opaque(Opaque),
}

/// Where to translate to: an address and optionally a port or port range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NatTarget {
    /// The address to translate to.
    pub addr: std::net::IpAddr,
    /// The port or range to translate to; `None` keeps the port.
    pub ports: Option<PortRange>,
}

/// What a rule does with a packet that matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Let the packet through (a terminal verdict).
    Accept,
    /// Drop the packet (a terminal verdict).
    Drop,
    /// Return to the calling chain.
    Return,
    /// Jump to a chain, coming back at the end of it.
    Jump(String),
    /// Go to a chain, not coming back.
    Goto(String),
    /// Destination NAT.
    Dnat(NatTarget),
    /// Source NAT.
    Snat(NatTarget),
    /// Source NAT to the outgoing interface's address.
    Masquerade {
        /// The source port or range to use, if any.
        ports: Option<PortRange>,
    },
    /// Redirect to the local machine, optionally to a port or range.
    Redirect {
        /// The local port or range to redirect to, if any.
        ports: Option<PortRange>,
    },
    /// Reject the packet with an error reply.
    Reject(RejectKind),
    /// Log to the kernel log and go on (like iptables' LOG target).
    Log {
        /// Text before each logged line (iptables' `--log-prefix`).
        prefix: Option<String>,
        /// Syslog level, 0 (emerg) to 7 (debug).
        level: u8,
    },
    /// Decoded expressions that form no action the model knows.
    Opaque(Opaque),
}

/// Packet and byte counts of a rule's counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// Packets counted.
    pub packets: u64,
    /// Bytes counted.
    pub bytes: u64,
}

/// A rule: matches (all must hold), an optional counter, an optional action, a comment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rule {
    /// What the packet must match, all of it, in order.
    pub matches: Vec<Match>,
    /// The rule's counter, if it has one (counts only when present).
    pub counter: Option<Counters>,
    /// What happens to a matching packet; `None` only counts (or does nothing).
    pub action: Option<Action>,
    /// The rule's comment (nft's `comment "..."`, stored as userdata).
    pub comment: Option<String>,
}

impl Rule {
    /// A rule with no matches, no counter, no action.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds a match.
    pub fn with(mut self, m: Match) -> Self {
        self.matches.push(m);
        self
    }
    /// Adds a protocol match.
    pub fn protocol(self, proto: L4Proto) -> Self {
        self.with(Match::Protocol {
            proto,
            negated: false,
        })
    }
    /// Adds a source address match.
    pub fn source(self, net: IpNet) -> Self {
        self.with(Match::Address {
            dir: Dir::Source,
            net,
            negated: false,
        })
    }
    /// Adds a destination address match.
    pub fn destination(self, net: IpNet) -> Self {
        self.with(Match::Address {
            dir: Dir::Destination,
            net,
            negated: false,
        })
    }
    /// Adds a destination port match (needs a tcp or udp protocol match first).
    pub fn dport(self, ports: PortRange) -> Self {
        self.with(Match::Port {
            dir: Dir::Destination,
            ports,
            negated: false,
        })
    }
    /// Adds a source port match (needs a tcp or udp protocol match first).
    pub fn sport(self, ports: PortRange) -> Self {
        self.with(Match::Port {
            dir: Dir::Source,
            ports,
            negated: false,
        })
    }
    /// Adds an incoming interface match.
    pub fn in_interface(self, name: Interface) -> Self {
        self.with(Match::InInterface {
            name,
            negated: false,
        })
    }
    /// Adds an outgoing interface match.
    pub fn out_interface(self, name: Interface) -> Self {
        self.with(Match::OutInterface {
            name,
            negated: false,
        })
    }
    /// Gives the rule a counter.
    pub fn counted(mut self) -> Self {
        self.counter = Some(Counters::default());
        self
    }
    /// Sets the action.
    pub fn action(mut self, a: Action) -> Self {
        self.action = Some(a);
        self
    }
    /// Sets the comment.
    pub fn comment(mut self, c: impl Into<String>) -> Self {
        self.comment = Some(c.into());
        self
    }

    /// False when some part of the rule is [`Opaque`]: it was written by a tool or with
    /// features xtnl does not model, and must not be rewritten by xtnl.
    pub fn is_expressible(&self) -> bool {
        !self.matches.iter().any(|m| matches!(m, Match::Opaque(_)))
            && !matches!(self.action, Some(Action::Opaque(_)))
    }

    /// The chain a jump or goto targets.
    pub fn jump_target(&self) -> Option<&str> {
        match &self.action {
            Some(Action::Jump(c) | Action::Goto(c)) => Some(c),
            _ => None,
        }
    }

    /// Checks meaning: ports need a tcp/udp protocol match before them, address families
    /// fit the table, NAT targets carry a port only with a protocol, names and the comment
    /// are within limits. Encoders call this; nothing is sent for a rule that fails.
    pub fn validate(&self, family: Family) -> crate::Result<()> {
        validate::rule(self, family)
    }
}

pub use addr::ip_from_octets;
