//! The map layout of the NAT-host operations: every forward is one element of a DNAT map
//! in a table of xtnl's own, consulted by one rule, so that adding, removing or tearing down
//! forwards costs the kernel the same at 100 forwards as at 100,000 (the chain layout makes
//! every commit re-validate a chain graph as large as the host). See docs/sets-and-maps.md.
//!
//! ```text
//! table ip xtnl_nat {                       # ip6 xtnl_nat alike, with ipv6_addr values
//!   map forwards     { type ifname . inet_proto . inet_service : ipv4_addr . inet_service; counter; }
//!   map forwards_any { type inet_proto . inet_service : ipv4_addr . inet_service; counter; }
//!   chain prerouting { type nat hook prerouting priority -110; policy accept;
//!     dnat ip to iifname . meta l4proto . th dport map @forwards
//!     dnat ip to meta l4proto . th dport map @forwards_any }
//!   chain postrouting { type nat hook postrouting priority 110; policy accept;
//!     # host set-up: oifname PUBLIC ip daddr != PRIVATE-NET masquerade
//!   }
//! }
//! ```
//!
//! Reservation membership is the element's comment: the reservation's name, then (after a
//! space) the forward's own comment. Teardown given the reservation's forwards reads and
//! deletes exactly those elements (O(its forwards)); teardown without them and sweep list
//! the two maps (O(host)). A long-lived caller keeps a [`MapLayout`] handle, whose
//! operations plan from what earlier ones learnt, pinned to the generation it was true at:
//! one round trip each in the steady state (see map_handle.rs).

use crate::model::{BaseChain, ChainPolicy, ChainType, Hook};
use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};

use super::host_setup::HostSetup;
use super::spec::{Forward, ForwardKey, ForwardProtocol};
use super::{OperationResult, Outcome};
use crate::error::{Error, Result};
use crate::model::{Action, Dir, Family, Interface, Match, Rule};
use crate::nft::set::{DataType, Field, MapData, SetOp, SetSpec, encode};
use crate::nft::set_rules::dnat_map;
use crate::nft::{
    ChainSpec, EncodedRule, Op, Reader, RulePosition, Session, TableRef, Transaction,
};
use crate::wire::set::{ElemData, ElemRepr};

/// The table of the map layout (in family ip and ip6).
pub const TABLE: &str = "xtnl_nat";
/// Forwards that name their in-interface.
/// (`fwd` would be shorter, but it is a keyword of nft's grammar: `nft list map ip xtnl_nat
/// fwd` would not parse.)
pub const FWD_MAP: &str = "forwards";
/// Forwards on any interface.
pub const FWD_ANY_MAP: &str = "forwards_any";
/// The DNAT chain of the layout (in [`TABLE`]), hooked at prerouting.
pub const PREROUTING: &str = "prerouting";
/// The SNAT (masquerade) chain of the layout (in [`TABLE`]), hooked at postrouting.
pub const POSTROUTING: &str = "postrouting";
/// Before iptables' nat PREROUTING (-100, iptables-nft and iptables-legacy alike): the
/// first nat chain that binds a connection wins, so a forward in the map wins over a DNAT
/// rule of the chain layout for the same connection.
pub const DNAT_PRIORITY: i32 = -110;
/// After iptables' nat POSTROUTING (100).
pub const SNAT_PRIORITY: i32 = 110;

/// Which layout a NAT-host operation works in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Layout {
    /// A chain per reservation, as the agent's `iptables` commands make them.
    #[default]
    Chains,
    /// One DNAT map in xtnl's own table.
    Map,
}

impl Layout {
    /// Parses `chains` or `map`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for anything else.
    pub fn parse(s: &str) -> Result<Layout> {
        match s {
            "chains" => Ok(Layout::Chains),
            "map" => Ok(Layout::Map),
            _ => Err(Error::InvalidInput(format!(
                "layout {s:?} is not chains or map"
            ))),
        }
    }
    /// The name `--layout` takes (`chains`, `map`).
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Chains => "chains",
            Layout::Map => "map",
        }
    }
}

/// A NAT-host operation in the map layout. Every kind is idempotent.
///
/// Not one type with [`super::Operation`]: the map layout has one table of its own and no
/// chain or jump per reservation, so a reservation is a name and a teardown may list the
/// forwards it removes; the chain layout's operations name a table, chains and a jump. A
/// caller holding `Operation`s passes them to [`MapLayout::transact_operations`], which
/// converts them here ([`MapOp::from_operation`]). See docs/architecture.md, "The change
/// vocabularies".
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MapOp {
    /// Ensure the layout and each forward of the reservation.
    Setup {
        /// The reservation's name (the chain name it would have in the chain layout).
        reservation: String,
        /// The forwards it must have (others it has are left).
        forwards: Vec<Forward>,
    },
    /// Add one forward to a reservation.
    ForwardAdd {
        /// The reservation's name (the chain name it would have in the chain layout).
        reservation: String,
        /// The forward to add (replacing one with the same key that goes elsewhere).
        forward: Forward,
    },
    /// Remove the reservation's forward holding `key` (only if it goes to `to`, when given).
    ForwardRemove {
        /// The reservation's name (the chain name it would have in the chain layout).
        reservation: String,
        /// Which forward: protocol, public port and interface.
        key: ForwardKey,
        /// Remove it only if it goes there; whatever it goes to when `None`.
        to: Option<SocketAddr>,
    },
    /// Remove the reservation's forwards: these (O(them)), or every one (lists the maps).
    Teardown {
        /// The reservation's name (the chain name it would have in the chain layout).
        reservation: String,
        /// These forwards only, or every forward of the reservation when `None`.
        forwards: Option<Vec<ForwardKey>>,
    },
    /// Remove the forwards of every reservation named `prefix...` not in `keep`.
    Sweep {
        /// Reservations named `PREFIX...` are swept.
        prefix: String,
        /// Reservations kept whatever their name.
        keep: BTreeSet<String>,
    },
    /// The layout and the host's masquerade.
    HostSetup(HostSetup),
}

impl MapOp {
    /// The name `xtnl apply` uses for this kind (as [`Operation::kind`](super::Operation::kind)).
    pub fn kind(&self) -> &'static str {
        match self {
            MapOp::Setup { .. } => "reservation_setup",
            MapOp::ForwardAdd { .. } => "forward_add",
            MapOp::ForwardRemove { .. } => "forward_remove",
            MapOp::Teardown { .. } => "teardown",
            MapOp::Sweep { .. } => "sweep",
            MapOp::HostSetup(_) => "host_setup",
        }
    }

    /// The map-layout form of a NAT-host operation (the chain name is the reservation's).
    pub fn from_operation(op: &super::Operation) -> Result<MapOp> {
        use super::Operation as O;
        // The layout's table is its own: a table named for the chain layout is not silently
        // dropped.
        let table = match op {
            O::ReservationSetup(r) => Some(&r.table),
            O::ForwardAdd { table, .. }
            | O::ForwardRemove { table, .. }
            | O::Teardown { table, .. }
            | O::Sweep { table, .. } => Some(table),
            _ => None,
        };
        if let Some(t) = table.filter(|t| t.as_str() != "nat") {
            return Err(Error::InvalidInput(format!(
                "table {t} does not apply to the map layout: its table is {TABLE}"
            )));
        }
        Ok(match op {
            O::ReservationSetup(r) => MapOp::Setup {
                reservation: r.chain.clone(),
                forwards: r.forwards.clone(),
            },
            O::ForwardAdd { chain, forward, .. } => MapOp::ForwardAdd {
                reservation: chain.clone(),
                forward: forward.clone(),
            },
            O::ForwardRemove { chain, key, to, .. } => MapOp::ForwardRemove {
                reservation: chain.clone(),
                key: key.clone(),
                to: *to,
            },
            O::Teardown { chain, .. } => MapOp::Teardown {
                reservation: chain.clone(),
                forwards: None,
            },
            O::Sweep { prefix, keep, .. } => MapOp::Sweep {
                prefix: prefix.clone(),
                keep: keep.clone(),
            },
            O::HostSetup(h) => MapOp::HostSetup(h.clone()),
            other => {
                return Err(Error::InvalidInput(format!(
                    "{} has no map-layout form (the map layout covers reservation_setup, \
                     forward_add, forward_remove, teardown, sweep and host_setup)",
                    other.kind()
                )));
            }
        })
    }

    /// Checks everything that does not need the kernel.
    pub fn validate(&self, family: Family) -> Result<()> {
        let reservation = |r: &str| {
            crate::limits::check_chain_name(
                crate::limits::NameDialect::new_chain(family != Family::Inet),
                "nat",
                r,
            )
        };
        match self {
            MapOp::Setup {
                reservation: r,
                forwards,
            } => {
                reservation(r)?;
                let mut keys = BTreeSet::new();
                for f in forwards {
                    element(family, r, f)?;
                    if !keys.insert(f.key()) {
                        return Err(Error::InvalidInput(format!(
                            "forward {} is given twice",
                            f.key()
                        )));
                    }
                }
                Ok(())
            }
            MapOp::ForwardAdd {
                reservation: r,
                forward,
            } => {
                reservation(r)?;
                element(family, r, forward).map(|_| ())
            }
            MapOp::ForwardRemove { reservation: r, .. } => reservation(r),
            MapOp::Teardown { reservation: r, .. } => reservation(r),
            MapOp::Sweep { prefix, .. } => {
                if prefix.is_empty() {
                    return Err(Error::InvalidInput(
                        "sweep needs a reservation-name prefix".into(),
                    ));
                }
                Ok(())
            }
            MapOp::HostSetup(h) => {
                if h.family != family {
                    return Err(Error::InvalidInput(
                        "the host set-up's family differs from its transaction's".into(),
                    ));
                }
                h.validate()
            }
        }
    }
}

/// The layout's table in a family.
pub fn table(family: Family) -> TableRef {
    TableRef::new(family, TABLE)
}

fn proto_number(p: ForwardProtocol) -> u8 {
    match p {
        ForwardProtocol::Tcp => 6,
        ForwardProtocol::Udp => 17,
    }
}

/// The map that holds forwards of this key, and the element key.
pub fn element_key(key: &ForwardKey) -> (&'static str, Vec<u8>) {
    let tail = [
        Field::Proto(proto_number(key.protocol)),
        Field::Port(key.public_port),
    ];
    match &key.in_interface {
        Some(i) => {
            let mut f = vec![Field::Ifname(i.clone())];
            f.extend(tail);
            (FWD_MAP, encode(&f))
        }
        None => (FWD_ANY_MAP, encode(&tail)),
    }
}

fn element_data(to: SocketAddr) -> Vec<u8> {
    encode(&[Field::Addr(to.ip()), Field::Port(to.port())])
}

/// The element of a forward of `reservation`, its comment recording the membership.
pub fn element(family: Family, reservation: &str, f: &Forward) -> Result<(&'static str, ElemRepr)> {
    f.validate()?;
    if f.to.is_ipv4() != (family != Family::Ipv6) {
        return Err(Error::InvalidInput(format!(
            "forward {}: {} is not an {} address",
            f.key(),
            f.to.ip(),
            if family == Family::Ipv6 {
                "IPv6"
            } else {
                "IPv4"
            }
        )));
    }
    let (map, key) = element_key(&f.key());
    let comment = match &f.comment {
        Some(c) => format!("{reservation} {c}"),
        None => reservation.to_owned(),
    };
    let e = ElemRepr {
        data: Some(ElemData::Value(element_data(f.to))),
        ..ElemRepr::key(key)
    }
    .with_comment(&comment)
    .filter(|e| e.userdata.as_ref().is_some_and(|u| u.len() <= 256))
    .ok_or_else(|| {
        Error::InvalidInput(format!(
            "forward {}: reservation name and comment take {} bytes; an element comment holds 253",
            f.key(),
            comment.len()
        ))
    })?;
    Ok((map, e))
}

/// A forward as the map holds it: whose it is, where it goes, what it counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapForward {
    /// The reservation the forward belongs to.
    pub reservation: String,
    /// The forward: protocol, public port, interface, destination, comment.
    pub forward: Forward,
    /// Packets the map element counted (its `counter`).
    pub packets: u64,
    /// Bytes the map element counted.
    pub bytes: u64,
}

/// Reads an element of one of the layout's maps; `None` if it is not one xtnl wrote.
pub fn decode_element(map: &str, e: &ElemRepr) -> Option<MapForward> {
    let comment = e.comment()?;
    let (reservation, rest) = match comment.split_once(' ') {
        Some((r, c)) => (r.to_owned(), Some(c.to_owned())),
        None => (comment, None),
    };
    let k = &e.key;
    let (iface, tail) = match map {
        FWD_MAP if k.len() == 24 => {
            let name = &k[..16];
            let end = name.iter().position(|&b| b == 0).unwrap_or(16);
            (
                Some(String::from_utf8(name[..end].to_vec()).ok()?),
                &k[16..],
            )
        }
        FWD_ANY_MAP if k.len() == 8 => (None, &k[..]),
        _ => return None,
    };
    let protocol = match tail[0] {
        6 => ForwardProtocol::Tcp,
        17 => ForwardProtocol::Udp,
        _ => return None,
    };
    let public_port = u16::from_be_bytes([tail[4], tail[5]]);
    let Some(ElemData::Value(d)) = &e.data else {
        return None;
    };
    let to = match d.len() {
        8 => SocketAddr::new(
            IpAddr::from(<[u8; 4]>::try_from(&d[..4]).ok()?),
            u16::from_be_bytes([d[4], d[5]]),
        ),
        20 => SocketAddr::new(
            IpAddr::from(<[u8; 16]>::try_from(&d[..16]).ok()?),
            u16::from_be_bytes([d[16], d[17]]),
        ),
        _ => return None,
    };
    let (packets, bytes) = e.counter().unwrap_or((0, 0));
    Some(MapForward {
        reservation,
        forward: Forward {
            protocol,
            public_port,
            to,
            in_interface: iface,
            comment: rest,
        },
        packets,
        bytes,
    })
}

fn map_spec(family: Family, name: &str, with_iface: bool) -> SetSpec {
    let addr = if family == Family::Ipv6 {
        DataType::Ipv6Addr
    } else {
        DataType::Ipv4Addr
    };
    let mut key = Vec::new();
    if with_iface {
        key.push(DataType::Ifname);
    }
    key.extend([DataType::InetProto, DataType::InetService]);
    SetSpec {
        comment: Some("xtnl NAT-host forwards (element comment: reservation)".into()),
        counters: true,
        ..SetSpec::map(
            name,
            key,
            MapData::Values(vec![addr, DataType::InetService]),
        )
    }
}

/// The operations that create the layout: table, maps, chains and the two DNAT rules.
pub fn layout_ops(family: Family) -> Vec<Op> {
    let t = table(family);
    let base = |hook, priority| BaseChain {
        chain_type: ChainType::Nat,
        hook,
        priority,
        policy: ChainPolicy::Accept,
    };
    let pre = t.chain(PREROUTING);
    let rule = |map: &str, iface: bool| Op::AddEncodedRule {
        chain: pre.clone(),
        rule: EncodedRule {
            exprs: dnat_map(family, map, iface),
            userdata: None,
            compat: None,
            sets: Vec::new(),
        },
        position: RulePosition::Append,
    };
    vec![
        Op::EnsureTable(t.clone()),
        Op::Set(SetOp::Ensure {
            table: t.clone(),
            set: map_spec(family, FWD_MAP, true),
        }),
        Op::Set(SetOp::Ensure {
            table: t.clone(),
            set: map_spec(family, FWD_ANY_MAP, false),
        }),
        Op::EnsureChain {
            table: t.clone(),
            chain: ChainSpec::base(PREROUTING, base(Hook::Prerouting, DNAT_PRIORITY)),
        },
        Op::EnsureChain {
            table: t.clone(),
            chain: ChainSpec::base(POSTROUTING, base(Hook::Postrouting, SNAT_PRIORITY)),
        },
        Op::FlushChain(pre.clone()),
        rule(FWD_MAP, true),
        rule(FWD_ANY_MAP, false),
    ]
}

/// Whether the layout is in place: both maps, and the prerouting chain holding exactly the
/// two rules that consult them.
fn layout_present(r: &mut Reader<'_>, family: Family, full_check: bool) -> Result<bool> {
    let t = table(family);
    if r.set(&t, FWD_MAP)?.is_none() {
        return Ok(false);
    }
    if !full_check {
        return Ok(true);
    }
    if r.set(&t, FWD_ANY_MAP)?.is_none() {
        return Ok(false);
    }
    let rules = r.raw_rules(&t, Some(PREROUTING))?;
    let looks_up = |exprs: &[crate::wire::expr::Expr], map: &str| {
        exprs.iter().any(
            |e| matches!(e, crate::wire::expr::Expr::Lookup(l) if l.set == map && l.dreg.is_some()),
        )
    };
    Ok(rules.len() == 2
        && looks_up(&rules[0].exprs, FWD_MAP)
        && looks_up(&rules[1].exprs, FWD_ANY_MAP))
}

/// The host's masquerade: `oifname PUBLIC ip daddr != PRIVATE-NET masquerade`.
fn masquerade_rule(h: &HostSetup) -> Result<Rule> {
    Ok(Rule {
        matches: vec![
            Match::Address {
                dir: Dir::Destination,
                net: h.private_network,
                negated: true,
            },
            Match::OutInterface {
                name: Interface::new(h.public_interface.clone())?,
                negated: false,
            },
        ],
        counter: None,
        action: Some(Action::Masquerade { ports: None }),
        comment: Some(format!(
            "{}change IP of outbound {} packets to NAT host IP address {}",
            h.comment_prefix, h.public_interface, h.public_address
        )),
    })
}

#[path = "map_handle.rs"]
mod handle;
#[path = "map_migrate.rs"]
pub mod migrate;
#[path = "map_plan.rs"]
mod plan;

pub use handle::{MapLayout, MapLayoutStats};
pub use plan::{list_forwards, run_one, transact, transact_operations, transact_ops};

/// Makes sure a session can plan in the layout (for callers holding a [`Session`]).
pub fn ensure_layout(session: &mut Session, family: Family) -> Result<Outcome> {
    let c = session.transact(|r| {
        let mut tx = Transaction::new();
        if !layout_present(r, family, true)? {
            for op in layout_ops(family) {
                tx.push(op);
            }
        }
        Ok((tx, ()))
    })?;
    Ok(if c.ops == 0 {
        Outcome::Unchanged
    } else {
        Outcome::Changed
    })
}

fn result(outcome: Outcome) -> OperationResult {
    OperationResult {
        outcome,
        changes: Vec::new(),
        removed_chains: Vec::new(),
        rule_handles: Vec::new(),
    }
}

#[cfg(test)]
#[path = "map_tests.rs"]
mod tests;
