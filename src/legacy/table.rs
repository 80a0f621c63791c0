//! An x_tables table as chains of rules: built from the blob the kernel returns, changed in
//! memory, laid out again as a blob for `IPT_SO_SET_REPLACE`.
//!
//! The layout is the one libiptc writes (and the kernel's initial tables have): for every
//! chain in order, a user chain's head (an ERROR target carrying its name), its rules, then
//! its tail (a built-in chain's policy, which is the hook's underflow; a RETURN for a user
//! chain); the table ends with an ERROR target named `ERROR`. A standard target's verdict is
//! either negative (ACCEPT, DROP, QUEUE, RETURN) or the byte offset of the entry to continue
//! at: the first entry after a chain's head for a jump (with the goto flag for `-g`), or the
//! rule's own next entry for a rule without a target.

use super::blob::{self, Entry, Ext, IpHeader, NUMHOOKS, verdict};
use crate::model::{Counters, Family};
use crate::wire::WireError;

/// The kernel's hook numbers are the index: `NF_INET_PRE_ROUTING` .. `NF_INET_POST_ROUTING`.
pub const HOOK_NAMES: [&str; NUMHOOKS] =
    ["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"];

/// Where a rule's counters in the new table come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carry {
    /// The entry with this index in the table as read: its counters at the moment of the
    /// replace (the kernel hands them back), so nothing counted meanwhile is lost.
    From(usize),
    /// Start from zero (new rules, `-Z`, `-P`).
    Zero,
}

/// What a rule does when it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    Drop,
    Queue,
    Return,
    Jump(String),
    Goto(String),
    /// No target: continue with the next rule (counting only).
    Fallthrough,
    /// A target extension (DNAT, LOG, ...).
    Ext(Ext),
}

/// One rule: the fixed header (without the goto flag, which [`Verdict::Goto`] carries),
/// its matches, its verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub ip: IpHeader,
    pub nfcache: u32,
    pub matches: Vec<Ext>,
    pub verdict: Verdict,
    /// As read (zero for rules added in memory).
    pub counters: Counters,
    pub carry: Carry,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    pub name: String,
    /// The hook of a built-in chain.
    pub hook: Option<usize>,
    /// A built-in chain's policy (ACCEPT or DROP); RETURN for a user chain.
    pub policy: i32,
    pub policy_counters: Counters,
    pub policy_carry: Carry,
    pub rules: Vec<Rule>,
}

impl Chain {
    pub fn user(name: &str) -> Chain {
        Chain {
            name: name.to_string(),
            hook: None,
            policy: verdict::RETURN,
            policy_counters: Counters::default(),
            policy_carry: Carry::Zero,
            rules: Vec::new(),
        }
    }

    pub fn is_builtin(&self) -> bool {
        self.hook.is_some()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub family: Family,
    pub name: String,
    pub valid_hooks: u32,
    pub chains: Vec<Chain>,
    /// Entries of the table as read: the `num_counters` of the replace.
    pub entries_read: u32,
}

fn goto_flag(family: Family) -> u8 {
    if family == Family::Ipv6 {
        blob::flags::V6_GOTO
    } else {
        blob::flags::V4_GOTO
    }
}

fn bad(detail: impl Into<String>) -> WireError {
    WireError::bad_value(detail).within("x_tables table")
}

impl Table {
    /// Builds the chains from a blob and the hook offsets `IPT_SO_GET_INFO` reported.
    pub fn from_blob(
        family: Family,
        name: &str,
        valid_hooks: u32,
        hook_entry: &[u32; NUMHOOKS],
        underflow: &[u32; NUMHOOKS],
        data: &[u8],
    ) -> Result<Table, WireError> {
        let entries = blob::decode_entries(family, data)?;
        let hooks: Vec<usize> = (0..NUMHOOKS)
            .filter(|h| valid_hooks & (1 << h) != 0)
            .collect();
        // Where each chain's body starts, for resolving jump offsets.
        let mut starts: std::collections::HashMap<usize, String> = Default::default();
        for &h in &hooks {
            starts.insert(hook_entry[h] as usize, HOOK_NAMES[h].to_string());
        }
        for (i, (_, e)) in entries.iter().enumerate() {
            if let (Some(n), Some((next, _))) = (e.target.error_name(), entries.get(i + 1)) {
                starts.insert(*next, n);
            }
        }
        let last = entries.len().saturating_sub(1);
        let count = entries.len();
        let is_error: Vec<bool> = entries
            .iter()
            .map(|(_, e)| e.target.name == blob::ERROR_TARGET)
            .collect();
        let mut chains: Vec<Chain> = Vec::new();
        let mut cur: Option<Chain> = None;
        let mut ended = false;
        for (i, (off, e)) in entries.into_iter().enumerate() {
            if ended {
                return Err(bad(format!("entry #{i} after the table's end")));
            }
            if let Some(&h) = hooks.iter().find(|&&h| hook_entry[h] as usize == off) {
                if let Some(c) = &cur {
                    return Err(bad(format!(
                        "chain {} does not end before hook {h}'s entry",
                        c.name
                    )));
                }
                cur = Some(Chain {
                    name: HOOK_NAMES[h].to_string(),
                    hook: Some(h),
                    policy: verdict::ACCEPT,
                    policy_counters: Counters::default(),
                    policy_carry: Carry::Zero,
                    rules: Vec::new(),
                });
            }
            if let Some(name) = e.target.error_name() {
                if let Some(c) = &cur {
                    return Err(bad(format!(
                        "chain {} has no end before entry #{i}",
                        c.name
                    )));
                }
                if i == last {
                    ended = true;
                    continue;
                }
                cur = Some(Chain {
                    name,
                    ..Chain::user("")
                });
                continue;
            }
            let Some(c) = cur.as_mut() else {
                return Err(bad(format!("entry #{i} at offset {off} is in no chain")));
            };
            let tail = match c.hook {
                Some(h) => underflow[h] as usize == off,
                None => is_error.get(i + 1).copied().unwrap_or(false),
            };
            if tail {
                let v = e.target.standard_verdict();
                let plain = e.ip.is_any(family) && e.matches.is_empty();
                match (c.hook, v) {
                    (Some(_), Some(v @ (verdict::ACCEPT | verdict::DROP))) if plain => c.policy = v,
                    (None, Some(verdict::RETURN)) if plain => {}
                    _ => {
                        return Err(bad(format!(
                            "chain {} ends in entry #{i}, which is not a plain policy/RETURN",
                            c.name
                        )));
                    }
                }
                c.policy_counters = e.counters;
                c.policy_carry = Carry::From(i);
                if let Some(done) = cur.take() {
                    chains.push(done);
                }
                continue;
            }
            let next = off + e.size(family);
            let gflag = goto_flag(family);
            let mut ip = e.ip;
            let goto = ip.flags & gflag != 0;
            ip.flags &= !gflag;
            let v = match e.target.standard_verdict() {
                Some(v) if v >= 0 => {
                    let v = v as usize;
                    if v == next && !goto {
                        Verdict::Fallthrough
                    } else {
                        let to = starts.get(&v).cloned().ok_or_else(|| {
                            bad(format!(
                                "entry #{i} jumps to offset {v}, which starts no chain"
                            ))
                        })?;
                        if goto {
                            Verdict::Goto(to)
                        } else {
                            Verdict::Jump(to)
                        }
                    }
                }
                Some(verdict::ACCEPT) => Verdict::Accept,
                Some(verdict::DROP) => Verdict::Drop,
                Some(verdict::QUEUE) => Verdict::Queue,
                Some(verdict::RETURN) => Verdict::Return,
                Some(v) => return Err(bad(format!("entry #{i} has verdict {v}"))),
                None => Verdict::Ext(e.target),
            };
            c.rules.push(Rule {
                ip,
                nfcache: e.nfcache,
                matches: e.matches,
                verdict: v,
                counters: e.counters,
                carry: Carry::From(i),
            });
        }
        if let Some(c) = cur {
            return Err(bad(format!("chain {} has no end", c.name)));
        }
        if !ended {
            return Err(bad("no ERROR entry at the end"));
        }
        Ok(Table {
            family,
            name: name.to_string(),
            valid_hooks,
            chains,
            entries_read: count as u32,
        })
    }

    pub fn chain(&self, name: &str) -> Option<&Chain> {
        self.chains.iter().find(|c| c.name == name)
    }

    pub fn chain_mut(&mut self, name: &str) -> Option<&mut Chain> {
        self.chains.iter_mut().find(|c| c.name == name)
    }

    /// Adds an empty user chain where libiptc puts it: among the user chains, before the
    /// first one whose name sorts after it (so iptables-legacy lists them sorted).
    pub fn insert_user_chain(&mut self, chain: Chain) {
        let at = self
            .chains
            .iter()
            .position(|c| !c.is_builtin() && c.name.as_bytes() > chain.name.as_bytes())
            .unwrap_or(self.chains.len());
        self.chains.insert(at, chain);
    }

    /// Jumps and gotos to `name` from every rule of the table.
    pub fn references(&self, name: &str) -> u32 {
        self.chains
            .iter()
            .flat_map(|c| &c.rules)
            .filter(|r| matches!(&r.verdict, Verdict::Jump(t) | Verdict::Goto(t) if t == name))
            .count() as u32
    }

    /// The blob for `IPT_SO_SET_REPLACE` with its hook offsets, and for every entry where its
    /// counters come from (for `IPT_SO_SET_ADD_COUNTERS`).
    pub fn to_blob(&self) -> Result<Layout, WireError> {
        let family = self.family;
        let head_size = Entry::plain(family, Ext::error("x")?).size(family);
        let tail_size = Entry::plain(family, Ext::standard(0)).size(family);
        // First pass: offsets of every chain's body (rule sizes do not depend on verdicts).
        let mut starts = std::collections::HashMap::new();
        let mut pos = 0usize;
        for c in &self.chains {
            if !c.is_builtin() {
                pos += head_size;
            }
            starts.insert(c.name.as_str(), pos);
            for r in &c.rules {
                pos += rule_size(family, r);
            }
            pos += tail_size;
        }
        let mut out = Layout {
            blob: Vec::with_capacity(pos + head_size),
            hook_entry: [0; NUMHOOKS],
            underflow: [0; NUMHOOKS],
            carry: Vec::new(),
        };
        let resolve = |name: &str| -> Result<i32, WireError> {
            let off = starts.get(name).ok_or_else(|| {
                bad(format!(
                    "a rule jumps to chain {name}, which does not exist"
                ))
            })?;
            i32::try_from(*off).map_err(|_| bad("table larger than 2 GiB"))
        };
        for c in &self.chains {
            let zero = Counters::default();
            if !c.is_builtin() {
                Entry::plain(family, Ext::error(&c.name)?).encode(family, &mut out.blob)?;
                out.carry.push(Carry::Zero);
            }
            if let Some(h) = c.hook {
                out.hook_entry[h] = out.blob.len() as u32;
            }
            for r in &c.rules {
                let at = out.blob.len();
                let standard = match &r.verdict {
                    Verdict::Accept => Some(verdict::ACCEPT),
                    Verdict::Drop => Some(verdict::DROP),
                    Verdict::Queue => Some(verdict::QUEUE),
                    Verdict::Return => Some(verdict::RETURN),
                    Verdict::Jump(t) | Verdict::Goto(t) => Some(resolve(t)?),
                    Verdict::Fallthrough => Some(
                        i32::try_from(at + rule_size(family, r))
                            .map_err(|_| bad("table larger than 2 GiB"))?,
                    ),
                    Verdict::Ext(_) => None,
                };
                let std_target;
                let target = match (&r.verdict, standard) {
                    (Verdict::Ext(t), _) => t,
                    (_, v) => {
                        std_target = Ext::standard(v.unwrap_or(verdict::DROP));
                        &std_target
                    }
                };
                let extra_flags = if matches!(r.verdict, Verdict::Goto(_)) {
                    goto_flag(family)
                } else {
                    0
                };
                blob::encode_parts(
                    family,
                    &blob::EntryParts {
                        ip: &r.ip,
                        extra_flags,
                        nfcache: r.nfcache,
                        comefrom: 0,
                        counters: zero,
                        matches: &r.matches,
                        target,
                    },
                    &mut out.blob,
                )?;
                out.carry.push(r.carry);
            }
            if let Some(h) = c.hook {
                out.underflow[h] = out.blob.len() as u32;
            }
            Entry::plain(family, Ext::standard(c.policy)).encode(family, &mut out.blob)?;
            out.carry.push(c.policy_carry);
        }
        Entry::plain(family, Ext::error(blob::ERROR_TARGET)?).encode(family, &mut out.blob)?;
        out.carry.push(Carry::Zero);
        Ok(out)
    }
}

/// The size of a rule's entry (a standard target for every verdict but an extension).
fn rule_size(family: Family, r: &Rule) -> usize {
    let std_size = EXT_STANDARD_SIZE;
    let target = match &r.verdict {
        Verdict::Ext(t) => t.size(),
        _ => std_size,
    };
    blob::entry_header_size(family) + r.matches.iter().map(Ext::size).sum::<usize>() + target
}

/// `XT_ALIGN(sizeof(struct xt_standard_target))`.
const EXT_STANDARD_SIZE: usize = blob::EXT_HEADER + crate::xt::xt_align(4);

/// A table laid out for the kernel.
#[derive(Debug, Clone)]
pub struct Layout {
    pub blob: Vec<u8>,
    pub hook_entry: [u32; NUMHOOKS],
    pub underflow: [u32; NUMHOOKS],
    /// One per entry, in order.
    pub carry: Vec<Carry>,
}
