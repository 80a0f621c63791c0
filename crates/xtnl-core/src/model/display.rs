//! The model printed in nft's syntax (what `nft list` shows for the same rule), for listings
//! and the demo.

use std::fmt;
use std::net::IpAddr;

use super::{Action, Dir, IpNet, L4Proto, Match, NatTarget, Opaque, RejectKind, Rule};

fn addr_keyword(net: &IpNet) -> &'static str {
    if net.is_ipv4() { "ip" } else { "ip6" }
}

fn op(negated: bool) -> &'static str {
    if negated { "!= " } else { "" }
}

/// `tcp dport`, `udp sport`, or `th dport` without a known protocol.
fn port_key(proto: Option<L4Proto>, dir: Dir) -> String {
    let d = if dir == Dir::Source { "sport" } else { "dport" };
    match proto {
        Some(p) => format!("{p} {d}"),
        None => format!("th {d}"),
    }
}

fn write_net(f: &mut fmt::Formatter<'_>, net: &IpNet) -> fmt::Result {
    if net.is_host() {
        write!(f, "{}", net.addr())
    } else {
        write!(f, "{net}")
    }
}

fn write_nat(f: &mut fmt::Formatter<'_>, kind: &str, t: &NatTarget) -> fmt::Result {
    match (t.addr, t.ports) {
        (IpAddr::V6(a), Some(p)) => write!(f, "{kind} to [{a}]:{p}"),
        (a, Some(p)) => write!(f, "{kind} to {a}:{p}"),
        (a, None) => write!(f, "{kind} to {a}"),
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words_with(&|o, _| format!("<not understood: {o}>")))
    }
}

impl Rule {
    /// The rule in nft's words (its `Display`), each [`Opaque`] part worded by `opaque`,
    /// which is given the layer-4 protocol matched before it (the `Display` prints
    /// `<not understood: ...>`). A listing that can read a backend's opaque parts uses this.
    pub fn words_with(&self, opaque: &dyn Fn(&Opaque, Option<L4Proto>) -> String) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut proto: Option<L4Proto> = None;
        for (i, m) in self.matches.iter().enumerate() {
            match m {
                Match::Protocol { proto: p, negated } => {
                    // nft folds `meta l4proto tcp` into a following `tcp dport`.
                    let folded = !negated
                        && self.matches[i + 1..]
                            .iter()
                            .any(|n| matches!(n, Match::Port { .. } | Match::PortSet { .. }));
                    if !negated {
                        proto = Some(*p);
                    }
                    if !folded {
                        parts.push(format!("meta l4proto {}{p}", op(*negated)));
                    }
                }
                Match::Address { dir, net, negated } => {
                    let d = if *dir == Dir::Source {
                        "saddr"
                    } else {
                        "daddr"
                    };
                    let mut s = format!("{} {d} {}", addr_keyword(net), op(*negated));
                    s.push_str(&DisplayNet(net).to_string());
                    parts.push(s);
                }
                Match::Port {
                    dir,
                    ports,
                    negated,
                } => {
                    parts.push(format!("{} {}{ports}", port_key(proto, *dir), op(*negated)));
                }
                Match::InInterface { name, negated } | Match::OutInterface { name, negated } => {
                    let k = if matches!(m, Match::InInterface { .. }) {
                        "iifname"
                    } else {
                        "oifname"
                    };
                    let (prefix, wildcard) = name.prefix();
                    let star = if wildcard { "*" } else { "" };
                    parts.push(format!("{k} {}\"{prefix}{star}\"", op(*negated)));
                }
                Match::PortSet {
                    dir,
                    ports,
                    negated,
                } => {
                    let list: Vec<String> = ports.iter().map(|x| x.to_string()).collect();
                    parts.push(format!(
                        "{} {}{{ {} }}",
                        port_key(proto, *dir),
                        op(*negated),
                        list.join(", ")
                    ));
                }
                Match::CtState { states, negated } => {
                    parts.push(format!("ct state {}{states}", op(*negated)));
                }
                Match::Opaque(o) => parts.push(opaque(o, proto)),
            }
        }
        if let Some(c) = self.counter {
            parts.push(format!("counter packets {} bytes {}", c.packets, c.bytes));
        }
        match &self.action {
            Some(Action::Opaque(o)) => parts.push(opaque(o, proto)),
            Some(a) => parts.push(a.to_string()),
            None => {}
        }
        if let Some(c) = &self.comment {
            parts.push(format!("comment {c:?}"));
        }
        parts.retain(|p| !p.is_empty());
        parts.join(" ")
    }
}

struct DisplayNet<'a>(&'a IpNet);

impl fmt::Display for DisplayNet<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_net(f, self.0)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Accept => f.write_str("accept"),
            Action::Drop => f.write_str("drop"),
            Action::Return => f.write_str("return"),
            Action::Jump(c) => write!(f, "jump {c}"),
            Action::Goto(c) => write!(f, "goto {c}"),
            Action::Dnat(t) => write_nat(f, "dnat", t),
            Action::Snat(t) => write_nat(f, "snat", t),
            Action::Masquerade { ports: None } => f.write_str("masquerade"),
            Action::Masquerade { ports: Some(p) } => write!(f, "masquerade to :{p}"),
            Action::Redirect { ports: None } => f.write_str("redirect"),
            Action::Redirect { ports: Some(p) } => write!(f, "redirect to :{p}"),
            Action::Reject(k) => match k {
                RejectKind::TcpReset => f.write_str("reject with tcp reset"),
                RejectKind::Icmp(3) | RejectKind::Icmpv6(4) | RejectKind::Icmpx(1) => {
                    f.write_str("reject")
                }
                RejectKind::Icmp(c) => write!(f, "reject with icmp {c}"),
                RejectKind::Icmpv6(c) => write!(f, "reject with icmpv6 {c}"),
                RejectKind::Icmpx(c) => write!(f, "reject with icmpx {c}"),
            },
            Action::Log { prefix, level } => {
                f.write_str("log")?;
                if let Some(p) = prefix {
                    write!(f, " prefix {p:?}")?;
                }
                if *level != 4 {
                    write!(f, " level {level}")?;
                }
                Ok(())
            }
            Action::Opaque(o) => write!(f, "<not understood: {o}>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Interface, PortRange};
    use super::*;

    #[test]
    fn prints_like_nft() {
        let r = Rule::new()
            .in_interface(Interface::new("eth1").unwrap())
            .protocol(L4Proto::Tcp)
            .dport(PortRange::single(50443))
            .counted()
            .action(Action::Dnat(NatTarget {
                addr: "192.0.2.3".parse().unwrap(),
                ports: Some(PortRange::single(3389)),
            }))
            .comment("VCL: forward");
        assert_eq!(
            r.to_string(),
            "iifname \"eth1\" tcp dport 50443 counter packets 0 bytes 0 dnat to 192.0.2.3:3389 comment \"VCL: forward\""
        );
        let r = Rule::new()
            .with(Match::Address {
                dir: Dir::Source,
                net: "10.0.0.0/8".parse().unwrap(),
                negated: true,
            })
            .with(Match::OutInterface {
                name: Interface::new("veth+").unwrap(),
                negated: false,
            })
            .action(Action::Masquerade { ports: None });
        assert_eq!(
            r.to_string(),
            "ip saddr != 10.0.0.0/8 oifname \"veth*\" masquerade"
        );
    }
}
