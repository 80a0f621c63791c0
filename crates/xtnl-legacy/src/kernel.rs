//! The x_tables socket options on a raw socket: read a table (`GET_INFO` + `GET_ENTRIES`),
//! replace it (`SET_REPLACE`, which hands back the old counters), add counters
//! (`SET_ADD_COUNTERS`). IPv4 uses `IPT_SO_*` at `SOL_IP`, IPv6 `IP6T_SO_*` at `SOL_IPV6`.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use nix::sys::socket::{AddressFamily, SockFlag, SockProtocol, SockType, socket};

use super::blob::{COUNTERS_SIZE, opt};
use super::sockopt::{self, GET_ENTRIES_HEADER, GetInfo, Replace};
use super::table::{Carry, Layout, Table};
use crate::error::{Error, OpFailure, Result};
use crate::model::{Counters, Family};

/// A raw socket of one family, the handle the x_tables socket options need.
pub struct XtSocket {
    fd: OwnedFd,
    family: Family,
}

/// What went wrong with a socket option, before it becomes an [`Error`].
#[derive(Debug)]
pub enum XtError {
    /// EAGAIN: the table changed between the read and the replace (or during the read).
    Changed,
    Other(Error),
}

impl From<Error> for XtError {
    fn from(e: Error) -> Self {
        XtError::Other(e)
    }
}

fn failure(op: String, e: &io::Error) -> Error {
    let errno = e.raw_os_error().unwrap_or(libc::EIO);
    Error::from_op_failure(OpFailure {
        index: 0,
        op,
        errno,
        ext_ack: None,
    })
}

impl XtSocket {
    pub fn open(family: Family) -> Result<XtSocket> {
        let af = match family {
            Family::Ipv4 => AddressFamily::Inet,
            Family::Ipv6 => AddressFamily::Inet6,
            Family::Inet => {
                return Err(Error::InvalidInput(
                    "x_tables has ip and ip6 tables, no inet ones".into(),
                ));
            }
        };
        let fd = socket(af, SockType::Raw, SockFlag::SOCK_CLOEXEC, SockProtocol::Raw)
            .map_err(|e| Error::netlink("open a raw socket for x_tables", e.into()))?;
        Ok(XtSocket { fd, family })
    }

    pub fn family(&self) -> Family {
        self.family
    }

    /// `GET_INFO`; a table the kernel does not have is [`Error::NoSuchTable`].
    pub fn info(&self, table: &str) -> Result<GetInfo> {
        let mut buf = GetInfo::request(table).map_err(|e| Error::InvalidInput(e.to_string()))?;
        match crate::sys::getsockopt_buf(
            self.fd.as_fd(),
            opt::level(self.family),
            opt::GET_INFO,
            &mut buf,
        ) {
            Ok(_) => Ok(GetInfo::decode(&buf)?),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                Err(Error::NoSuchTable(table.to_string()))
            }
            Err(e) => Err(if e.raw_os_error() == Some(libc::ENOPROTOOPT) {
                Error::Unsupported(OpFailure {
                    index: 0,
                    op: format!("read x_tables table {table} (no ip_tables support)"),
                    errno: libc::ENOPROTOOPT,
                    ext_ack: None,
                })
            } else {
                failure(format!("read x_tables table {table}"), &e)
            }),
        }
    }

    /// Reads a table: info, then its entries of exactly the size the info gave.
    pub fn read(&self, table: &str) -> std::result::Result<Table, XtError> {
        let (info, buf) = self.get_entries(table)?;
        // The rules keep pointing into the buffer the kernel filled, header and all.
        let t = Table::from_buf(
            self.family,
            table,
            info.valid_hooks,
            &info.hook_entry,
            &info.underflow,
            std::sync::Arc::new(buf),
            GET_ENTRIES_HEADER,
        )
        .map_err(Error::from)?;
        Ok(t)
    }

    /// The table's info and its blob as the kernel hands them out (for byte comparisons).
    pub fn read_raw(&self, table: &str) -> std::result::Result<(GetInfo, Vec<u8>), XtError> {
        let (info, mut buf) = self.get_entries(table)?;
        buf.drain(..GET_ENTRIES_HEADER);
        Ok((info, buf))
    }

    /// `GET_INFO` and `GET_ENTRIES`: the info and the `ipt_get_entries` buffer, whose blob
    /// starts at [`GET_ENTRIES_HEADER`].
    fn get_entries(&self, table: &str) -> std::result::Result<(GetInfo, Vec<u8>), XtError> {
        let info = self.info(table)?;
        let mut buf = sockopt::get_entries_request(table, info.size)
            .map_err(|e| Error::InvalidInput(e.to_string()))?;
        match crate::sys::getsockopt_buf(
            self.fd.as_fd(),
            opt::level(self.family),
            opt::GET_ENTRIES,
            &mut buf,
        ) {
            Ok(_) => {}
            // The size changed since GET_INFO.
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => return Err(XtError::Changed),
            Err(e) => return Err(failure(format!("read entries of {table}"), &e).into()),
        }
        Ok((info, buf))
    }

    /// Reads a table until a consistent read succeeds (bounded).
    pub fn read_consistent(&self, table: &str) -> Result<Table> {
        for _ in 0..MAX_ATTEMPTS {
            match self.read(table) {
                Ok(t) => return Ok(t),
                Err(XtError::Changed) => continue,
                Err(XtError::Other(e)) => return Err(e),
            }
        }
        Err(Error::GenerationConflict {
            attempts: MAX_ATTEMPTS,
        })
    }

    /// Replaces the table with `t` and carries counters over. Returns how many entries the
    /// new table has.
    pub fn replace(&self, t: &Table) -> std::result::Result<Committed, XtError> {
        // Laid out behind room for the header: a table of megabytes is not copied again.
        let layout = t.lay_out(Replace::HEADER).map_err(Error::from)?;
        self.replace_laid_out(&t.name, t.valid_hooks, t.entries_read, layout)
    }

    /// [`Self::replace`] of a table no longer needed: its rules are freed as the blob is
    /// laid out ([`Table::into_layout`]), so the two are not held whole at once.
    pub fn replace_owned(&self, t: Table) -> std::result::Result<Committed, XtError> {
        let (name, valid_hooks, entries_read) = (t.name.clone(), t.valid_hooks, t.entries_read);
        let layout = t.into_layout(Replace::HEADER).map_err(Error::from)?;
        self.replace_laid_out(&name, valid_hooks, entries_read, layout)
    }

    fn replace_laid_out(
        &self,
        name: &str,
        valid_hooks: u32,
        entries_read: u32,
        layout: Layout,
    ) -> std::result::Result<Committed, XtError> {
        let num_entries = layout.carry.len() as u32;
        let header = Replace {
            name: name.to_string(),
            valid_hooks,
            num_entries,
            size: (layout.blob.len() - Replace::HEADER) as u32,
            hook_entry: layout.hook_entry,
            underflow: layout.underflow,
            num_counters: entries_read,
        };
        let mut req = layout.blob;
        header.write(&mut req).map_err(Error::from)?;
        let mut old = vec![0u8; entries_read as usize * COUNTERS_SIZE];
        if let Err(e) = crate::sys::setsockopt_replace(
            self.fd.as_fd(),
            opt::level(self.family),
            opt::SET_REPLACE,
            &mut req,
            (Replace::NUM_COUNTERS_AT, Replace::COUNTERS_AT),
            &mut old,
        ) {
            if e.raw_os_error() == Some(libc::EAGAIN) {
                return Err(XtError::Changed);
            }
            return Err(failure(format!("replace x_tables table {name}"), &e).into());
        }
        // The kernel has its copy: the blob goes before the counters are gathered.
        drop(req);
        let old = sockopt::decode_counters(&old);
        let counters: Vec<Counters> = layout
            .carry
            .iter()
            .map(|c| match c {
                Carry::From(i) => old.get(i).copied().unwrap_or_default(),
                Carry::Zero => Counters::default(),
                Carry::Start(c) => c,
            })
            .collect();
        // The new table counts from zero; adding is only needed where something was counted.
        let mut counters_carried = true;
        if counters.iter().any(|c| c.packets != 0 || c.bytes != 0) {
            let req = sockopt::counters_info(name, &counters).map_err(Error::from)?;
            if let Err(e) = crate::sys::setsockopt_buf(
                self.fd.as_fd(),
                opt::level(self.family),
                opt::SET_ADD_COUNTERS,
                &req,
            ) {
                // EINVAL: someone who bypassed the lock replaced the table again in between,
                // so these counters no longer line up with its entries. The replace itself
                // stands; only the carried-over counts are lost (as with libiptc).
                if e.raw_os_error() != Some(libc::EINVAL) {
                    return Err(failure(format!("add counters to {name}"), &e).into());
                }
                counters_carried = false;
            }
        }
        Ok(Committed {
            entries: num_entries,
            counters_carried,
        })
    }
}

/// How many times a read or a replace is retried when the table changed underneath (only
/// writers that bypass the xtables lock can cause that).
pub const MAX_ATTEMPTS: u32 = 100;

/// What one `IPT_SO_SET_REPLACE` (and its `IPT_SO_SET_ADD_COUNTERS`) committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed {
    /// Entries in the new table (the replace's `num_entries`).
    pub entries: u32,
    /// Whether the counters of the kept rules were added back to them; `false` when the kernel
    /// refused `IPT_SO_SET_ADD_COUNTERS` with EINVAL because a writer bypassing the lock replaced
    /// the table again in between (the replace stands, those counts are lost, as with libiptc).
    pub counters_carried: bool,
}
