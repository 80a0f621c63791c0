//! nf_tables messages: message types, the `nfgenmsg` family header, and tables, chains, rules
//! and the generation id as typed representations.

use super::WireError;
use super::attr::{AttrWriter, Attrs};
use super::error::ResultExt;
use super::expr::Expr;

/// `NFNL_SUBSYS_NFTABLES`: the nfnetlink subsystem id in the high byte of an nf_tables message type.
pub const NFNL_SUBSYS_NFTABLES: u16 = 10;
/// `NFNL_MSG_BATCH_BEGIN`: the message that opens a batch (its `res_id` names the subsystem).
pub const NFNL_MSG_BATCH_BEGIN: u16 = 0x10;
/// `NFNL_MSG_BATCH_END`: the message that commits a batch.
pub const NFNL_MSG_BATCH_END: u16 = 0x11;
/// `NFNL_BATCH_GENID`: the batch-begin attribute carrying the generation id the batch was
/// planned against; the kernel refuses the batch with ERESTART if the ruleset moved on.
pub const NFNL_BATCH_GENID: u16 = 1;

/// `enum nf_tables_msg_types`.
pub mod msg {
    /// `NFT_MSG_NEWTABLE`: create (or with `NLM_F_EXCL` exclusively create) a table; also a dump's reply.
    pub const NEWTABLE: u8 = 0;
    /// `NFT_MSG_GETTABLE`: read one table, or dump them all.
    pub const GETTABLE: u8 = 1;
    /// `NFT_MSG_DELTABLE`: delete a table (ENOENT if absent).
    pub const DELTABLE: u8 = 2;
    /// `NFT_MSG_NEWCHAIN`: create a chain, or update a base chain's policy; also a dump's reply.
    pub const NEWCHAIN: u8 = 3;
    /// `NFT_MSG_GETCHAIN`: read one chain, or dump them.
    pub const GETCHAIN: u8 = 4;
    /// `NFT_MSG_DELCHAIN`: delete a chain (EBUSY while it holds rules or is jumped to).
    pub const DELCHAIN: u8 = 5;
    /// `NFT_MSG_NEWRULE`: append, insert or replace a rule; also a dump's reply.
    pub const NEWRULE: u8 = 6;
    /// `NFT_MSG_GETRULE`: read one rule by handle, or dump a table's or a chain's rules.
    pub const GETRULE: u8 = 7;
    /// `NFT_MSG_DELRULE`: delete a rule by handle, or flush a chain (no handle).
    pub const DELRULE: u8 = 8;
    /// `NFT_MSG_NEWSET`: create a set (anonymous or named); also a dump's reply.
    pub const NEWSET: u8 = 9;
    /// `NFT_MSG_NEWSETELEM`: add elements to a set; also a dump's reply.
    pub const NEWSETELEM: u8 = 12;
    /// `NFT_MSG_GETSETELEM`: dump a set's elements.
    pub const GETSETELEM: u8 = 13;
    /// `NFT_MSG_NEWGEN`: the generation id, the reply to `GETGEN` (and the event after each commit).
    pub const NEWGEN: u8 = 15;
    /// `NFT_MSG_GETGEN`: ask for the ruleset's current generation id.
    pub const GETGEN: u8 = 16;
    /// A rule dump that also zeroes the counters it reports (kernel 6.3+).
    pub const GETRULE_RESET: u8 = 25;
    /// Kernel 6.3+: delete that succeeds when the object is absent.
    pub const DESTROYTABLE: u8 = 26;
    /// `NFT_MSG_DESTROYCHAIN` (kernel 6.3+): delete a chain, succeeding if it is absent.
    pub const DESTROYCHAIN: u8 = 27;
    /// `NFT_MSG_DESTROYRULE` (kernel 6.3+): delete a rule, succeeding if it is absent.
    pub const DESTROYRULE: u8 = 28;
}

/// The netlink message type of an nf_tables message.
pub const fn nft_type(m: u8) -> u16 {
    (NFNL_SUBSYS_NFTABLES << 8) | m as u16
}

/// Splits a netlink type into the nf_tables message, if it is one.
pub const fn nft_msg_of(ty: u16) -> Option<u8> {
    if ty >> 8 == NFNL_SUBSYS_NFTABLES {
        Some((ty & 0xff) as u8)
    } else {
        None
    }
}

/// Protocol families as nf_tables uses them (`NFPROTO_*`).
pub mod nfproto {
    /// `NFPROTO_UNSPEC`: no family (a dump across every family).
    pub const UNSPEC: u8 = 0;
    /// `NFPROTO_INET`: the `inet` family, IPv4 and IPv6 in one table.
    pub const INET: u8 = 1;
    /// `NFPROTO_IPV4`: `ip` tables (iptables' family).
    pub const IPV4: u8 = 2;
    /// `NFPROTO_ARP`: `arp` tables.
    pub const ARP: u8 = 3;
    /// `NFPROTO_NETDEV`: `netdev` tables (ingress/egress of one device).
    pub const NETDEV: u8 = 5;
    /// `NFPROTO_BRIDGE`: `bridge` tables.
    pub const BRIDGE: u8 = 7;
    /// `NFPROTO_IPV6`: `ip6` tables (ip6tables' family).
    pub const IPV6: u8 = 10;
}

/// `struct nfgenmsg`: family, version, resource id (big endian).
pub fn nfgenmsg(family: u8, res_id: u16) -> [u8; 4] {
    let r = res_id.to_be_bytes();
    [family, 0, r[0], r[1]]
}

/// Parses the `nfgenmsg` at the start of an nf_tables message payload.
pub fn split_nfgenmsg(payload: &[u8]) -> Result<(u8, &[u8]), WireError> {
    if payload.len() < 4 {
        return Err(WireError::truncated(4, payload.len()).within("nfgenmsg"));
    }
    Ok((payload[0], &payload[4..]))
}

mod table_attr {
    pub const NAME: u16 = 1;
    pub const FLAGS: u16 = 2;
    pub const USE: u16 = 3;
    pub const HANDLE: u16 = 4;
}

mod chain_attr {
    pub const TABLE: u16 = 1;
    pub const HANDLE: u16 = 2;
    pub const NAME: u16 = 3;
    pub const HOOK: u16 = 4;
    pub const POLICY: u16 = 5;
    pub const USE: u16 = 6;
    pub const TYPE: u16 = 7;
    pub const COUNTERS: u16 = 8;
    pub const FLAGS: u16 = 10;
}

/// `NFTA_COUNTER_*`: the nested attributes of a base chain's `NFTA_CHAIN_COUNTERS`.
mod counter_attr {
    pub const BYTES: u16 = 1;
    pub const PACKETS: u16 = 2;
}

mod hook_attr {
    pub const HOOKNUM: u16 = 1;
    pub const PRIORITY: u16 = 2;
    pub const DEV: u16 = 3;
}

mod rule_attr {
    pub const TABLE: u16 = 1;
    pub const CHAIN: u16 = 2;
    pub const HANDLE: u16 = 3;
    pub const EXPRESSIONS: u16 = 4;
    pub const COMPAT: u16 = 5;
    pub const POSITION: u16 = 6;
    pub const USERDATA: u16 = 7;
}

mod rule_compat_attr {
    pub const PROTO: u16 = 1;
    pub const FLAGS: u16 = 2;
}

mod gen_attr {
    pub const ID: u16 = 1;
}

// The anonymous sets of iptables-nft's encodings (split off to keep this file small).
#[path = "nftables_set.rs"]
mod set;
use set::elem_list_attr;
pub use set::{SetElem, SetElemsRepr, SetRepr};

/// `NFTA_LIST_ELEM`: the attribute type of each item of a nested list (expressions, set elements).
pub const NFTA_LIST_ELEM: u16 = 1;
/// Attributes that dump requests use as filters.
pub const NFTA_CHAIN_TABLE: u16 = chain_attr::TABLE;
/// `NFTA_CHAIN_NAME`, a chain dump's filter on one chain.
pub const NFTA_CHAIN_NAME: u16 = chain_attr::NAME;
/// `NFTA_TABLE_NAME`, a dump's filter on one table.
pub const NFTA_TABLE_NAME: u16 = table_attr::NAME;
/// `NFTA_RULE_TABLE`, a rule dump's filter on one table.
pub const NFTA_RULE_TABLE: u16 = rule_attr::TABLE;
/// `NFTA_RULE_CHAIN`, a rule dump's filter on one chain.
pub const NFTA_RULE_CHAIN: u16 = rule_attr::CHAIN;
/// `NFTA_RULE_HANDLE`, a rule read's handle.
pub const NFTA_RULE_HANDLE: u16 = rule_attr::HANDLE;
/// `NFTA_SET_ELEM_LIST_TABLE`, an element dump's table.
pub const NFTA_SET_ELEM_LIST_TABLE: u16 = elem_list_attr::TABLE;
/// `NFTA_SET_ELEM_LIST_SET`, an element dump's set.
pub const NFTA_SET_ELEM_LIST_SET: u16 = elem_list_attr::SET;

/// A table as the kernel reports it, or as a request names it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TableRepr {
    /// The `nfgenmsg` family (see [`nfproto`]).
    pub family: u8,
    /// `NFTA_TABLE_NAME`.
    pub name: String,
    /// `NFTA_TABLE_FLAGS` (`NFT_TABLE_F_DORMANT`, ...), when present.
    pub flags: Option<u32>,
    /// `NFTA_TABLE_HANDLE`, the kernel's id of the table (reported, never sent).
    pub handle: Option<u64>,
    /// `NFTA_TABLE_USE`: how many chains (and other objects) the table holds.
    pub use_count: Option<u32>,
}

impl TableRepr {
    /// Decodes a table message's attributes (after the `nfgenmsg` header).
    pub fn parse(family: u8, attrs: &[u8]) -> Result<Self, WireError> {
        let mut t = TableRepr {
            family,
            ..Default::default()
        };
        let mut name = None;
        for a in Attrs::new(attrs) {
            let a = a.ctx("table")?;
            match a.ty {
                table_attr::NAME => name = Some(a.string("NFTA_TABLE_NAME")?),
                table_attr::FLAGS => t.flags = Some(a.u32_be("NFTA_TABLE_FLAGS")?),
                table_attr::USE => t.use_count = Some(a.u32_be("NFTA_TABLE_USE")?),
                table_attr::HANDLE => t.handle = Some(a.u64_be("NFTA_TABLE_HANDLE")?),
                _ => {}
            }
        }
        t.name = name.ok_or_else(|| WireError::missing("NFTA_TABLE_NAME").within("table"))?;
        Ok(t)
    }

    /// Encodes the table's name and, when set, its flags.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.strz(table_attr::NAME, &self.name);
        if let Some(f) = self.flags {
            w.u32_be(table_attr::FLAGS, f);
        }
        if let Some(h) = self.handle {
            w.u64_be(table_attr::HANDLE, h);
        }
    }
}

/// Where a base chain is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRepr {
    /// `NFTA_HOOK_HOOKNUM`: the netfilter hook (`NF_INET_PRE_ROUTING` = 0 ... `NF_INET_POST_ROUTING` = 4).
    pub hooknum: u32,
    /// `NFTA_HOOK_PRIORITY`: lower runs first (iptables' nat PREROUTING is -100, filter 0).
    pub priority: i32,
    /// `NFTA_HOOK_DEV`: the device, for `netdev` chains only.
    pub device: Option<String>,
}

/// A chain as the kernel reports it, or as a request describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChainRepr {
    /// The `nfgenmsg` family (see [`nfproto`]).
    pub family: u8,
    /// `NFTA_CHAIN_TABLE`: the table's name.
    pub table: String,
    /// `NFTA_CHAIN_NAME`.
    pub name: String,
    /// `NFTA_CHAIN_HANDLE`, the kernel's id of the chain.
    pub handle: Option<u64>,
    /// `NFTA_CHAIN_HOOK`: set for base chains only.
    pub hook: Option<HookRepr>,
    /// `NF_ACCEPT` (1) or `NF_DROP` (0); base chains only.
    pub policy: Option<u32>,
    /// "filter", "nat" or "route"; base chains only.
    pub chain_type: Option<String>,
    /// `NFTA_CHAIN_USE`: how many rules jump or go to this chain.
    pub use_count: Option<u32>,
    /// `NFTA_CHAIN_FLAGS` (`NFT_CHAIN_BASE`, ...), when present.
    pub flags: Option<u32>,
    /// `NFTA_CHAIN_COUNTERS`: a base chain's packets and bytes that met its policy. The
    /// kernel keeps them only for a base chain created or updated with them (iptables-nft
    /// sends them with every policy it sets); a dump reports them only then. In a request,
    /// they replace the chain's counts (both attributes are required).
    pub counters: Option<ChainCounters>,
}

/// A base chain's counters (`NFTA_CHAIN_COUNTERS`, nested `NFTA_COUNTER_PACKETS` and
/// `NFTA_COUNTER_BYTES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChainCounters {
    /// `NFTA_COUNTER_PACKETS`.
    pub packets: u64,
    /// `NFTA_COUNTER_BYTES`.
    pub bytes: u64,
}

impl ChainCounters {
    fn parse(a: &super::attr::Attr<'_>) -> Result<Self, WireError> {
        let (mut packets, mut bytes) = (None, None);
        for c in a.nested() {
            let c = c.ctx("NFTA_CHAIN_COUNTERS")?;
            match c.ty {
                counter_attr::PACKETS => packets = Some(c.u64_be("NFTA_COUNTER_PACKETS")?),
                counter_attr::BYTES => bytes = Some(c.u64_be("NFTA_COUNTER_BYTES")?),
                _ => {}
            }
        }
        // The kernel refuses a request without both, and dumps both.
        Ok(ChainCounters {
            packets: packets.ok_or_else(|| {
                WireError::missing("NFTA_COUNTER_PACKETS").within("NFTA_CHAIN_COUNTERS")
            })?,
            bytes: bytes.ok_or_else(|| {
                WireError::missing("NFTA_COUNTER_BYTES").within("NFTA_CHAIN_COUNTERS")
            })?,
        })
    }

    /// Packets first, then bytes, as libnftnl writes them for iptables-nft.
    fn emit(&self, w: &mut AttrWriter<'_>) {
        w.nested(chain_attr::COUNTERS, |w| {
            w.u64_be(counter_attr::PACKETS, self.packets)
                .u64_be(counter_attr::BYTES, self.bytes);
        });
    }
}

impl ChainRepr {
    /// Decodes a chain message's attributes; a hook without its number or priority is refused.
    pub fn parse(family: u8, attrs: &[u8]) -> Result<Self, WireError> {
        let mut c = ChainRepr {
            family,
            ..Default::default()
        };
        let (mut table, mut name) = (None, None);
        for a in Attrs::new(attrs) {
            let a = a.ctx("chain")?;
            match a.ty {
                chain_attr::TABLE => table = Some(a.string("NFTA_CHAIN_TABLE")?),
                chain_attr::NAME => name = Some(a.string("NFTA_CHAIN_NAME")?),
                chain_attr::HANDLE => c.handle = Some(a.u64_be("NFTA_CHAIN_HANDLE")?),
                chain_attr::POLICY => c.policy = Some(a.u32_be("NFTA_CHAIN_POLICY")?),
                chain_attr::USE => c.use_count = Some(a.u32_be("NFTA_CHAIN_USE")?),
                chain_attr::TYPE => c.chain_type = Some(a.string("NFTA_CHAIN_TYPE")?),
                chain_attr::FLAGS => c.flags = Some(a.u32_be("NFTA_CHAIN_FLAGS")?),
                chain_attr::COUNTERS => c.counters = Some(ChainCounters::parse(&a).ctx("chain")?),
                chain_attr::HOOK => {
                    let (mut num, mut prio, mut dev) = (None, None, None);
                    for h in a.nested() {
                        let h = h.ctx("chain hook")?;
                        match h.ty {
                            hook_attr::HOOKNUM => num = Some(h.u32_be("NFTA_HOOK_HOOKNUM")?),
                            hook_attr::PRIORITY => prio = Some(h.i32_be("NFTA_HOOK_PRIORITY")?),
                            hook_attr::DEV => dev = Some(h.string("NFTA_HOOK_DEV")?),
                            _ => {}
                        }
                    }
                    c.hook = Some(HookRepr {
                        hooknum: num.ok_or_else(|| WireError::missing("NFTA_HOOK_HOOKNUM"))?,
                        priority: prio.ok_or_else(|| WireError::missing("NFTA_HOOK_PRIORITY"))?,
                        device: dev,
                    });
                }
                _ => {}
            }
        }
        c.table = table.ok_or_else(|| WireError::missing("NFTA_CHAIN_TABLE").within("chain"))?;
        c.name = name.ok_or_else(|| WireError::missing("NFTA_CHAIN_NAME").within("chain"))?;
        Ok(c)
    }

    /// Encodes the chain: table, name, then hook, policy, counters, type and flags when set.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.strz(chain_attr::TABLE, &self.table);
        if let Some(h) = self.handle {
            w.u64_be(chain_attr::HANDLE, h);
        }
        if !self.name.is_empty() {
            w.strz(chain_attr::NAME, &self.name);
        }
        if let Some(hook) = &self.hook {
            w.nested(chain_attr::HOOK, |w| {
                w.u32_be(hook_attr::HOOKNUM, hook.hooknum);
                w.i32_be(hook_attr::PRIORITY, hook.priority);
                if let Some(d) = &hook.device {
                    w.strz(hook_attr::DEV, d);
                }
            });
        }
        if let Some(p) = self.policy {
            w.u32_be(chain_attr::POLICY, p);
        }
        if let Some(c) = &self.counters {
            c.emit(w);
        }
        if let Some(t) = &self.chain_type {
            w.strz(chain_attr::TYPE, t);
        }
        if let Some(f) = self.flags {
            w.u32_be(chain_attr::FLAGS, f);
        }
    }
}

/// A rule as the kernel reports it, or as a request describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuleRepr {
    /// The `nfgenmsg` family (see [`nfproto`]).
    pub family: u8,
    /// `NFTA_RULE_TABLE`.
    pub table: String,
    /// `NFTA_RULE_CHAIN`.
    pub chain: String,
    /// `NFTA_RULE_HANDLE`: the kernel's id of the rule; in a request, the rule to replace or delete.
    pub handle: Option<u64>,
    /// Requests only: the handle to insert before/after.
    pub position: Option<u64>,
    /// `NFTA_RULE_EXPRESSIONS`, in the order the kernel evaluates them.
    pub exprs: Vec<Expr>,
    /// `NFTA_RULE_USERDATA`: opaque to the kernel; the comment lives here (see [`udata`]).
    pub userdata: Option<Vec<u8>>,
    /// Requests only (the kernel does not dump it): the layer-4 protocol that xt matches and
    /// targets of this rule see as the `ipt_entry`'s `-p`.
    pub compat: Option<RuleCompat>,
}

/// `NFTA_RULE_COMPAT`. nft_compat fills the `ip.proto`/`IPT_INV_PROTO` that an xt
/// extension's checkentry sees from here, not from the rule's `meta l4proto` match: without
/// it `multiport`, `tcp` and `udp` are refused with EINVAL. iptables-nft sends it for every
/// rule with `-p`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleCompat {
    /// The protocol number (`IPPROTO_TCP` = 6, ...).
    pub proto: u32,
    /// `NFT_RULE_COMPAT_F_*`.
    pub flags: u32,
}

impl RuleCompat {
    /// `! -p proto`.
    pub const F_INV: u32 = 1 << 1;

    /// The compat attribute for `-p proto` (`inverted`: `! -p proto`).
    pub fn new(proto: u8, inverted: bool) -> Self {
        RuleCompat {
            proto: u32::from(proto),
            flags: if inverted { Self::F_INV } else { 0 },
        }
    }

    /// Whether the rule's protocol match is negated (`! -p`).
    pub fn inverted(&self) -> bool {
        self.flags & Self::F_INV != 0
    }

    fn parse(a: &super::attr::Attr<'_>) -> Result<Self, WireError> {
        let (mut proto, mut flags) = (None, None);
        for c in a.nested() {
            let c = c.ctx("NFTA_RULE_COMPAT")?;
            match c.ty {
                rule_compat_attr::PROTO => proto = Some(c.u32_be("NFTA_RULE_COMPAT_PROTO")?),
                rule_compat_attr::FLAGS => flags = Some(c.u32_be("NFTA_RULE_COMPAT_FLAGS")?),
                _ => {}
            }
        }
        // The kernel requires both.
        Ok(RuleCompat {
            proto: proto.ok_or_else(|| {
                WireError::missing("NFTA_RULE_COMPAT_PROTO").within("NFTA_RULE_COMPAT")
            })?,
            flags: flags.ok_or_else(|| {
                WireError::missing("NFTA_RULE_COMPAT_FLAGS").within("NFTA_RULE_COMPAT")
            })?,
        })
    }

    fn emit(&self, w: &mut AttrWriter<'_>) {
        w.nested(rule_attr::COMPAT, |w| {
            w.u32_be(rule_compat_attr::PROTO, self.proto)
                .u32_be(rule_compat_attr::FLAGS, self.flags);
        });
    }
}

impl RuleRepr {
    /// Decodes a rule message's attributes, every expression included.
    pub fn parse(family: u8, attrs: &[u8]) -> Result<Self, WireError> {
        let mut r = RuleRepr {
            family,
            ..Default::default()
        };
        let (mut table, mut chain) = (None, None);
        for a in Attrs::new(attrs) {
            let a = a.ctx("rule")?;
            match a.ty {
                rule_attr::TABLE => table = Some(a.string("NFTA_RULE_TABLE")?),
                rule_attr::CHAIN => chain = Some(a.string("NFTA_RULE_CHAIN")?),
                rule_attr::HANDLE => r.handle = Some(a.u64_be("NFTA_RULE_HANDLE")?),
                rule_attr::POSITION => r.position = Some(a.u64_be("NFTA_RULE_POSITION")?),
                rule_attr::USERDATA => r.userdata = Some(a.payload.to_vec()),
                rule_attr::COMPAT => r.compat = Some(RuleCompat::parse(&a).ctx("rule")?),
                rule_attr::EXPRESSIONS => {
                    // Sized first: a listing parses thousands of rules.
                    r.exprs.reserve_exact(a.nested().count());
                    for (i, e) in a.nested().enumerate() {
                        let e = e.ctx(format_args!("rule expression #{i}"))?;
                        r.exprs.push(
                            Expr::parse(e.payload).ctx(format_args!("rule expression #{i}"))?,
                        );
                    }
                }
                _ => {}
            }
        }
        r.table = table.ok_or_else(|| WireError::missing("NFTA_RULE_TABLE").within("rule"))?;
        r.chain = chain.ok_or_else(|| WireError::missing("NFTA_RULE_CHAIN").within("rule"))?;
        Ok(r)
    }

    /// Encodes the rule: table, chain, handle or position, expressions, userdata, compat.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        RuleRef {
            table: &self.table,
            chain: &self.chain,
            handle: self.handle,
            position: self.position,
            exprs: &self.exprs,
            userdata: self.userdata.as_deref(),
            compat: self.compat,
        }
        .emit(w);
    }
}

/// A rule request made of borrowed parts: what [`RuleRepr::emit`] writes, without a copy of
/// the expressions (a restore of 80,000 rules cloned each rule's just to encode it).
#[derive(Debug, Clone, Copy)]
pub struct RuleRef<'a> {
    /// `NFTA_RULE_TABLE`.
    pub table: &'a str,
    /// `NFTA_RULE_CHAIN`.
    pub chain: &'a str,
    /// `NFTA_RULE_HANDLE`.
    pub handle: Option<u64>,
    /// `NFTA_RULE_POSITION`.
    pub position: Option<u64>,
    /// `NFTA_RULE_EXPRESSIONS`.
    pub exprs: &'a [Expr],
    /// `NFTA_RULE_USERDATA`.
    pub userdata: Option<&'a [u8]>,
    /// `NFTA_RULE_COMPAT`.
    pub compat: Option<RuleCompat>,
}

impl RuleRef<'_> {
    /// Encodes the rule, as [`RuleRepr::emit`].
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.strz(rule_attr::TABLE, self.table);
        w.strz(rule_attr::CHAIN, self.chain);
        if let Some(h) = self.handle {
            w.u64_be(rule_attr::HANDLE, h);
        }
        if let Some(p) = self.position {
            w.u64_be(rule_attr::POSITION, p);
        }
        if !self.exprs.is_empty() {
            w.nested(rule_attr::EXPRESSIONS, |w| {
                for e in self.exprs {
                    w.nested(NFTA_LIST_ELEM, |w| e.emit(w));
                }
            });
        }
        if let Some(c) = &self.compat {
            c.emit(w);
        }
        if let Some(u) = self.userdata {
            w.bytes(rule_attr::USERDATA, u);
        }
    }
}

/// The ruleset generation (`NFT_MSG_NEWGEN` reply to `GETGEN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenRepr {
    /// `NFTA_GEN_ID`: bumped by every commit that changes the ruleset.
    pub id: u32,
}

impl GenRepr {
    /// Decodes `NFTA_GEN_ID` from a `NEWGEN` message.
    pub fn parse(attrs: &[u8]) -> Result<Self, WireError> {
        for a in Attrs::new(attrs) {
            let a = a.ctx("generation")?;
            if a.ty == gen_attr::ID {
                return Ok(GenRepr {
                    id: a.u32_be("NFTA_GEN_ID")?,
                });
            }
        }
        Err(WireError::missing("NFTA_GEN_ID").within("generation"))
    }
}

/// Rule userdata (`libnftnl` udata TLVs: u8 type, u8 length, value). Type 0 is the comment,
/// NUL-terminated, which is what `nft ... comment "x"` writes and iptables-nft reads back.
pub mod udata {
    /// The userdata type of a rule comment (`NFTNL_UDATA_RULE_COMMENT`).
    pub const RULE_COMMENT: u8 = 0;

    /// The comment in a rule's userdata, if there is one (without its NUL).
    pub fn comment(userdata: &[u8]) -> Option<String> {
        let mut rest = userdata;
        while rest.len() >= 2 {
            let (ty, len) = (rest[0], rest[1] as usize);
            let value = rest.get(2..2 + len)?;
            if ty == RULE_COMMENT {
                let s = value.strip_suffix(&[0]).unwrap_or(value);
                return String::from_utf8(s.to_vec()).ok();
            }
            rest = &rest[2 + len..];
        }
        None
    }

    /// Encodes a comment; `None` if it cannot fit in one TLV (255 bytes with its NUL).
    pub fn encode_comment(comment: &str) -> Option<Vec<u8>> {
        let len = u8::try_from(comment.len() + 1).ok()?;
        let mut v = Vec::with_capacity(comment.len() + 3);
        v.push(RULE_COMMENT);
        v.push(len);
        v.extend_from_slice(comment.as_bytes());
        v.push(0);
        Some(v)
    }
}

#[cfg(test)]
#[path = "nftables_tests.rs"]
mod tests;
