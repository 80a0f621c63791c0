//! The x_tables ("legacy") backend: iptables-legacy's kernel interface without libiptc.
//!
//! A table is read whole (`IPT_SO_GET_INFO` + `IPT_SO_GET_ENTRIES`, or the `IP6T_`
//! equivalents), split into chains of rules kept as their entry bytes (`table`), changed in
//! memory by any number of operations (`exec`), laid out again and committed with one
//! `IPT_SO_SET_REPLACE`; the counters the kernel hands back from the replaced table are then
//! added to the rules that were kept (`IPT_SO_SET_ADD_COUNTERS`), so nothing counted is lost.
//!
//! Every replace happens under the xtables lock, the one iptables-legacy takes. Writers that
//! bypass it (other lock files, private /run, old iptables, libiptc users) can still change
//! the table between our read and our replace; the kernel then refuses the replace with
//! EAGAIN (it compares the entry count we read with the table's), and [`Legacy::transact`]
//! reads again, applies the operations again and retries, a bounded number of times.
//!
//! The library re-exports this crate as `xtnl::legacy`; the command line and `xtnl serve`
//! open it through the library's `xtnl::backend`. Opening a [`Legacy`] needs root; a
//! [`Table`] is changed in memory and laid out without it, as a plan does before its
//! replace:
//!
//! ```
//! use xtnl_core::model::Family;
//! use xtnl_ipt::parse::parse;
//! use xtnl_legacy::Table;
//!
//! // A table as `Table::from_blob` builds it from the kernel's entries (here: none).
//! let mut table = Table {
//!     family: Family::Ipv4,
//!     name: "filter".into(),
//!     valid_hooks: 0,
//!     chains: Vec::new(),
//!     entries_read: 0,
//! };
//! for line in ["-N web", "-A web -p tcp --dport 443 -j ACCEPT"] {
//!     let words: Vec<String> = line.split(' ').map(String::from).collect();
//!     table.apply(&parse(&words, Family::Ipv4)?.command)?;
//! }
//! assert_eq!(table.chain("web").map(|c| c.rules.len()), Some(1));
//! // Laid out for IPT_SO_SET_REPLACE: the chain's head, its rule, its return, the end.
//! let layout = table.to_blob()?;
//! assert_eq!(layout.carry.len(), 4);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The old paths: this crate was the root package's `legacy` module, and its files keep the
// `crate::seam::...`, `crate::ipt::...`, `crate::sys::...` paths they had there (as the
// crates below did).
#[cfg(test)]
use crate as legacy;
use xtnl_core::{ErrorKind, OpFailure, error, limits, model};
use xtnl_host::{lock, netns};
use xtnl_nft as nft;
#[cfg(test)]
use xtnl_policy as policy;
use xtnl_seam as seam;
use xtnl_sys as sys;
use xtnl_wire as wire;
use xtnl_xt as xt;

/// iptables' syntax and iptables-nft's encoding and listings under the library's paths
/// (`crate::ipt::parse`, `crate::ipt::listing`, ...), which the backend reads and prints
/// rules with.
mod ipt {
    #[cfg(test)]
    pub(crate) use xtnl_ipt::print;
    pub(crate) use xtnl_ipt::{
        Flavour, IptMatch, IptRule, IptTarget, Neg, messages, parse, restore_file, tables,
        xt_bridge,
    };
    pub(crate) use xtnl_nft::ipt::{compat, listing};
}

// Private (issue 14): the kernel structs mirrored byte for byte are the backend's business;
// the public API shows only what `raw`, `table` and `kernel` make of them.
pub(crate) mod abi;
// Private (issue 14): reading, decoding and laying out blobs, and applying commands to a
// table, are the backend's business; `raw` is their public face.
pub(crate) mod blob;
mod convert;
pub(crate) mod exec;
pub(crate) mod kernel;
mod nathost;
mod raw;
mod rule;
pub(crate) mod sockopt;
pub(crate) mod table;
#[cfg(test)]
mod tests;

use std::time::Duration;

use crate::error::{Error, Result};
use crate::ipt::parse::{Command, Invocation};
use crate::ipt::restore_file::Block;
use crate::lock::XtablesLock;
use crate::model::Family;
use exec::LegacyTable;
pub use kernel::Committed;
use kernel::{MAX_ATTEMPTS, XtError, XtSocket};
pub use raw::RawTable;
pub use sockopt::GetInfo;
pub use table::{Layout, Table};

/// A handle on one family's x_tables (a raw socket) and the xtables lock to write under.
pub struct Legacy {
    sock: Socket,
    lock: XtablesLock,
    enforcement: crate::seam::Enforcement,
}

/// The raw socket of a [`Legacy`]: opened with it ([`Legacy::open`]), or on its first use
/// ([`Legacy::open_lazily`]: a command that is handed to the backend whole opens the socket
/// where it first reads, instead of returning to its caller between opening and using it).
struct Socket {
    family: Family,
    /// Where a lazily opened socket is made (`None`: the calling thread's namespace).
    netns: Option<crate::netns::Netns>,
    sock: std::sync::OnceLock<XtSocket>,
}

impl Socket {
    fn opened(sock: XtSocket) -> Socket {
        let once = std::sync::OnceLock::new();
        let family = sock.family();
        let _ = once.set(sock);
        Socket {
            family,
            netns: None,
            sock: once,
        }
    }

    /// The socket, opened now if it was not yet.
    fn get(&self) -> Result<&XtSocket> {
        if let Some(s) = self.sock.get() {
            return Ok(s);
        }
        let family = self.family;
        let sock = match &self.netns {
            None => XtSocket::open(family)?,
            Some(ns) => ns.run_in(move || XtSocket::open(family))?,
        };
        Ok(self.sock.get_or_init(|| sock))
    }

    fn family(&self) -> Family {
        self.family
    }

    fn read_consistent(&self, table: &str) -> Result<Table> {
        self.get()?.read_consistent(table)
    }

    fn read_raw(&self, table: &str) -> std::result::Result<(GetInfo, Vec<u8>), XtError> {
        self.get().map_err(XtError::Other)?.read_raw(table)
    }

    fn replace(&self, t: &Table) -> std::result::Result<Committed, XtError> {
        self.get().map_err(XtError::Other)?.replace(t)
    }

    fn replace_owned(&self, t: Table) -> std::result::Result<Committed, XtError> {
        self.get().map_err(XtError::Other)?.replace_owned(t)
    }
}

/// The result of a transaction: the closure's value, the attempts it took, and the commit
/// (`None` when nothing changed and no replace was made).
#[derive(Debug)]
pub struct Outcome<T> {
    /// What the closure returned (from its last attempt).
    pub value: T,
    /// How many times the table was read and the closure run (1 when nothing raced).
    pub attempts: u32,
    /// The replace that was made, or `None` when the closure changed nothing.
    pub committed: Option<Committed>,
}

impl Legacy {
    /// Opens one family's x_tables, writing under `lock`, checking and recording nothing
    /// (see [`Legacy::enforcing`]).
    pub fn open(family: Family, lock: XtablesLock) -> Result<Legacy> {
        Ok(Legacy {
            sock: Socket::opened(XtSocket::open(family)?),
            lock,
            enforcement: crate::seam::Enforcement::none(),
        })
    }

    /// As [`Legacy::open`], the socket opened on first use, in `netns` (`None`: the
    /// thread's own): before the lock is taken, so that a socket that cannot be opened
    /// fails the command as [`Legacy::open`] would, without waiting for the lock.
    pub fn open_lazily(
        family: Family,
        lock: XtablesLock,
        netns: Option<crate::netns::Netns>,
    ) -> Result<Legacy> {
        if family == Family::Inet {
            // XtSocket::open's refusal (inet has no x_tables), before anything is opened.
            XtSocket::open(family)?;
        }
        Ok(Legacy {
            sock: Socket {
                family,
                netns,
                sock: std::sync::OnceLock::new(),
            },
            lock,
            enforcement: crate::seam::Enforcement::none(),
        })
    }

    /// Checks every replace against `e`'s policy and records it with `e`'s auditor.
    pub fn enforcing(mut self, e: crate::seam::Enforcement) -> Legacy {
        self.enforcement = e;
        self
    }

    /// What this backend enforces.
    pub fn enforcement(&self) -> &crate::seam::Enforcement {
        &self.enforcement
    }

    /// The family (IPv4 `iptables` or IPv6 `ip6tables`) this handle's socket reads and writes.
    pub fn family(&self) -> Family {
        self.sock.family()
    }

    /// A consistent snapshot of a table (no lock needed: the kernel copies it whole).
    pub fn read(&self, table: &str) -> Result<Table> {
        self.sock.read_consistent(table)
    }

    /// Runs `plan` on a fresh read of `table` under the xtables lock and commits what it did
    /// as one replace. `plan` returns its value and whether it changed the table. When a
    /// writer that bypassed the lock changed the table in between (EAGAIN), the table is read
    /// again and `plan` runs again on it, up to 100 times (`kernel::MAX_ATTEMPTS`).
    pub fn transact<T>(
        &self,
        table: &str,
        mut plan: impl FnMut(&mut Table) -> Result<(T, bool)>,
    ) -> Result<Outcome<T>> {
        // Any closure may have changed the table: only the table as read against the table
        // about to be committed says how (under a policy, [`exec::judged_difference`]; an
        // auditor alone is told the table was replaced, [`replace_of`]).
        let compares = self.enforcement.policy.is_some();
        let active = self.enforcement.is_active();
        self.transact_judged(table, |t| {
            let before = compares.then(|| t.clone());
            let (value, changed) = plan(t)?;
            let judged = match &before {
                _ if !changed => Vec::new(),
                Some(b) => exec::judged_difference(b, t)?,
                None if active => vec![replace_of(t)],
                None => Vec::new(),
            };
            Ok((value, changed, judged))
        })
    }

    /// [`Self::transact`] for plans that say what they change as the policy and the audit
    /// see it ([`crate::seam::judge`]): `plan` returns its value, whether it changed the
    /// table, and its changes judged. They are checked by the policy and recorded before
    /// the replace, and the result after it; a replace refused because the table changed
    /// runs the plan, and so the judgement, again.
    fn transact_judged<T>(
        &self,
        table: &str,
        mut plan: impl FnMut(&mut Table) -> Result<(T, bool, Vec<crate::seam::Judged>)>,
    ) -> Result<Outcome<T>> {
        // A lazily opened socket is opened before the lock is waited for, as at open.
        self.sock.get()?;
        let _guard = self.lock.acquire()?;
        for attempt in 1..=MAX_ATTEMPTS {
            let mut t = self.sock.read_consistent(table)?;
            let (value, changed, judged) = plan(&mut t)?;
            if !changed {
                return Ok(Outcome {
                    value,
                    attempts: attempt,
                    committed: None,
                });
            }
            match enforce(&self.enforcement, judged, || self.sock.replace_owned(t))? {
                Ok(c) => {
                    return Ok(Outcome {
                        value,
                        attempts: attempt,
                        committed: Some(c),
                    });
                }
                Err(XtError::Changed) => {
                    // Past a few immediate retries, step aside briefly so a storm of
                    // bypassing writers gets through and the table settles.
                    if attempt > 3 {
                        std::thread::sleep(Duration::from_micros(200 * u64::from(attempt.min(50))));
                    }
                }
                Err(XtError::Other(e)) => return Err(e),
            }
        }
        Err(Error::GenerationConflict {
            attempts: MAX_ATTEMPTS,
        })
    }
}

/// What an audit record says of a replace when the difference was not computed (an auditor
/// without a policy, under [`Legacy::transact`]).
fn replace_of(t: &Table) -> crate::seam::Judged {
    let rules: usize = t.chains.iter().map(|c| c.rules.len()).sum();
    crate::seam::Judged {
        touches: Vec::new(),
        text: format!(
            "replace table {} {} ({} chains, {rules} rules)",
            t.family,
            t.name,
            t.chains.len()
        ),
        more: 0,
    }
}

/// Runs the one judgement ([`crate::seam::Enforcement::check`]), the attempt record,
/// `commit` and the result record (nothing when `e` checks and records nothing).
pub(crate) fn enforce<T>(
    e: &crate::seam::Enforcement,
    mut changes: Vec<crate::seam::Judged>,
    commit: impl FnOnce() -> std::result::Result<T, XtError>,
) -> Result<std::result::Result<T, XtError>> {
    use crate::nft::AuditOutcome;
    if !e.is_active() {
        return Ok(commit());
    }
    e.check(&mut changes)?;
    e.record(&changes, AuditOutcome::Attempt);
    let r = commit();
    match &r {
        Ok(_) => e.record(&changes, AuditOutcome::Committed),
        Err(XtError::Changed) => e.record(&changes, AuditOutcome::Retried),
        Err(XtError::Other(err)) => e.record(&changes, AuditOutcome::Failed(err)),
    }
    Ok(r)
}

/// Runs one iptables invocation on the x_tables backend (the one dispatch,
/// [`crate::seam::dispatch::execute`]); returns what to print.
pub fn execute(legacy: &Legacy, inv: &Invocation) -> Result<String> {
    crate::seam::dispatch::execute(&mut &*legacy, inv)
}

/// x_tables' side of the one dispatch: a listing reads the table whole; `-L -Z`, `-Z CHAIN
/// N` and every change are one replace.
impl crate::seam::dispatch::IptCommands for &Legacy {
    fn flavour(&self) -> crate::ipt::Flavour {
        crate::ipt::Flavour::Legacy
    }

    fn read_listing(
        &mut self,
        _family: Family,
        table: &str,
        _only: Option<&str>,
    ) -> Result<Vec<crate::ipt::listing::ChainListing>> {
        Ok(exec::chain_listings(&self.read(table)?))
    }

    /// List what is counted, then zero it, in one replace.
    fn list_and_zero(&mut self, inv: &Invocation, chain: Option<&str>) -> Result<String> {
        let words = |e| crate::seam::dispatch::listing_words(e, inv, crate::ipt::Flavour::Legacy);
        let zero = crate::seam::judge::zero(inv.family, &inv.table, chain);
        let out = self.transact_judged(&inv.table, |t| {
            let mut text = crate::ipt::listing::render_table(
                &exec::chain_listings(t),
                chain,
                inv,
                inv.family,
                crate::ipt::Flavour::Legacy,
            )
            .map_err(words)?;
            // With `-v`, `-Z`'s `Zeroing chain` lines after the listing.
            let mut a = LegacyTable::new(t, inv.verbose);
            crate::seam::interpret(&mut a, &Command::Zero(chain.map(str::to_string)))?;
            for l in &a.verbose_lines {
                text.push_str(l);
                text.push('\n');
            }
            Ok((text, true, vec![zero.clone()]))
        })?;
        Ok(out.value)
    }

    /// One rule's counters, in one replace.
    fn zero_rule(&mut self, inv: &Invocation, chain: &str, n: usize) -> Result<String> {
        let zero = crate::seam::judge::zero(inv.family, &inv.table, Some(chain));
        self.transact_judged(&inv.table, |t| {
            exec::zero_rule(t, chain, n)?;
            Ok(((), true, vec![zero.clone()]))
        })?;
        Ok(String::new())
    }

    fn change(&mut self, inv: &Invocation) -> Result<String> {
        let legacy: &Legacy = self;
        let check = inv.command.is_check();
        let out = legacy
            .transact_judged(&inv.table, |t| {
                let mut a = LegacyTable::new(t, inv.verbose).judging_for(&legacy.enforcement);
                crate::seam::interpret(&mut a, &inv.command)?;
                let judged = a.judged();
                Ok((
                    std::mem::take(&mut a.verbose_lines),
                    a.changed && !check,
                    judged,
                ))
            })
            .map_err(|e| crate::seam::dispatch::change_words(e, inv))?;
        if inv.verbose && out.attempts > 1 {
            use std::io::Write;
            // stderr: stdout stays exactly what iptables prints.
            let _ = writeln!(
                std::io::stderr().lock(),
                "xtnl: the table changed between read and replace (a writer bypassing the xtables lock); committed on attempt {}",
                out.attempts
            );
        }
        let mut text = String::new();
        if inv.verbose {
            for l in out.value {
                text.push_str(&l);
                text.push('\n');
            }
        }
        Ok(text)
    }
}

/// Applies parsed restore blocks: one replace per table (x_tables has no transaction across
/// tables; iptables-legacy-restore commits table by table too). Returns the replaces made.
pub fn restore(legacy: &Legacy, blocks: &[Block], noflush: bool) -> Result<usize> {
    let mut order: Vec<&str> = Vec::new();
    for b in blocks {
        if !order.contains(&b.table.as_str()) {
            order.push(&b.table);
        }
    }
    // A missing table is named at the line of its first block, as iptables-restore does.
    fn no_table<'a>(name: &'a str, blocks: &[Block]) -> impl FnOnce(Error) -> Error + 'a {
        let of_table = || blocks.iter().filter(|b| b.table == name);
        let line = of_table().next().map_or(0, |b| b.line);
        let commit = of_table().next_back().map_or(0, |b| b.commit_line);
        move |e| at_lines(e, name, line, commit)
    }
    // Under a policy the whole file is judged before the first table is replaced: x_tables
    // has no transaction across tables, so a block the policy denies must not find the
    // blocks before it committed already. (Each replace is judged again as it is made.)
    if legacy.enforcement.policy.is_some() && order.len() > 1 {
        let mut all = Vec::new();
        for name in &order {
            let mut t = legacy.read(name).map_err(no_table(name, blocks))?;
            let mut a = LegacyTable::new(&mut t, false).judging(true);
            for b in blocks.iter().filter(|b| b.table == *name) {
                crate::seam::restore_block(&mut a, b, noflush)?;
            }
            all.extend(a.judged());
        }
        legacy.enforcement.check(&mut all)?;
    }
    let mut replaces = 0;
    for name in order {
        let out = legacy
            .transact_judged(name, |t| {
                let mut a = LegacyTable::new(t, false).judging_for(&legacy.enforcement);
                for b in blocks.iter().filter(|b| b.table == name) {
                    crate::seam::restore_block_with(&mut a, b, noflush, |_, _, _| ())?;
                }
                Ok(((), a.changed, a.judged()))
            })
            .map_err(no_table(name, blocks))?;
        replaces += usize::from(out.committed.is_some());
    }
    Ok(replaces)
}

/// [`restore`] of blocks handed over. A file of one table outside a policy (kube-proxy's)
/// frees each parsed line once it is planned, so that the parse and the table are not
/// held at once; `reparse` gives the blocks again when the replace is planned anew
/// (`EAGAIN`). Other files go through [`restore`].
pub fn restore_owned(
    legacy: &Legacy,
    blocks: Vec<Block>,
    reparse: &mut dyn FnMut() -> Result<Vec<Block>>,
    noflush: bool,
) -> Result<usize> {
    let one = blocks.first().map(|b| (b.table.clone(), b.line));
    let commit = blocks.last().map_or(0, |b| b.commit_line);
    let Some((name, line)) = one.filter(|(n, _)| {
        legacy.enforcement.policy.is_none() && blocks.iter().all(|b| b.table == *n)
    }) else {
        return restore(legacy, &blocks, noflush);
    };
    let mut first = Some(blocks);
    let out = legacy
        .transact_judged(&name, |t| {
            let blocks = match first.take() {
                Some(b) => b,
                None => reparse()?,
            };
            let mut a = LegacyTable::new(t, false).judging_for(&legacy.enforcement);
            for b in blocks {
                crate::seam::restore_lines_with(&mut a, b.line, b.lines, noflush, |_, _, _| ())?;
            }
            Ok(((), a.changed, a.judged()))
        })
        .map_err(|e| at_lines(e, &name, line, commit))?;
    Ok(usize::from(out.committed.is_some()))
}

/// The one block of a restore input, parsed line by line as it is read, and read again
/// each time it is planned ([`restore_streamed`]).
pub trait BlockSource {
    /// The next line of the block, with its number; `None` at the end of the input, or at
    /// the first error reading or parsing it (which [`BlockSource::finish`] then returns).
    fn next_line(&mut self) -> Option<(usize, crate::ipt::restore_file::Line)>;
    /// Starts again from the first line (a plan made anew).
    fn rewind(&mut self) -> Result<()>;
    /// After the last line: the error that ended the input early, if any; else the line of
    /// the block's `COMMIT`.
    fn finish(&mut self) -> Result<usize>;
}

/// [`restore_owned`] of an input of one block (on table `name`, opened at line
/// `table_line`) that is parsed as it is planned: each line is parsed, applied to the table
/// in memory and freed before the next is read, so that the parsed file (some 6 times its
/// text) is never held whole beside the table, and the largest the heap grows is the
/// table's rules (iptables-legacy-restore reads its input the same way). An error reading
/// or parsing a line ends the plan before anything is replaced; a line the table refuses
/// is named as before (`line N failed`), and a parse error after it is not reached
/// (iptables-legacy-restore stops there too). Outside a policy only: a policy judges a
/// file whole before anything is sent.
pub fn restore_streamed(
    legacy: &Legacy,
    name: &str,
    table_line: usize,
    src: &mut dyn BlockSource,
    noflush: bool,
) -> Result<usize> {
    if legacy.enforcement.policy.is_some() {
        return Err(Error::InvalidInput(
            "a restore under a policy is judged whole before it is applied".into(),
        ));
    }
    let mut first = true;
    let mut commit = 0;
    let out = legacy.transact_judged(name, |t| {
        if !std::mem::take(&mut first) {
            src.rewind()?;
        }
        let mut a = LegacyTable::new(t, false).judging_for(&legacy.enforcement);
        let lines = std::iter::from_fn(|| src.next_line());
        crate::seam::restore_lines_with(&mut a, table_line, lines, noflush, |_, _, _| ())?;
        commit = src.finish()?;
        Ok(((), a.changed, a.judged()))
    });
    let out = out.map_err(|e| at_lines(e, name, table_line, commit))?;
    Ok(usize::from(out.committed.is_some()))
}

/// Where a restore's error about table `name` is named, as iptables-legacy-restore names
/// it: a missing table at the line of its first block (`line`); the kernel's refusal of the
/// table the blocks made (the replace) at the block's `COMMIT` line (`commit`), where
/// iptables-legacy-restore commits it (`iptables-restore: line N failed`). Errors already
/// placed at a line (a rule line refused while planned), the policy's and the lock's are
/// left as they are.
fn at_lines(e: Error, name: &str, line: usize, commit: usize) -> Error {
    match e {
        Error::NoSuchTable(_) => e
            .context(format!("table {name}"))
            .context(format!("line {line} failed")),
        Error::Rejected(_)
        | Error::NotFound(_)
        | Error::AlreadyExists(_)
        | Error::InUse(_)
        | Error::Unsupported(_)
        | Error::Netlink { .. }
            if commit > 0 =>
        {
            e.context(format!("line {commit} failed"))
        }
        e => e,
    }
}

/// The tables of a family the kernel has instantiated in this network namespace, in the
/// order iptables-legacy-save prints them (the order of `/proc/net/ip_tables_names`).
pub fn loaded_tables(family: Family) -> Vec<String> {
    let file = if family == Family::Ipv6 {
        "ip6_tables_names"
    } else {
        "ip_tables_names"
    };
    // thread-self: a thread may sit in another network namespace than the process.
    std::fs::read_to_string(format!("/proc/thread-self/net/{file}"))
        .map(|s| s.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The chains of a table as iptables-legacy lists them (or only `chain`), for the JSON
/// listing.
pub fn listings(
    legacy: &Legacy,
    table: &str,
    chain: Option<&str>,
) -> Result<Vec<crate::ipt::listing::ChainListing>> {
    let mut all = exec::chain_listings(&legacy.read(table)?);
    if let Some(c) = chain {
        all.retain(|x| x.name == c);
        if all.is_empty() {
            return Err(Error::NotFound(crate::OpFailure {
                index: 0,
                op: format!("list chain {c}"),
                errno: libc::ENOENT,
                ext_ack: None,
            })
            .context(crate::ipt::messages::Msg::NoChain.text(legacy.family())));
        }
    }
    Ok(all)
}

/// x_tables as a whole backend: iptables' commands and restore blocks applied to tables
/// read whole and replaced, its listings and its NAT-host commits.
impl crate::seam::Backend for Legacy {
    fn flavour(&self) -> crate::ipt::Flavour {
        crate::ipt::Flavour::Legacy
    }

    fn serves(&self, family: Family) -> bool {
        self.family() == family
    }

    fn execute(&mut self, inv: &Invocation) -> Result<String> {
        execute(self, inv)
    }

    fn restore(&mut self, blocks: &[Block], _family: Family, noflush: bool) -> Result<usize> {
        restore(self, blocks, noflush)
    }

    fn restore_owned(
        &mut self,
        blocks: Vec<Block>,
        reparse: &mut dyn FnMut() -> Result<Vec<Block>>,
        _family: Family,
        noflush: bool,
    ) -> Result<usize> {
        restore_owned(self, blocks, reparse, noflush)
    }

    /// A table the kernel has not loaded (or cannot read) has none.
    fn chain_names(&mut self, _family: Family, table: &str) -> Result<Vec<String>> {
        Ok(self
            .read(table)
            .map(|t| t.chains.into_iter().map(|c| c.name).collect())
            .unwrap_or_default())
    }
}

impl crate::seam::ListTables for Legacy {
    fn listings(
        &mut self,
        _family: Family,
        table: &str,
        chain: Option<&str>,
    ) -> Result<Vec<crate::ipt::listing::ChainListing>> {
        listings(self, table, chain)
    }

    fn save_body(&mut self, _family: Family, table: &str, counters: bool) -> Result<String> {
        Ok(exec::save_body(&self.read(table)?, counters))
    }

    fn saved_tables(&mut self, family: Family, table: Option<&str>) -> Result<Vec<String>> {
        Ok(match table {
            Some(t) => vec![t.to_string()],
            None => loaded_tables(family),
        })
    }
}
