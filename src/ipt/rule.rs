use std::net::IpAddr;

use crate::model::{Counters, Family, Interface, IpNet, L4Proto, Opaque, PortRange};

/// A value with iptables' `!` in front of it or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neg<T> {
    pub value: T,
    pub negated: bool,
}

impl<T> Neg<T> {
    pub fn plain(value: T) -> Self {
        Neg {
            value,
            negated: false,
        }
    }
    pub fn new(value: T, negated: bool) -> Self {
        Neg { value, negated }
    }
}

/// Conntrack states, with the kernel's bits (shared with the xt payloads).
pub use crate::xt::CtStates;

/// Parses `--state`/`--ctstate` lists; SNAT and DNAT exist only for `--ctstate`.
pub(crate) fn parse_states(list: &str, allow_nat: bool) -> crate::Result<CtStates> {
    let states = CtStates::from_names(list)
        .map_err(|_| crate::Error::InvalidInput(format!("Bad state \"{list}\"")))?;
    if !allow_nat && (states.contains(CtStates::SNAT) || states.contains(CtStates::DNAT)) {
        return Err(crate::Error::InvalidInput(format!(
            "Bad state \"{list}\" (SNAT/DNAT need -m conntrack --ctstate)"
        )));
    }
    Ok(states)
}

/// `-m tcp` / `-m udp` options.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PortsMatch {
    pub sport: Option<Neg<PortRange>>,
    pub dport: Option<Neg<PortRange>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MultiportDir {
    Source,
    Destination,
    /// `--ports`: either direction.
    Either,
}

/// `-m multiport`: at most 15 entries, a range counting as two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Multiport {
    pub dir: MultiportDir,
    pub ports: Vec<PortRange>,
    pub negated: bool,
}

/// One `-m` module (or the implicit one `-p tcp --dport` loads), in rule order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IptMatch {
    Tcp(PortsMatch),
    Udp(PortsMatch),
    Multiport(Multiport),
    Comment(String),
    /// `-m state --state`.
    State(Neg<CtStates>),
    /// `-m conntrack --ctstate`.
    Conntrack(Neg<CtStates>),
    /// Expressions of a rule that no iptables module here expresses.
    Opaque(Opaque),
    /// Any other module of the extension registry (`ipt::ext`).
    Ext(XtPayload),
}

/// An x_tables extension's payload as the kernel holds it (name, revision, the bytes in
/// the canonical form iptables writes); `ipt::ext` parses and prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XtPayload {
    pub name: String,
    pub rev: u32,
    pub info: Vec<u8>,
    /// IPv4 or IPv6: some layouts and all printed addresses depend on it.
    pub family: Family,
}

/// DNAT/SNAT `--to-destination/--to-source [addr[-addr]][:port[-port]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NatRange {
    pub addr_min: Option<IpAddr>,
    pub addr_max: Option<IpAddr>,
    pub ports: Option<PortRange>,
}

/// REJECT `--reject-with`, by iptables' names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectWith {
    IcmpNetUnreachable,
    IcmpHostUnreachable,
    IcmpPortUnreachable,
    IcmpProtoUnreachable,
    IcmpNetProhibited,
    IcmpHostProhibited,
    IcmpAdminProhibited,
    TcpReset,
    Icmp6NoRoute,
    Icmp6AdmProhibited,
    Icmp6AddrUnreachable,
    Icmp6PortUnreachable,
    Icmp6PolicyFail,
    Icmp6RejectRoute,
}

impl RejectWith {
    pub fn name(self) -> &'static str {
        use RejectWith::*;
        match self {
            IcmpNetUnreachable => "icmp-net-unreachable",
            IcmpHostUnreachable => "icmp-host-unreachable",
            IcmpPortUnreachable => "icmp-port-unreachable",
            IcmpProtoUnreachable => "icmp-proto-unreachable",
            IcmpNetProhibited => "icmp-net-prohibited",
            IcmpHostProhibited => "icmp-host-prohibited",
            IcmpAdminProhibited => "icmp-admin-prohibited",
            TcpReset => "tcp-reset",
            Icmp6NoRoute => "icmp6-no-route",
            Icmp6AdmProhibited => "icmp6-adm-prohibited",
            Icmp6AddrUnreachable => "icmp6-addr-unreachable",
            Icmp6PortUnreachable => "icmp6-port-unreachable",
            Icmp6PolicyFail => "icmp6-policy-fail",
            Icmp6RejectRoute => "icmp6-reject-route",
        }
    }
    /// The default for the family (`-j REJECT` alone).
    pub fn default_for(family: Family) -> Self {
        if family == Family::Ipv6 {
            RejectWith::Icmp6PortUnreachable
        } else {
            RejectWith::IcmpPortUnreachable
        }
    }
    /// Accepts iptables' names and its aliases (`icmp-port-unreachable` also as
    /// `port-unreach`, ...).
    pub fn parse(s: &str, family: Family) -> crate::Result<Self> {
        use RejectWith::*;
        let v4 = [
            (
                IcmpNetUnreachable,
                &["icmp-net-unreachable", "net-unreach"][..],
            ),
            (
                IcmpHostUnreachable,
                &["icmp-host-unreachable", "host-unreach"],
            ),
            (
                IcmpPortUnreachable,
                &["icmp-port-unreachable", "port-unreach"],
            ),
            (
                IcmpProtoUnreachable,
                &["icmp-proto-unreachable", "proto-unreach"],
            ),
            (IcmpNetProhibited, &["icmp-net-prohibited", "net-prohib"]),
            (IcmpHostProhibited, &["icmp-host-prohibited", "host-prohib"]),
            (
                IcmpAdminProhibited,
                &["icmp-admin-prohibited", "admin-prohib"],
            ),
            (TcpReset, &["tcp-reset", "tcp-rst"]),
        ];
        let v6 = [
            (Icmp6NoRoute, &["icmp6-no-route", "no-route"][..]),
            (
                Icmp6AdmProhibited,
                &["icmp6-adm-prohibited", "adm-prohibited"],
            ),
            (
                Icmp6AddrUnreachable,
                &["icmp6-addr-unreachable", "addr-unreach"],
            ),
            (
                Icmp6PortUnreachable,
                &["icmp6-port-unreachable", "port-unreach"],
            ),
            (TcpReset, &["tcp-reset"]),
            (Icmp6PolicyFail, &["icmp6-policy-fail", "policy-fail"]),
            (Icmp6RejectRoute, &["icmp6-reject-route", "reject-route"]),
        ];
        let table: &[(RejectWith, &[&str])] = if family == Family::Ipv6 { &v6 } else { &v4 };
        table
            .iter()
            .find(|(_, names)| names.contains(&s))
            .map(|(r, _)| *r)
            .ok_or_else(|| crate::Error::InvalidInput(format!("unknown reject type \"{s}\"")))
    }
}

/// LOG `--log-prefix` and `--log-level` (syslog level 0-7, default 4 "warning").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogOpts {
    pub prefix: Option<String>,
    pub level: u8,
}

impl LogOpts {
    pub const DEFAULT_LEVEL: u8 = 4;
    /// The kernel's `prefix[30]` holds 29 bytes and the NUL.
    pub const MAX_PREFIX: usize = 29;
}

/// What `-j`/`-g` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IptTarget {
    Accept,
    Drop,
    Return,
    Jump(String),
    Goto(String),
    Dnat(NatRange),
    Snat(NatRange),
    Masquerade(Option<PortRange>),
    Redirect(Option<PortRange>),
    Reject(RejectWith),
    Log(LogOpts),
    /// A target (or verdict) no iptables extension here expresses.
    Opaque(Opaque),
    /// Any other target of the extension registry (`ipt::ext`).
    Ext(XtPayload),
}

/// A rule as iptables sees it: the fixed `ipt_entry` fields, the modules in order, the
/// target. Negation sits on each field as iptables' `!` does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IptRule {
    pub src: Option<Neg<IpNet>>,
    pub dst: Option<Neg<IpNet>>,
    pub in_iface: Option<Neg<Interface>>,
    pub out_iface: Option<Neg<Interface>>,
    /// `-p`; `L4Proto::Other(0)` is never stored (`-p all` means no protocol match).
    pub proto: Option<Neg<L4Proto>>,
    pub matches: Vec<IptMatch>,
    pub target: Option<IptTarget>,
    /// Read back from the kernel; ignored when comparing rules for `-D`/`-C`.
    pub counters: Option<Counters>,
}

impl IptRule {
    /// Whether every part is something iptables syntax expresses.
    pub fn is_expressible(&self) -> bool {
        !self
            .matches
            .iter()
            .any(|m| matches!(m, IptMatch::Opaque(_)))
            && !matches!(self.target, Some(IptTarget::Opaque(_)))
    }

    /// The same rule without counters, for comparisons as `iptables -D`/`-C` make them.
    pub fn without_counters(&self) -> IptRule {
        IptRule {
            counters: None,
            ..self.clone()
        }
    }

    /// The chain a jump or goto targets.
    pub fn jump_target(&self) -> Option<&str> {
        match &self.target {
            Some(IptTarget::Jump(c) | IptTarget::Goto(c)) => Some(c),
            _ => None,
        }
    }
}
