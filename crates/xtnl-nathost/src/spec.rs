//! What the NAT-host operations are asked to ensure, and the iptables rules that say it.
//! The rules are written exactly as the NAT-host agent writes them with `iptables`, so that
//! rules either of them made are recognised by the other, and `iptables -S` shows them.

use std::net::SocketAddr;

use super::backend::check_chain_name;
use crate::error::{Error, Result};
use crate::ipt::parse::{Command, parse};
use crate::ipt::{IptMatch, IptRule, IptTarget};
use crate::model::{Family, L4Proto};

/// The longest comment iptables' comment match holds (XT_MAX_COMMENT_LEN, 256 with its NUL).
pub const MAX_COMMENT: usize = 255;

/// Transport protocol of a port forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ForwardProtocol {
    /// `-p tcp`.
    Tcp,
    /// `-p udp`.
    Udp,
}

impl ForwardProtocol {
    /// The protocol as iptables names it (`tcp`, `udp`).
    pub fn as_str(self) -> &'static str {
        match self {
            ForwardProtocol::Tcp => "tcp",
            ForwardProtocol::Udp => "udp",
        }
    }
    /// Parses `tcp` or `udp` (any case).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the protocol for anything else.
    pub fn parse(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "tcp" => Ok(ForwardProtocol::Tcp),
            "udp" => Ok(ForwardProtocol::Udp),
            _ => Err(Error::InvalidInput(format!(
                "protocol {s:?} cannot be forwarded: use tcp or udp"
            ))),
        }
    }
}

/// One public port forwarded to a private address and port (a DNAT rule).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forward {
    /// TCP or UDP (`-p`).
    pub protocol: ForwardProtocol,
    /// The port connections arrive at on the host (`--dport`), 1 to 65535.
    pub public_port: u16,
    /// Where the connections go (`--to-destination ADDR:PORT`).
    pub to: SocketAddr,
    /// The interface the forwarded connections arrive on (`-i`); any when `None`.
    pub in_interface: Option<String>,
    /// The rule's comment (`-m comment`, at most [`MAX_COMMENT`] bytes; the agent's text is
    /// [`Forward::described`]); no comment match when `None`.
    pub comment: Option<String>,
}

/// What identifies a forward in its chain: two DNAT rules for the same public port and
/// interface would shadow each other, so a chain holds at most one per key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ForwardKey {
    /// TCP or UDP (`-p`).
    pub protocol: ForwardProtocol,
    /// The port connections arrive at on the host (`--dport`), 1 to 65535.
    pub public_port: u16,
    /// The interface the forwarded connections arrive on (`-i`); any when `None`.
    pub in_interface: Option<String>,
}

impl std::fmt::Display for ForwardKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(i) = &self.in_interface {
            write!(f, "{i}:")?;
        }
        write!(f, "{}/{}", self.protocol.as_str(), self.public_port)
    }
}

impl Forward {
    /// The key that identifies this forward in its chain.
    pub fn key(&self) -> ForwardKey {
        ForwardKey {
            protocol: self.protocol,
            public_port: self.public_port,
            in_interface: self.in_interface.clone(),
        }
    }

    /// The comment the NAT-host agent gives a forward: `PREFIXforward eth1:tcp/50443 -->
    /// 10.1.2.3:3389` (its prefix is `VCL: `).
    pub fn described(&self, prefix: &str) -> String {
        format!(
            "{prefix}forward {}:{}/{} --> {}",
            self.in_interface.as_deref().unwrap_or("any"),
            self.protocol.as_str(),
            self.public_port,
            self.to
        )
    }

    /// Parses `[IFACE:]PROTO/PORT=ADDR:PORT` (an IPv6 address in brackets: `[2001:db8::1]:22`).
    pub fn parse_spec(spec: &str) -> Result<Forward> {
        let (key, to) = spec.split_once('=').ok_or_else(|| {
            Error::InvalidInput(format!(
                "forward {spec:?}: expected [IFACE:]PROTO/PORT=ADDR:PORT, e.g. eth1:tcp/50443=192.0.2.10:3389"
            ))
        })?;
        let key = ForwardKey::parse_spec(key)?;
        let to: SocketAddr = to.parse().map_err(|_| {
            Error::InvalidInput(format!(
                "forward {spec:?}: {to:?} is not ADDR:PORT (an IPv6 address goes in brackets)"
            ))
        })?;
        let f = Forward {
            protocol: key.protocol,
            public_port: key.public_port,
            to,
            in_interface: key.in_interface,
            comment: None,
        };
        f.validate()?;
        Ok(f)
    }

    /// Checks the forward can be written as iptables would: ports not 0, a valid interface
    /// name, a comment that fits.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the forward and what is wrong.
    pub fn validate(&self) -> Result<()> {
        if self.public_port == 0 {
            return Err(Error::InvalidInput(format!(
                "forward {}: public port 0 is not a port",
                self.key()
            )));
        }
        if self.to.port() == 0 {
            return Err(Error::InvalidInput(format!(
                "forward {}: destination port 0 is not a port",
                self.key()
            )));
        }
        if let Some(i) = &self.in_interface {
            crate::model::Interface::new(i.clone())?;
        }
        if let Some(c) = &self.comment {
            check_comment(c)?;
        }
        Ok(())
    }

    /// The DNAT rule, as the agent writes it:
    /// `-i eth1 -p tcp -m comment --comment "..." -m tcp --dport 50443 -j DNAT --to-destination 10.1.2.3:3389`.
    pub fn rule(&self, family: Family) -> Result<IptRule> {
        self.validate()?;
        let to_family = if self.to.is_ipv4() {
            Family::Ipv4
        } else {
            Family::Ipv6
        };
        if to_family != family {
            return Err(Error::InvalidInput(format!(
                "forward {}: destination {} is not an {} address",
                self.key(),
                self.to,
                family_word(family)
            )));
        }
        let mut argv: Vec<String> = Vec::new();
        if let Some(i) = &self.in_interface {
            argv.extend(["-i".into(), i.clone()]);
        }
        argv.extend(["-p".into(), self.protocol.as_str().into()]);
        if let Some(c) = &self.comment {
            argv.extend(["-m".into(), "comment".into(), "--comment".into(), c.clone()]);
        }
        argv.extend([
            "-m".into(),
            self.protocol.as_str().into(),
            "--dport".into(),
            self.public_port.to_string(),
            "-j".into(),
            "DNAT".into(),
            "--to-destination".into(),
            self.to.to_string(),
        ]);
        rule_from_words(family, "nat", &argv)
    }
}

impl ForwardKey {
    /// Parses `[IFACE:]PROTO/PORT`.
    pub fn parse_spec(spec: &str) -> Result<ForwardKey> {
        let (iface, rest) = match spec.rsplit_once(':') {
            Some((i, r)) => (Some(i.to_string()), r),
            None => (None, spec),
        };
        let (proto, port) = rest.split_once('/').ok_or_else(|| {
            Error::InvalidInput(format!(
                "forward {spec:?}: expected [IFACE:]PROTO/PORT, e.g. eth1:tcp/50443"
            ))
        })?;
        let protocol = ForwardProtocol::parse(proto)?;
        let public_port = parse_port(port)
            .map_err(|m| Error::InvalidInput(format!("forward {spec:?}: public {m}")))?;
        if let Some(i) = &iface {
            crate::model::Interface::new(i.clone())?;
        }
        Ok(ForwardKey {
            protocol,
            public_port,
            in_interface: iface,
        })
    }

    /// The key of a rule, if it is a forward: `-p tcp|udp ... --dport N -j DNAT`.
    pub fn of_rule(rule: &IptRule) -> Option<ForwardKey> {
        if !matches!(rule.target, Some(IptTarget::Dnat(_))) {
            return None;
        }
        let proto = rule.proto.as_ref().filter(|p| !p.negated)?;
        let protocol = match proto.value {
            L4Proto::Tcp => ForwardProtocol::Tcp,
            L4Proto::Udp => ForwardProtocol::Udp,
            _ => return None,
        };
        let port = rule.matches.iter().find_map(|m| match m {
            IptMatch::Tcp(p) | IptMatch::Udp(p) => p
                .dport
                .as_ref()
                .filter(|d| !d.negated && d.value.is_single())
                .map(|d| d.value.first()),
            _ => None,
        })?;
        let in_interface = match &rule.in_iface {
            None => None,
            Some(i) if !i.negated => Some(i.value.as_str().to_string()),
            Some(_) => return None,
        };
        Some(ForwardKey {
            protocol,
            public_port: port,
            in_interface,
        })
    }
}

fn parse_port(s: &str) -> std::result::Result<u16, String> {
    match s.parse::<u32>() {
        Ok(0) => Err("port 0 is not a port".into()),
        Ok(p) if p > 65535 => Err(format!("port {p} is out of range (1-65535)")),
        Ok(p) => Ok(p as u16),
        Err(_) => Err(format!("port {s:?} is not a number")),
    }
}

pub(crate) fn family_word(f: Family) -> &'static str {
    match f {
        Family::Ipv6 => "IPv6",
        _ => "IPv4",
    }
}

pub(crate) fn check_comment(c: &str) -> Result<()> {
    if c.len() > MAX_COMMENT {
        return Err(Error::InvalidInput(format!(
            "comment of {} bytes is too long: iptables' comment match holds at most {MAX_COMMENT}",
            c.len()
        )));
    }
    if c.contains('\0') {
        return Err(Error::InvalidInput("comment holds a NUL byte".into()));
    }
    Ok(())
}

/// A reservation: its chain, the jump to it from the entry chain, and its port forwards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// IPv4 (`iptables`) or IPv6 (`ip6tables`).
    pub family: Family,
    /// The table's name (`nat` for the agent).
    pub table: String,
    /// The chain's name.
    pub chain: String,
    /// The chain that jumps to the reservation chain (PREROUTING).
    pub entry: String,
    /// The comment on the jump rule (`-m comment`); none when `None`.
    pub jump_comment: Option<String>,
    /// The port forwards (DNAT rules) the reservation chain holds.
    pub forwards: Vec<Forward>,
}

impl Reservation {
    /// A reservation in `nat`, entered from PREROUTING, with no jump comment or forwards.
    pub fn new(chain: impl Into<String>) -> Self {
        Reservation {
            family: Family::Ipv4,
            table: "nat".into(),
            chain: chain.into(),
            entry: "PREROUTING".into(),
            jump_comment: None,
            forwards: Vec::new(),
        }
    }

    /// The agent's jump comment: `PREFIXjump from nat table PREROUTING chain to reservation
    /// NAT chain vcld-5205` (its prefix is `VCL: `).
    pub fn described_jump(&self, prefix: &str) -> String {
        format!(
            "{prefix}jump from {} table {} chain to reservation NAT chain {}",
            self.table, self.entry, self.chain
        )
    }

    /// Checks the names (chain, entry chain, table), that the chain is not its own entry, and
    /// every forward.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming what is wrong.
    pub fn validate(&self) -> Result<()> {
        check_chain_name(&self.table, &self.chain)?;
        check_chain_name(&self.table, &self.entry)?;
        if self.chain == self.entry {
            return Err(Error::InvalidInput(format!(
                "reservation chain {} cannot be its own entry chain",
                self.chain
            )));
        }
        if crate::ipt::tables::builtin(&self.table, &self.chain).is_some() {
            return Err(Error::InvalidInput(format!(
                "{} is a built-in chain of table {}, not a reservation chain",
                self.chain, self.table
            )));
        }
        if let Some(c) = &self.jump_comment {
            check_comment(c)?;
        }
        let mut keys: Vec<ForwardKey> = self.forwards.iter().map(Forward::key).collect();
        keys.sort();
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::InvalidInput(format!(
                "forward {} is given twice",
                w[0]
            )));
        }
        for f in &self.forwards {
            f.rule(self.family)?;
        }
        Ok(())
    }

    /// `-m comment --comment "..." -j CHAIN`, as the agent writes it.
    pub fn jump_rule(&self) -> Result<IptRule> {
        jump_rule(
            self.family,
            &self.table,
            &self.chain,
            self.jump_comment.as_deref(),
        )
    }
}

pub(crate) fn jump_rule(
    family: Family,
    table: &str,
    chain: &str,
    comment: Option<&str>,
) -> Result<IptRule> {
    let mut argv: Vec<String> = Vec::new();
    if let Some(c) = comment {
        argv.extend(["-m".into(), "comment".into(), "--comment".into(), c.into()]);
    }
    argv.extend(["-j".into(), chain.into()]);
    rule_from_words(family, table, &argv)
}

/// Parses a rule written in iptables words (what follows `-A CHAIN`).
pub fn rule_from_words(family: Family, table: &str, words: &[String]) -> Result<IptRule> {
    let mut argv: Vec<String> = vec!["-t".into(), table.into(), "-A".into(), "X".into()];
    argv.extend(words.iter().cloned());
    match parse(&argv, family)?.command {
        Command::Append { rule, .. } => Ok(rule),
        Command::Expanded(_) => Err(Error::InvalidInput(format!(
            "one rule expected, but several addresses make several: {}",
            words.join(" ")
        ))),
        _ => Err(Error::InvalidInput(format!(
            "not a rule: {}",
            words.join(" ")
        ))),
    }
}
