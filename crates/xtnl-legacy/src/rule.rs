//! A rule of an x_tables table as [`super::table`] keeps it: its entry's bytes where they
//! were read, with only its verdict and counters decoded.

use std::sync::Arc;

use super::blob;
use crate::model::{Counters, Family};

/// Where a rule's counters in the new table come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carry {
    /// The entry with this index in the table as read: its counters at the moment of the
    /// replace (the kernel hands them back), so nothing counted meanwhile is lost.
    From(usize),
    /// Start from zero (new rules, `-Z`, `-P`).
    Zero,
    /// Start from these counters (`restore -c`: the file's `[packets:bytes]`).
    Start(Counters),
}

/// An entry's bytes: a slice of the blob it was read in (shared), or its own.
#[derive(Clone)]
pub struct Raw {
    bytes: Bytes,
    pub(super) family: Family,
}

/// Where a [`Raw`]'s bytes are. A rule encoded on its own owns them exactly (one allocation
/// per rule, not a shared buffer's counts and header beside them: at 80,000 rules that was
/// some 4 MiB of a restore's peak).
#[derive(Clone)]
enum Bytes {
    /// `len` bytes at `at` of a blob read from the kernel, shared by the rules read with it.
    Shared {
        buf: Arc<Vec<u8>>,
        at: u32,
        len: u32,
    },
    Own(Box<[u8]>),
}

impl Raw {
    pub fn owned(family: Family, bytes: Vec<u8>) -> Raw {
        Raw {
            bytes: Bytes::Own(bytes.into_boxed_slice()),
            family,
        }
    }

    /// The `len` bytes at `at` of `buf`, shared; `None` past 4 GiB (a table is smaller).
    pub(super) fn shared(family: Family, buf: Arc<Vec<u8>>, at: usize, len: usize) -> Option<Raw> {
        Some(Raw {
            bytes: Bytes::Shared {
                buf,
                at: u32::try_from(at).ok()?,
                len: u32::try_from(len).ok()?,
            },
            family,
        })
    }

    pub fn bytes(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Shared { buf, at, len } => {
                let at = *at as usize;
                buf.get(at..at + *len as usize).unwrap_or_default()
            }
            Bytes::Own(b) => b,
        }
    }

    /// The entry's size in bytes.
    pub fn size(&self) -> usize {
        match &self.bytes {
            Bytes::Shared { len, .. } => *len as usize,
            Bytes::Own(b) => b.len(),
        }
    }

    /// The same entry, but for what the kernel fills in (`comefrom`, the counters) and, when
    /// `relocatable`, the standard target's offset (all rewritten when laid out).
    fn same_entry(&self, other: &Raw, relocatable: bool) -> bool {
        let (a, b) = (self.bytes(), other.bytes());
        if self.family != other.family || a.len() != b.len() {
            return false;
        }
        let Ok(l) = blob::layout(self.family) else {
            return a == b;
        };
        let mut skip = vec![(l.comefrom, 4), (l.counters, blob::COUNTERS_SIZE)];
        if relocatable && let Some(t) = a.get(l.target_offset..l.target_offset + 2) {
            skip.push((
                usize::from(u16::from_ne_bytes([t[0], t[1]])) + blob::EXT_HEADER,
                4,
            ));
        }
        a.iter()
            .zip(b)
            .enumerate()
            .all(|(i, (x, y))| x == y || skip.iter().any(|&(at, n)| (at..at + n).contains(&i)))
    }
}

impl std::fmt::Debug for Raw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Raw({} bytes)", self.size())
    }
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
    /// A target extension (DNAT, LOG, ...), in the rule's bytes.
    Ext,
}

/// One rule: its entry's bytes (the goto flag of a [`Verdict::Goto`] included) and its
/// verdict. Laid out, the bytes are copied with `comefrom` and the counters zeroed and, for a
/// jump, a goto or a fallthrough, the standard target's offset written from `verdict`.
/// Two rules are equal when they would be laid out alike and count alike.
#[derive(Debug, Clone)]
pub struct Rule {
    pub raw: Raw,
    pub verdict: Verdict,
    /// As read (zero for rules added in memory).
    pub counters: Counters,
    pub carry: Carry,
}

impl PartialEq for Rule {
    fn eq(&self, other: &Rule) -> bool {
        let relocatable = matches!(
            self.verdict,
            Verdict::Jump(_) | Verdict::Goto(_) | Verdict::Fallthrough
        );
        self.verdict == other.verdict
            && self.counters == other.counters
            && self.carry == other.carry
            && self.raw.same_entry(&other.raw, relocatable)
    }
}

impl Eq for Rule {}

impl Rule {
    /// What the rule does, independent of where it sits and what it counted: its entry's
    /// bytes with what a layout rewrites zeroed (as [`PartialEq`] skips them), then its
    /// verdict. Two rules with the same key are the same rule to the policy.
    pub(crate) fn key(&self) -> Vec<u8> {
        let mut b = self.raw.bytes().to_vec();
        if let Ok(l) = blob::layout(self.raw.family) {
            let mut zero = |at: usize, n: usize| {
                if let Some(s) = b.get_mut(at..at + n) {
                    s.fill(0);
                }
            };
            zero(l.comefrom, 4);
            zero(l.counters, blob::COUNTERS_SIZE);
            if matches!(
                self.verdict,
                Verdict::Jump(_) | Verdict::Goto(_) | Verdict::Fallthrough
            ) && let Some(t) = self.raw.bytes().get(l.target_offset..l.target_offset + 2)
            {
                zero(
                    usize::from(u16::from_ne_bytes([t[0], t[1]])) + blob::EXT_HEADER,
                    4,
                );
            }
        }
        b.extend_from_slice(format!("{:?}", self.verdict).as_bytes());
        b
    }
}
