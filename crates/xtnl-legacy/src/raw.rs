//! A table as the kernel hands it out, bytes and all: for byte-level comparisons with
//! iptables-legacy (tests/legacy_diff.rs), for timing the phases of a change
//! (benches/legacy.rs) and for the fuzz target of the blob decoder (fuzz/harness.rs). The
//! modules that read, decode and lay out blobs stay private; this is their public face.

use super::kernel::XtError;
use super::sockopt::GetInfo;
use super::table::Table;
use super::{Legacy, exec::LegacyTable};
use crate::error::{Error, Result};
use crate::ipt::parse::Command;
use crate::model::Family;

/// A table's `GET_INFO` answer and its entries (the `ipt_get_entries` blob without its
/// header), as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawTable {
    /// The table's name, hooks, hook entry and underflow offsets, entry count and size.
    pub info: GetInfo,
    /// The entries, offsets counted from the first.
    pub entries: Vec<u8>,
}

impl RawTable {
    /// Splits bytes laid out as the kernel answers: the 84-byte `ipt_getinfo`, then the
    /// entries.
    pub fn decode(bytes: &[u8]) -> Result<RawTable> {
        if bytes.len() < GetInfo::SIZE {
            return Err(Error::InvalidInput(format!(
                "x_tables table: {} bytes, fewer than the {}-byte getinfo",
                bytes.len(),
                GetInfo::SIZE
            )));
        }
        let (info, entries) = bytes.split_at(GetInfo::SIZE);
        let info = GetInfo::decode(info).map_err(|e| Error::InvalidInput(e.to_string()))?;
        Ok(RawTable {
            info,
            entries: entries.to_vec(),
        })
    }

    /// Decodes the entries into a [`Table`] of chains and rules.
    pub fn to_table(&self, family: Family) -> Result<Table> {
        Table::from_blob(
            family,
            &self.info.name,
            self.info.valid_hooks,
            &self.info.hook_entry,
            &self.info.underflow,
            &self.entries,
        )
        .map_err(|e| Error::InvalidInput(e.to_string()))
    }
}

impl Legacy {
    /// The table's info and blob exactly as the kernel hands them out (no lock needed: the
    /// kernel copies the table whole).
    pub fn read_raw(&self, table: &str) -> Result<RawTable> {
        match self.sock.read_raw(table) {
            Ok((info, entries)) => Ok(RawTable { info, entries }),
            Err(XtError::Other(e)) => Err(e),
            Err(XtError::Changed) => Err(Error::GenerationConflict { attempts: 1 }),
        }
    }
}

impl Table {
    /// Applies one iptables command to this table in memory (nothing is sent); what
    /// [`Legacy::transact`]'s plans do. Errors are iptables' (no such chain, rule not found...).
    pub fn apply(&mut self, command: &Command) -> Result<()> {
        crate::seam::interpret(&mut LegacyTable::new(self, false), command).map(|_| ())
    }
}
