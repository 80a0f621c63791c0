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
//!
//! A rule is kept as its entry's bytes, where they were read (the blob is shared, not
//! copied), with only what relocating it needs decoded: its counters and, for a standard
//! target, the verdict or the chain it jumps to. Laying a table out copies those bytes and
//! rewrites nothing but `comefrom`, the counters and a jump's offset, so a command on a table
//! of thousands of chains costs a copy of the blob, not a decode and an encode of every rule
//! (as libiptc does it). A rule is decoded (`convert::to_ipt`) only when a command
//! looks at it.

use std::collections::HashMap;
use std::sync::Arc;

use super::blob::{self, Entry, Ext, NUMHOOKS, TargetKind, verdict};
use crate::model::{Counters, Family};
use crate::wire::WireError;

/// The kernel's hook numbers are the index: `NF_INET_PRE_ROUTING` .. `NF_INET_POST_ROUTING`.
pub const HOOK_NAMES: [&str; NUMHOOKS] =
    ["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"];

pub use super::rule::{Carry, Raw, Rule, Verdict};

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

/// One x_tables table read from the kernel, split into chains whose rules keep their entry
/// bytes; changed in memory, then laid out again with [`Table::lay_out`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// IPv4 or IPv6: which entry layout (`ipt_entry` or `ip6t_entry`) the rules use.
    pub family: Family,
    /// The table's name (`filter`, `nat`, ...).
    pub name: String,
    /// The `valid_hooks` bit mask of `struct ipt_getinfo`, kept for the replace.
    pub valid_hooks: u32,
    /// Built-in chains (in hook order) then user chains, as the kernel's blob ordered them.
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
        Table::from_buf(
            family,
            name,
            valid_hooks,
            hook_entry,
            underflow,
            Arc::new(data.to_vec()),
            0,
        )
    }

    /// As [`Table::from_blob`], on the blob at `buf[base..]`, which the rules then share.
    pub fn from_buf(
        family: Family,
        name: &str,
        valid_hooks: u32,
        hook_entry: &[u32; NUMHOOKS],
        underflow: &[u32; NUMHOOKS],
        buf: Arc<Vec<u8>>,
        base: usize,
    ) -> Result<Table, WireError> {
        let l = blob::layout(family)?;
        let data = buf
            .get(base..)
            .ok_or_else(|| bad("blob outside its buffer"))?;
        // The smallest entry is a header and a bare target.
        let mut entries: Vec<(usize, blob::Scan<'_>)> =
            Vec::with_capacity(data.len() / (l.size + blob::EXT_HEADER));
        let mut at = 0;
        while at < data.len() {
            let e = blob::scan(&l, &data[at..])
                .map_err(|e| e.within(format!("entry #{} at offset {at}", entries.len())))?;
            entries.push((at, e));
            at += e.size;
        }
        let hooks: Vec<usize> = (0..NUMHOOKS)
            .filter(|h| valid_hooks & (1 << h) != 0)
            .collect();
        // Where each chain's body starts, for resolving jump offsets: sorted by offset.
        let mut starts: Vec<(usize, &str)> = Vec::with_capacity(entries.len() / 2);
        for &h in &hooks {
            starts.push((hook_entry[h] as usize, HOOK_NAMES[h]));
        }
        for (i, (_, e)) in entries.iter().enumerate() {
            if let (TargetKind::Error(n), Some((next, _))) = (e.target, entries.get(i + 1)) {
                starts.push((*next, n));
            }
        }
        starts.sort_unstable_by_key(|&(off, _)| off);
        let start_of = |off: usize| {
            starts
                .binary_search_by_key(&off, |&(o, _)| o)
                .ok()
                .and_then(|i| starts.get(i))
                .map(|&(_, n)| n.to_string())
        };
        let last = entries.len().saturating_sub(1);
        let count = entries.len();
        let is_error = |i: usize| {
            entries.get(i).is_some_and(|(_, e)| {
                matches!(e.target, TargetKind::Error(_) | TargetKind::BadError)
            })
        };
        // A user chain's rules: the entries up to the one before the next head (or the end).
        let rules_until_tail = |from: usize| {
            entries
                .get(from..)
                .map(|rest| {
                    rest.iter()
                        .position(|(_, e)| {
                            matches!(e.target, TargetKind::Error(_) | TargetKind::BadError)
                        })
                        .unwrap_or(rest.len())
                        .saturating_sub(1)
                })
                .unwrap_or(0)
        };
        let gflag = goto_flag(family);
        let mut chains: Vec<Chain> = Vec::with_capacity(starts.len());
        let mut cur: Option<Chain> = None;
        let mut ended = false;
        for (i, &(off, e)) in entries.iter().enumerate() {
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
                    rules: Vec::with_capacity(
                        entries[i..]
                            .iter()
                            .take_while(|(o, _)| *o < underflow[h] as usize)
                            .count(),
                    ),
                });
            }
            if let TargetKind::Error(n) = e.target {
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
                    name: n.to_string(),
                    rules: Vec::with_capacity(rules_until_tail(i + 1)),
                    ..Chain::user("")
                });
                continue;
            }
            let Some(c) = cur.as_mut() else {
                return Err(bad(format!("entry #{i} at offset {off} is in no chain")));
            };
            let tail = match c.hook {
                Some(h) => underflow[h] as usize == off,
                None => is_error(i + 1),
            };
            let standard = match e.target {
                TargetKind::Standard(v) => Some(v),
                _ => None,
            };
            if tail {
                let plain = || blob::is_plain(&l, &data[off..], &e);
                match (c.hook, standard) {
                    (Some(_), Some(v @ (verdict::ACCEPT | verdict::DROP))) if plain() => {
                        c.policy = v
                    }
                    (None, Some(verdict::RETURN)) if plain() => {}
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
            let next = off + e.size;
            let goto = e.flags & gflag != 0;
            let v = match standard {
                Some(v) if v >= 0 => {
                    let v = v as usize;
                    if v == next && !goto {
                        Verdict::Fallthrough
                    } else {
                        let to = start_of(v).ok_or_else(|| {
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
                None => Verdict::Ext,
            };
            let raw = Raw::shared(family, buf.clone(), base + off, e.size)
                .ok_or_else(|| bad("blob larger than 4 GiB"))?;
            c.rules.push(Rule {
                raw,
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
        // Every hook the table says it has must have its chain; a hook whose entry offset
        // matched no entry would otherwise vanish here and be laid out again at offset 0.
        for &h in &hooks {
            if !chains.iter().any(|c| c.hook == Some(h)) {
                return Err(bad(format!(
                    "hook {h}'s entry at offset {} is not the start of a chain",
                    hook_entry[h]
                )));
            }
        }
        Ok(Table {
            family,
            name: name.to_string(),
            valid_hooks,
            chains,
            entries_read: count as u32,
        })
    }

    /// The chain named `name`, if the table has one.
    pub fn chain(&self, name: &str) -> Option<&Chain> {
        self.chains.iter().find(|c| c.name == name)
    }

    /// The chain named `name`, to change, if the table has one.
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

    /// Jumps and gotos to every chain that has any, in one pass (for listing all chains).
    pub fn reference_counts(&self) -> HashMap<&str, u32, Fnv> {
        let mut out: HashMap<&str, u32, Fnv> = HashMap::default();
        for r in self.chains.iter().flat_map(|c| &c.rules) {
            if let Verdict::Jump(t) | Verdict::Goto(t) = &r.verdict {
                *out.entry(t.as_str()).or_default() += 1;
            }
        }
        out
    }

    /// The blob for `IPT_SO_SET_REPLACE` with its hook offsets, and for every entry where its
    /// counters come from (for `IPT_SO_SET_ADD_COUNTERS`).
    pub fn to_blob(&self) -> Result<Layout, WireError> {
        self.lay_out(0)
    }

    /// As [`Table::to_blob`], the blob starting after `reserve` zero bytes (room for the
    /// `ipt_replace` header, so the blob is not copied behind it).
    pub fn lay_out(&self, reserve: usize) -> Result<Layout, WireError> {
        let sizes: Vec<(usize, usize)> = self
            .chains
            .iter()
            .map(|c| (c.rules.iter().map(|r| r.raw.size()).sum(), c.rules.len()))
            .collect();
        let bodies = self.chains.iter().map(|c| c.rules.iter());
        self.lay_out_sized(&sizes, bodies, reserve, false)
    }

    /// As [`Table::lay_out`], consuming the table: each rule is freed once its bytes are in
    /// the blob, and the freed pages go back to the kernel as the blob grows
    /// ([`crate::sys::release_free_heap`] every `RELEASE_EVERY` bytes), so that the rules
    /// and the blob are not both resident whole (a replace of 80,000 rules held some 45 MB
    /// of each at once). A replace refused with `EAGAIN` plans again on a fresh read, so
    /// nothing needs the table after its layout.
    pub fn into_layout(mut self, reserve: usize) -> Result<Layout, WireError> {
        let rules: Vec<Vec<Rule>> = self
            .chains
            .iter_mut()
            .map(|c| std::mem::take(&mut c.rules))
            .collect();
        let sizes: Vec<(usize, usize)> = rules
            .iter()
            .map(|r| (r.iter().map(|r| r.raw.size()).sum(), r.len()))
            .collect();
        self.lay_out_sized(&sizes, rules.into_iter(), reserve, true)
    }

    /// The layout of the chains' heads and tails with the rules of `bodies` (one per chain,
    /// in order; `sizes` their bytes and counts): the rules are dropped as they are copied,
    /// when `bodies` owns them.
    fn lay_out_sized<R, I>(
        &self,
        sizes: &[(usize, usize)],
        bodies: impl Iterator<Item = I>,
        reserve: usize,
        release: bool,
    ) -> Result<Layout, WireError>
    where
        R: std::borrow::Borrow<Rule>,
        I: IntoIterator<Item = R>,
    {
        let family = self.family;
        let l = blob::layout(family)?;
        // The head's template carries an empty name: each chain's name is copied over its
        // zeros, so nothing of the template's own name may show through a shorter one (an
        // empty name, which the kernel accepts from any writer, laid out as "x" before).
        let mut head = Vec::new();
        Entry::plain(family, Ext::error("")?).encode(family, &mut head)?;
        let mut tail = Vec::new();
        Entry::plain(family, Ext::standard(0)).encode(family, &mut tail)?;
        // Both templates' payloads (chain name, verdict) start right after the target header.
        let payload = l.size + blob::EXT_HEADER;
        // First pass: offsets of every chain's body (a rule's size does not depend on its
        // verdict).
        let mut starts: HashMap<&str, usize, Fnv> =
            HashMap::with_capacity_and_hasher(self.chains.len(), Fnv::default());
        let mut pos = 0usize;
        let mut count = 1usize;
        for (c, &(bytes, rules)) in self.chains.iter().zip(sizes) {
            if !c.is_builtin() {
                pos += head.len();
                count += 1;
            }
            starts.insert(c.name.as_str(), pos);
            pos += bytes + tail.len();
            count += rules + 1;
        }
        let mut blob = Vec::with_capacity(reserve + pos + head.len());
        blob.resize(reserve, 0);
        let mut out = Layout {
            blob,
            hook_entry: [0; NUMHOOKS],
            underflow: [0; NUMHOOKS],
            carry: Carries::with_capacity(count),
        };
        let resolve = |name: &str| -> Result<i32, WireError> {
            let off = starts.get(name).ok_or_else(|| {
                bad(format!(
                    "a rule jumps to chain {name}, which does not exist"
                ))
            })?;
            i32::try_from(*off).map_err(|_| bad("table larger than 2 GiB"))
        };
        let offset = |b: &Vec<u8>| b.len() - reserve;
        let mut released = 0usize;
        for (c, rules) in self.chains.iter().zip(bodies) {
            if !c.is_builtin() {
                let at = out.blob.len();
                out.blob.extend_from_slice(&head);
                let name = c.name.as_bytes();
                if name.len() >= blob::FUNCTION_MAXNAMELEN || name.contains(&0) {
                    return Err(bad(format!("chain name {:?} is too long", c.name)));
                }
                out.blob[at + payload..at + payload + name.len()].copy_from_slice(name);
                out.carry.push(Carry::Zero);
            }
            if let Some(h) = c.hook {
                out.hook_entry[h] = offset(&out.blob) as u32;
            }
            for r in rules {
                let r = r.borrow();
                let at = out.blob.len();
                let bytes = r.raw.bytes();
                out.blob.extend_from_slice(bytes);
                let verdict = match &r.verdict {
                    Verdict::Jump(t) | Verdict::Goto(t) => Some(resolve(t)?),
                    Verdict::Fallthrough => Some(
                        i32::try_from(offset(&out.blob))
                            .map_err(|_| bad("table larger than 2 GiB"))?,
                    ),
                    _ => None,
                };
                let e = &mut out.blob[at..];
                e[l.comefrom..l.comefrom + 4].fill(0);
                e[l.counters..l.counters + blob::COUNTERS_SIZE].fill(0);
                if let Some(v) = verdict {
                    let t = usize::from(u16::from_ne_bytes([
                        e[l.target_offset],
                        e[l.target_offset + 1],
                    ]));
                    let slot = e
                        .get_mut(t + blob::EXT_HEADER..t + blob::EXT_HEADER + 4)
                        .ok_or_else(|| bad("a jump without a standard target"))?;
                    slot.copy_from_slice(&v.to_ne_bytes());
                }
                out.carry.push(r.carry);
            }
            if release && out.blob.len() - released >= RELEASE_EVERY {
                released = out.blob.len();
                crate::sys::release_free_heap();
            }
            if let Some(h) = c.hook {
                out.underflow[h] = offset(&out.blob) as u32;
            }
            let at = out.blob.len();
            out.blob.extend_from_slice(&tail);
            out.blob[at + payload..at + payload + 4].copy_from_slice(&c.policy.to_ne_bytes());
            out.carry.push(c.policy_carry);
        }
        Entry::plain(family, Ext::error(blob::ERROR_TARGET)?).encode(family, &mut out.blob)?;
        out.carry.push(Carry::Zero);
        Ok(out)
    }
}

/// How many bytes of blob [`Table::into_layout`] writes between two hand-backs of the
/// rules it freed: a trim walks the heap (some milliseconds for a large one), so not per
/// rule. 4 MiB: at 80,000 rules the peak was 1.7 MB lower than with 8 MiB, and no lower
/// with 2 or 1 MiB (what stays resident is pages a live allocation still holds).
pub const RELEASE_EVERY: usize = 4 << 20;

/// The chain-name maps' hasher (FNV-1a: short keys of our own table).
pub use xtnl_core::hash::Fnv;

/// A table laid out for the kernel.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The entries, after the bytes reserved in front of them ([`Table::lay_out`]); offsets
    /// count from the first entry.
    pub blob: Vec<u8>,
    /// Byte offset of each hook's first entry (`hook_entry` of `struct ipt_replace`).
    pub hook_entry: [u32; NUMHOOKS],
    /// Byte offset of each hook's policy entry (`underflow` of `struct ipt_replace`).
    pub underflow: [u32; NUMHOOKS],
    /// One per entry, in order.
    pub carry: Carries,
}

/// Where each entry's counters come from ([`Carry`]), one per entry in order, in 4 bytes an
/// entry rather than a `Carry`'s 24: the list lives beside the blob through the replace
/// (3.4 MB of a restore's peak at 10,000 services, 0.6 MB so).
#[derive(Debug, Clone, Default)]
pub struct Carries {
    /// [`Carry::From`]'s index, or `ZERO` or `START`.
    from: Vec<u32>,
    /// The counters of the entries marked `START`, in order.
    start: Vec<Counters>,
}

impl Carries {
    const ZERO: u32 = u32::MAX;
    const START: u32 = u32::MAX - 1;

    /// An empty list with room for `n` entries.
    pub fn with_capacity(n: usize) -> Carries {
        Carries {
            from: Vec::with_capacity(n),
            start: Vec::new(),
        }
    }

    /// Adds the next entry's carry.
    pub fn push(&mut self, c: Carry) {
        let v = match c {
            // A table read has fewer than 4 billion entries (its blob is under 4 GiB).
            Carry::From(i) => u32::try_from(i)
                .ok()
                .filter(|&i| i < Carries::START)
                .unwrap_or(Carries::ZERO),
            Carry::Zero => Carries::ZERO,
            Carry::Start(c) => {
                self.start.push(c);
                Carries::START
            }
        };
        self.from.push(v);
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.from.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.from.is_empty()
    }

    /// Each entry's carry, in order.
    pub fn iter(&self) -> impl Iterator<Item = Carry> + '_ {
        let mut start = self.start.iter();
        self.from.iter().map(move |&v| match v {
            Carries::ZERO => Carry::Zero,
            Carries::START => start.next().map_or(Carry::Zero, |c| Carry::Start(*c)),
            i => Carry::From(i as usize),
        })
    }
}
