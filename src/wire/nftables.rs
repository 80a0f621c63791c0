//! nf_tables messages: message types, the `nfgenmsg` family header, and tables, chains, rules
//! and the generation id as typed representations.

use super::WireError;
use super::attr::{AttrWriter, Attrs};
use super::error::ResultExt;
use super::expr::Expr;

pub const NFNL_SUBSYS_NFTABLES: u16 = 10;
pub const NFNL_MSG_BATCH_BEGIN: u16 = 0x10;
pub const NFNL_MSG_BATCH_END: u16 = 0x11;
pub const NFNL_BATCH_GENID: u16 = 1;

/// `enum nf_tables_msg_types`.
pub mod msg {
    pub const NEWTABLE: u8 = 0;
    pub const GETTABLE: u8 = 1;
    pub const DELTABLE: u8 = 2;
    pub const NEWCHAIN: u8 = 3;
    pub const GETCHAIN: u8 = 4;
    pub const DELCHAIN: u8 = 5;
    pub const NEWRULE: u8 = 6;
    pub const GETRULE: u8 = 7;
    pub const DELRULE: u8 = 8;
    pub const NEWSET: u8 = 9;
    pub const NEWSETELEM: u8 = 12;
    pub const GETSETELEM: u8 = 13;
    pub const NEWGEN: u8 = 15;
    pub const GETGEN: u8 = 16;
    /// A rule dump that also zeroes the counters it reports (kernel 6.3+).
    pub const GETRULE_RESET: u8 = 25;
    /// Kernel 6.3+: delete that succeeds when the object is absent.
    pub const DESTROYTABLE: u8 = 26;
    pub const DESTROYCHAIN: u8 = 27;
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
    pub const UNSPEC: u8 = 0;
    pub const INET: u8 = 1;
    pub const IPV4: u8 = 2;
    pub const ARP: u8 = 3;
    pub const NETDEV: u8 = 5;
    pub const BRIDGE: u8 = 7;
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
    pub const FLAGS: u16 = 10;
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

pub const NFTA_LIST_ELEM: u16 = 1;
/// Attributes that dump requests use as filters.
pub const NFTA_CHAIN_TABLE: u16 = chain_attr::TABLE;
pub const NFTA_CHAIN_NAME: u16 = chain_attr::NAME;
pub const NFTA_TABLE_NAME: u16 = table_attr::NAME;
pub const NFTA_RULE_TABLE: u16 = rule_attr::TABLE;
pub const NFTA_RULE_CHAIN: u16 = rule_attr::CHAIN;
pub const NFTA_RULE_HANDLE: u16 = rule_attr::HANDLE;
pub const NFTA_SET_ELEM_LIST_TABLE: u16 = elem_list_attr::TABLE;
pub const NFTA_SET_ELEM_LIST_SET: u16 = elem_list_attr::SET;

/// A table as the kernel reports it, or as a request names it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TableRepr {
    pub family: u8,
    pub name: String,
    pub flags: Option<u32>,
    pub handle: Option<u64>,
    pub use_count: Option<u32>,
}

impl TableRepr {
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
    pub hooknum: u32,
    pub priority: i32,
    pub device: Option<String>,
}

/// A chain as the kernel reports it, or as a request describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChainRepr {
    pub family: u8,
    pub table: String,
    pub name: String,
    pub handle: Option<u64>,
    pub hook: Option<HookRepr>,
    /// `NF_ACCEPT` (1) or `NF_DROP` (0); base chains only.
    pub policy: Option<u32>,
    /// "filter", "nat" or "route"; base chains only.
    pub chain_type: Option<String>,
    pub use_count: Option<u32>,
    pub flags: Option<u32>,
}

impl ChainRepr {
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
    pub family: u8,
    pub table: String,
    pub chain: String,
    pub handle: Option<u64>,
    /// Requests only: the handle to insert before/after.
    pub position: Option<u64>,
    pub exprs: Vec<Expr>,
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

    pub fn new(proto: u8, inverted: bool) -> Self {
        RuleCompat {
            proto: u32::from(proto),
            flags: if inverted { Self::F_INV } else { 0 },
        }
    }

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

    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.strz(rule_attr::TABLE, &self.table);
        w.strz(rule_attr::CHAIN, &self.chain);
        if let Some(h) = self.handle {
            w.u64_be(rule_attr::HANDLE, h);
        }
        if let Some(p) = self.position {
            w.u64_be(rule_attr::POSITION, p);
        }
        if !self.exprs.is_empty() {
            w.nested(rule_attr::EXPRESSIONS, |w| {
                for e in &self.exprs {
                    w.nested(NFTA_LIST_ELEM, |w| e.emit(w));
                }
            });
        }
        if let Some(c) = &self.compat {
            c.emit(w);
        }
        if let Some(u) = &self.userdata {
            w.bytes(rule_attr::USERDATA, u);
        }
    }
}

mod set_attr {
    pub const TABLE: u16 = 1;
    pub const NAME: u16 = 2;
    pub const FLAGS: u16 = 3;
    pub const KEY_TYPE: u16 = 4;
    pub const KEY_LEN: u16 = 5;
    pub const DESC: u16 = 9;
    pub const DESC_SIZE: u16 = 1;
    pub const ID: u16 = 10;
}

mod elem_list_attr {
    pub const TABLE: u16 = 1;
    pub const SET: u16 = 2;
    pub const ELEMENTS: u16 = 3;
    pub const SET_ID: u16 = 4;
}

mod elem_attr {
    pub const KEY: u16 = 1;
    pub const FLAGS: u16 = 3;
}

/// A set to create (anonymous sets are what nft's `{ ... }` literals are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetRepr {
    pub table: String,
    /// `__set%d` for an anonymous set: the kernel picks the number.
    pub name: String,
    pub flags: u32,
    pub key_type: u32,
    pub key_len: u32,
    pub id: u32,
    pub size: u32,
}

impl SetRepr {
    pub const F_ANONYMOUS: u32 = 1;
    pub const F_CONSTANT: u32 = 2;
    pub const F_INTERVAL: u32 = 4;
    /// nft's datatype number for `inet_service` (ports), which nft needs to print the set.
    pub const KEY_INET_SERVICE: u32 = 13;

    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.strz(set_attr::TABLE, &self.table)
            .strz(set_attr::NAME, &self.name)
            .u32_be(set_attr::FLAGS, self.flags)
            .u32_be(set_attr::KEY_TYPE, self.key_type)
            .u32_be(set_attr::KEY_LEN, self.key_len)
            .nested(set_attr::DESC, |w| {
                w.u32_be(set_attr::DESC_SIZE, self.size);
            })
            .u32_be(set_attr::ID, self.id);
    }
}

/// One element: its key and `NFT_SET_ELEM_*` flags (1: the end of an interval).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetElem {
    pub key: Vec<u8>,
    pub flags: u32,
}

impl SetElem {
    pub const F_INTERVAL_END: u32 = 1;
}

/// Elements of a set: to add (naming a set of this batch by id), or as a dump lists them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SetElemsRepr {
    pub table: String,
    pub set: String,
    pub set_id: Option<u32>,
    pub elements: Vec<SetElem>,
}

impl SetElemsRepr {
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.strz(elem_list_attr::TABLE, &self.table)
            .strz(elem_list_attr::SET, &self.set);
        if let Some(id) = self.set_id {
            w.u32_be(elem_list_attr::SET_ID, id);
        }
        w.nested(elem_list_attr::ELEMENTS, |w| {
            for e in &self.elements {
                w.nested(NFTA_LIST_ELEM, |w| {
                    w.nested(elem_attr::KEY, |w| {
                        w.bytes(1, &e.key);
                    });
                    if e.flags != 0 {
                        w.u32_be(elem_attr::FLAGS, e.flags);
                    }
                });
            }
        });
    }

    pub fn parse(attrs: &[u8]) -> Result<Self, WireError> {
        let mut r = SetElemsRepr::default();
        for a in Attrs::new(attrs) {
            let a = a.ctx("set elements")?;
            match a.ty {
                elem_list_attr::TABLE => r.table = a.string("NFTA_SET_ELEM_LIST_TABLE")?,
                elem_list_attr::SET => r.set = a.string("NFTA_SET_ELEM_LIST_SET")?,
                elem_list_attr::SET_ID => r.set_id = Some(a.u32_be("NFTA_SET_ELEM_LIST_SET_ID")?),
                elem_list_attr::ELEMENTS => {
                    for e in a.nested() {
                        let e = e.ctx("set element")?;
                        let mut elem = SetElem {
                            key: Vec::new(),
                            flags: 0,
                        };
                        for f in e.nested() {
                            let f = f.ctx("set element")?;
                            match f.ty {
                                elem_attr::KEY => {
                                    for v in f.nested() {
                                        let v = v.ctx("set element key")?;
                                        if v.ty == 1 {
                                            elem.key = v.payload.to_vec();
                                        }
                                    }
                                }
                                elem_attr::FLAGS => elem.flags = f.u32_be("NFTA_SET_ELEM_FLAGS")?,
                                _ => {}
                            }
                        }
                        r.elements.push(elem);
                    }
                }
                _ => {}
            }
        }
        Ok(r)
    }
}

/// The ruleset generation (`NFT_MSG_NEWGEN` reply to `GETGEN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenRepr {
    pub id: u32,
}

impl GenRepr {
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
    pub const RULE_COMMENT: u8 = 0;

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
