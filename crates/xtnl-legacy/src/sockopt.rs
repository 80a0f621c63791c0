//! The x_tables socket options' own headers, byte for byte: `ipt_getinfo` (`IPT_SO_GET_INFO`),
//! the `ipt_get_entries` request, the `ipt_replace` header (`IPT_SO_SET_REPLACE`) and
//! `xt_counters_info` (`IPT_SO_SET_ADD_COUNTERS`), and the counters array the kernel hands
//! back. The table blob these headers carry is [`super::blob`]'s; the offsets that differ
//! between 64-bit and 32-bit targets come from [`super::abi`], checked at compile time.

use super::blob::{
    COUNTERS_SIZE, NUMHOOKS, TABLE_MAXNAMELEN, c_name, put, put_name, u32_at, u64_at,
};
use crate::model::Counters;
use crate::wire::WireError;

/// `struct ipt_getinfo` (`ip6t_getinfo` is the same).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GetInfo {
    /// The table's name (at most `XT_TABLE_MAXNAMELEN` - 1 bytes).
    pub name: String,
    /// Bit `1 << hook` set for each netfilter hook (`NF_INET_PRE_ROUTING`...) the table has a
    /// built-in chain on.
    pub valid_hooks: u32,
    /// Byte offset in the entries blob of each hook's first rule (the built-in chain's start).
    pub hook_entry: [u32; NUMHOOKS],
    /// Byte offset in the entries blob of each hook's policy entry (the chain's underflow).
    pub underflow: [u32; NUMHOOKS],
    /// How many entries (rules, chain heads, policies, the final error entry) the table holds.
    pub num_entries: u32,
    /// Size of the entries blob in bytes (what `IPT_SO_GET_ENTRIES` must ask for).
    pub size: u32,
}

impl GetInfo {
    /// Size of `struct ipt_getinfo` in bytes (the same on every architecture).
    pub const SIZE: usize = 84;

    /// The request: the table name, the rest zero.
    pub fn request(table: &str) -> Result<Vec<u8>, WireError> {
        let mut b = vec![0u8; Self::SIZE];
        put_name(&mut b, 0, TABLE_MAXNAMELEN, table, "table name")?;
        Ok(b)
    }

    /// Reads the kernel's answer to `IPT_SO_GET_INFO`.
    ///
    /// # Errors
    /// A [`WireError`] when `b` is not exactly [`GetInfo::SIZE`] bytes.
    pub fn decode(b: &[u8]) -> Result<GetInfo, WireError> {
        if b.len() != Self::SIZE {
            return Err(
                WireError::bad_value(format!("{} bytes, not 84", b.len())).within("getinfo")
            );
        }
        let arr = |at: usize| -> Result<[u32; NUMHOOKS], WireError> {
            let mut x = [0u32; NUMHOOKS];
            for (i, v) in x.iter_mut().enumerate() {
                *v = u32_at(b, at + 4 * i, "getinfo")?;
            }
            Ok(x)
        };
        Ok(GetInfo {
            name: c_name(&b[..TABLE_MAXNAMELEN], "getinfo name")?,
            valid_hooks: u32_at(b, 32, "getinfo")?,
            hook_entry: arr(36)?,
            underflow: arr(56)?,
            num_entries: u32_at(b, 76, "getinfo")?,
            size: u32_at(b, 80, "getinfo")?,
        })
    }
}

/// `offsetof(struct ipt_get_entries, entrytable)`: 32 + 4, aligned for the u64 counters (40;
/// 36 on i386).
pub const GET_ENTRIES_HEADER: usize = super::abi::GET_ENTRIES_HEADER_V4;

/// The `ipt_get_entries` request for a blob of `size` bytes (the kernel insists the buffer
/// is exactly header + size).
pub fn get_entries_request(table: &str, size: u32) -> Result<Vec<u8>, WireError> {
    let mut b = vec![0u8; GET_ENTRIES_HEADER + size as usize];
    put_name(&mut b, 0, TABLE_MAXNAMELEN, table, "table name")?;
    put(&mut b, 32, &size.to_ne_bytes());
    Ok(b)
}

/// `struct ipt_replace` up to `entries`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Replace {
    pub name: String,
    pub valid_hooks: u32,
    pub num_entries: u32,
    pub size: u32,
    pub hook_entry: [u32; NUMHOOKS],
    pub underflow: [u32; NUMHOOKS],
    /// Entries of the table being replaced: the kernel refuses (EAGAIN) unless this is still
    /// the table's entry count, and writes that many old counters back.
    pub num_counters: u32,
}

impl Replace {
    /// `offsetof(struct ipt_replace, entries)` (96; 92 on i386).
    pub const HEADER: usize = super::abi::REPLACE_HEADER_V4;
    pub const NUM_COUNTERS_AT: usize = super::abi::REPLACE_NUM_COUNTERS_AT;
    /// `offsetof(struct ipt_replace, counters)` (a user pointer: 8 bytes on 64-bit targets,
    /// 4 on 32-bit ones).
    pub const COUNTERS_AT: usize = super::abi::REPLACE_COUNTERS_AT;

    /// Writes the header over the first [`Replace::HEADER`] bytes of `b` (which the blob
    /// follows); the counters pointer is left as it is (zero) for
    /// `sys::setsockopt_replace` to fill.
    pub fn write(&self, b: &mut [u8]) -> Result<(), WireError> {
        if b.len() < Self::HEADER {
            return Err(WireError::truncated(Self::HEADER, b.len()).within("ipt_replace"));
        }
        b[..Self::HEADER].fill(0);
        put_name(b, 0, TABLE_MAXNAMELEN, &self.name, "table name")?;
        put(b, 32, &self.valid_hooks.to_ne_bytes());
        put(b, 36, &self.num_entries.to_ne_bytes());
        put(b, 40, &self.size.to_ne_bytes());
        for i in 0..NUMHOOKS {
            put(b, 44 + 4 * i, &self.hook_entry[i].to_ne_bytes());
            put(b, 64 + 4 * i, &self.underflow[i].to_ne_bytes());
        }
        put(b, Self::NUM_COUNTERS_AT, &self.num_counters.to_ne_bytes());
        Ok(())
    }
}

/// `struct xt_counters_info` with its counters (`IPT_SO_SET_ADD_COUNTERS`).
pub fn counters_info(table: &str, counters: &[Counters]) -> Result<Vec<u8>, WireError> {
    const HEADER: usize = super::abi::COUNTERS_INFO_HEADER;
    let num =
        u32::try_from(counters.len()).map_err(|_| WireError::bad_value("too many counters"))?;
    let mut b = vec![0u8; HEADER];
    put_name(&mut b, 0, TABLE_MAXNAMELEN, table, "table name")?;
    put(&mut b, 32, &num.to_ne_bytes());
    for c in counters {
        b.extend_from_slice(&c.packets.to_ne_bytes());
        b.extend_from_slice(&c.bytes.to_ne_bytes());
    }
    Ok(b)
}

/// The old counters the kernel wrote back after a replace.
pub fn decode_counters(b: &[u8]) -> Vec<Counters> {
    b.chunks_exact(COUNTERS_SIZE)
        .map(|c| Counters {
            packets: u64_at(c, 0, "counters").unwrap_or(0),
            bytes: u64_at(c, 8, "counters").unwrap_or(0),
        })
        .collect()
}
