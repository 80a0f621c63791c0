//! `-m u32` rev 0 (`struct xt_u32`, include/uapi/linux/netfilter/xt_u32.h; the file is not `u32.rs`,
//! which would shadow the integer type in `xt`): up to 11
//! tests, each a location (up to 11 numbers joined by operators) and up to 11 value
//! ranges, then the test count and the inversion flag. 1,984 bytes:
//!
//! ```text
//! tests[i]      at 180 * i (i < 11), struct xt_u32_test:
//!   location[j] at 8 * j        { number: u32 @0, nextop: u8 @4 }   (j < 11)
//!   value[j]    at 88 + 8 * j   { min: u32 @0, max: u32 @4 }        (j < 11)
//!   nnums u8 @176, nvalues u8 @177
//! ntests u8 @1980, invert u8 @1981
//! ```
//!
//! Slots past the counts are zeros in what iptables writes and are not kept; neither is
//! the first location's `nextop`, which nothing reads.

use super::{Out, sized};
use xtnl_wire::WireError;

/// `XT_U32_MAXSIZE + 1`: the slots of each array.
pub const U32_SLOTS: usize = 11;
const TEST_SIZE: usize = 180;
const VALUES_AT: usize = 88;
const NNUMS_AT: usize = 176;
const NVALUES_AT: usize = 177;
const NTESTS_AT: usize = 1980;
const INVERT_AT: usize = 1981;
const SIZE: usize = 1984;

/// `enum xt_u32_ops`: how a location number joins the value so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum U32Op {
    /// `&`
    And,
    /// `<<`
    LeftShift,
    /// `>>`
    RightShift,
    /// `@`: read the 32 bits at that offset.
    At,
    /// Any other number, kept.
    Other(u8),
}

impl U32Op {
    fn from_u8(v: u8) -> Self {
        match v {
            0 => U32Op::And,
            1 => U32Op::LeftShift,
            2 => U32Op::RightShift,
            3 => U32Op::At,
            n => U32Op::Other(n),
        }
    }
    fn to_u8(self) -> u8 {
        match self {
            U32Op::And => 0,
            U32Op::LeftShift => 1,
            U32Op::RightShift => 2,
            U32Op::At => 3,
            U32Op::Other(n) => n,
        }
    }
}

/// One test: `location = value[,value...]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct U32Test {
    /// The first number, then (operator, number) pairs.
    pub location: Vec<(U32Op, u32)>,
    /// `(min, max)` ranges.
    pub values: Vec<(u32, u32)>,
}

/// The whole match.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct U32 {
    /// The tests, all of which must hold.
    pub tests: Vec<U32Test>,
    /// `! --u32`.
    pub invert: u8,
}

impl U32 {
    /// The kernel's 1,984 bytes; what does not fit the slots is left out (the parser never
    /// builds more than iptables' ten of each).
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Out::new(SIZE);
        for (i, t) in self.tests.iter().take(U32_SLOTS).enumerate() {
            let base = i * TEST_SIZE;
            for (j, (op, n)) in t.location.iter().take(U32_SLOTS).enumerate() {
                o.u32_ne(base + 8 * j, *n);
                if j > 0 {
                    o.u8(base + 8 * j + 4, op.to_u8());
                }
            }
            for (j, (lo, hi)) in t.values.iter().take(U32_SLOTS).enumerate() {
                o.u32_ne(base + VALUES_AT + 8 * j, *lo);
                o.u32_ne(base + VALUES_AT + 8 * j + 4, *hi);
            }
            o.u8(base + NNUMS_AT, t.location.len().min(U32_SLOTS) as u8);
            o.u8(base + NVALUES_AT, t.values.len().min(U32_SLOTS) as u8);
        }
        o.u8(NTESTS_AT, self.tests.len().min(U32_SLOTS) as u8);
        o.u8(INVERT_AT, self.invert);
        o.done()
    }

    /// Reads the counts and the slots they cover; counts over 11 are refused, as the
    /// kernel refuses them.
    pub fn decode(info: &[u8]) -> Result<Self, WireError> {
        let f = sized(info, SIZE, "xt_u32")?;
        let count = |at: usize| -> Result<usize, WireError> {
            let n = usize::from(f.u8(at)?);
            if n > U32_SLOTS {
                return Err(f.bad(format!("count {n} over {U32_SLOTS}")));
            }
            Ok(n)
        };
        let mut tests = Vec::new();
        for i in 0..count(NTESTS_AT)? {
            let base = i * TEST_SIZE;
            let mut t = U32Test::default();
            for j in 0..count(base + NNUMS_AT)? {
                let op = if j == 0 {
                    U32Op::And
                } else {
                    U32Op::from_u8(f.u8(base + 8 * j + 4)?)
                };
                t.location.push((op, f.u32_ne(base + 8 * j)?));
            }
            for j in 0..count(base + NVALUES_AT)? {
                let at = base + VALUES_AT + 8 * j;
                t.values.push((f.u32_ne(at)?, f.u32_ne(at + 4)?));
            }
            tests.push(t);
        }
        Ok(U32 {
            tests,
            invert: f.u8(INVERT_AT)?,
        })
    }
}
