#![deny(missing_docs)]

use std::net::IpAddr;

use crate::model::{Counters, Family, Interface, IpNet, L4Proto, Opaque, PortRange};

/// A value with iptables' `!` in front of it or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neg<T> {
    /// The value.
    pub value: T,
    /// Whether `!` came before it.
    pub negated: bool,
}

impl<T> Neg<T> {
    /// A value without `!`.
    pub fn plain(value: T) -> Self {
        Neg {
            value,
            negated: false,
        }
    }
    /// A value, negated or not.
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
    /// `--sport`.
    pub sport: Option<Neg<PortRange>>,
    /// `--dport`.
    pub dport: Option<Neg<PortRange>>,
}

/// Which ports `-m multiport` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MultiportDir {
    /// `--sports`.
    Source,
    /// `--dports`.
    Destination,
    /// `--ports`: either direction.
    Either,
}

/// `-m multiport`: at most 15 entries, a range counting as two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Multiport {
    /// Which ports.
    pub dir: MultiportDir,
    /// The ports and ranges (at most 15 entries).
    pub ports: Vec<PortRange>,
    /// Whether `!` came before the option.
    pub negated: bool,
}

/// One `-m` module (or the implicit one `-p tcp --dport` loads), in rule order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IptMatch {
    /// `-m tcp` with its ports.
    Tcp(PortsMatch),
    /// `-m udp` with its ports.
    Udp(PortsMatch),
    /// `-m multiport`.
    Multiport(Multiport),
    /// `-m comment --comment TEXT`.
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
    /// The extension's name (`xt_NAME`).
    pub name: String,
    /// Its revision.
    pub rev: u32,
    /// Its payload, in the kernel's layout.
    pub info: Vec<u8>,
    /// IPv4 or IPv6: some layouts and all printed addresses depend on it.
    pub family: Family,
}

/// DNAT/SNAT `--to-destination/--to-source [addr[-addr]][:port[-port]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NatRange {
    /// The first address of the range, if any.
    pub addr_min: Option<IpAddr>,
    /// The last address of a range, if it is one.
    pub addr_max: Option<IpAddr>,
    /// The port or port range, if any.
    pub ports: Option<PortRange>,
}

/// REJECT `--reject-with`, by iptables' names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectWith {
    /// `icmp-net-unreachable`.
    IcmpNetUnreachable,
    /// `icmp-host-unreachable`.
    IcmpHostUnreachable,
    /// `icmp-port-unreachable` (the default in IPv4).
    IcmpPortUnreachable,
    /// `icmp-proto-unreachable`.
    IcmpProtoUnreachable,
    /// `icmp-net-prohibited`.
    IcmpNetProhibited,
    /// `icmp-host-prohibited`.
    IcmpHostProhibited,
    /// `icmp-admin-prohibited`.
    IcmpAdminProhibited,
    /// `tcp-reset`.
    TcpReset,
    /// `icmp6-no-route`.
    Icmp6NoRoute,
    /// `icmp6-adm-prohibited`.
    Icmp6AdmProhibited,
    /// `icmp6-addr-unreachable`.
    Icmp6AddrUnreachable,
    /// `icmp6-port-unreachable` (the default in IPv6).
    Icmp6PortUnreachable,
    /// `icmp6-policy-fail`.
    Icmp6PolicyFail,
    /// `icmp6-reject-route`.
    Icmp6RejectRoute,
}

impl RejectWith {
    /// The name iptables gives it.
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
    /// `--log-prefix`.
    pub prefix: Option<String>,
    /// `--log-level`, as a number.
    pub level: u8,
}

impl LogOpts {
    /// `warning`, iptables' default.
    pub const DEFAULT_LEVEL: u8 = 4;
    /// The kernel's `prefix[30]` holds 29 bytes and the NUL.
    pub const MAX_PREFIX: usize = 29;
}

/// What `-j`/`-g` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IptTarget {
    /// `-j ACCEPT`.
    Accept,
    /// `-j DROP`.
    Drop,
    /// `-j RETURN`.
    Return,
    /// `-j CHAIN`.
    Jump(String),
    /// `-g CHAIN`.
    Goto(String),
    /// `-j DNAT --to-destination`.
    Dnat(NatRange),
    /// `-j SNAT --to-source`.
    Snat(NatRange),
    /// `-j MASQUERADE [--to-ports]`.
    Masquerade(Option<PortRange>),
    /// `-j REDIRECT [--to-ports]`.
    Redirect(Option<PortRange>),
    /// `-j REJECT [--reject-with]`.
    Reject(RejectWith),
    /// `-j LOG` with its options.
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
    /// `-s`.
    pub src: Option<Neg<IpNet>>,
    /// `-d`.
    pub dst: Option<Neg<IpNet>>,
    /// `-i`.
    pub in_iface: Option<Neg<Interface>>,
    /// `-o`.
    pub out_iface: Option<Neg<Interface>>,
    /// `-p`; `L4Proto::Other(0)` is never stored (`-p all` means no protocol match).
    pub proto: Option<Neg<L4Proto>>,
    /// The `-m` modules (and the tcp/udp one `-p` loads), in order.
    pub matches: Vec<IptMatch>,
    /// `-j`/`-g`; `None` only counts.
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

    /// Whether `other` is the same rule, counters aside, as `iptables -D`/`-C` compare
    /// (what `a.without_counters() == b.without_counters()` says, without the copies).
    pub fn same_rule(&self, other: &IptRule) -> bool {
        let IptRule {
            src,
            dst,
            in_iface,
            out_iface,
            proto,
            matches,
            target,
            counters: _,
        } = self;
        *src == other.src
            && *dst == other.dst
            && *in_iface == other.in_iface
            && *out_iface == other.out_iface
            && *proto == other.proto
            && *target == other.target
            && *matches == other.matches
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
