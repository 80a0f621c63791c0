//! iptables' messages, in one place. Scripts match on these words, so every one is
//! byte-identical to what iptables 1.8.9 prints (the differential tests compare them with the
//! real tools). The program name is chosen by family: `iptables:` for IPv4, `ip6tables:`
//! for IPv6, as the two tools print them.
//!
//! The errors built here carry the library's error underneath ([`Error::Context`]), so
//! their kind and exit status are the inner one's.

#![deny(missing_docs)]

use crate::error::{Error, OpFailure};
use crate::model::Family;

/// One of iptables' messages (the text after `iptables: `).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Msg {
    /// A chain, target or match named does not exist.
    NoChain,
    /// No rule equal to the one given (`-D`/`-C` by specification).
    BadRule,
    /// `-N` of a chain that exists.
    ChainExists,
    /// `-E` to a name that exists.
    FileExists,
    /// `-X` of a chain still jumped to.
    TooManyLinks,
    /// `-X` of a chain that still holds rules.
    NotEmpty,
    /// `-P` of a chain that is not built in (or a policy for a user chain in a restore).
    BadBuiltin,
    /// `-X` of a built-in chain (iptables-nft's wording).
    CantDeleteBuiltin,
    /// `-E` of a built-in chain (iptables-nft's wording).
    CantRenameBuiltin,
    /// `-I CHAIN N` past the end.
    InsertTooBig,
    /// `-R CHAIN N` past the end.
    ReplaceTooBig,
    /// `-D CHAIN N` past the end.
    DeleteTooBig,
    /// `-Z CHAIN N` past the end (iptables-legacy).
    CounterTooBig,
    /// The kernel answered EINVAL (iptables-legacy prints every EINVAL so).
    InvalidArgument,
    /// `-P CHAIN NAME` with a name that is not a policy.
    BadPolicy,
}

impl Msg {
    /// The words after the program name.
    pub fn words(self) -> &'static str {
        match self {
            Msg::NoChain => "No chain/target/match by that name.",
            Msg::BadRule => "Bad rule (does a matching rule exist in that chain?).",
            Msg::ChainExists => "Chain already exists.",
            Msg::FileExists => "File exists.",
            Msg::TooManyLinks => "Too many links.",
            Msg::NotEmpty => "Directory not empty.",
            Msg::BadBuiltin => "Bad built-in chain name.",
            Msg::CantDeleteBuiltin => "Can't delete built-in chain.",
            Msg::CantRenameBuiltin => "Can't rename built-in chain.",
            Msg::InsertTooBig => "Index of insertion too big.",
            Msg::ReplaceTooBig => "Index of replacement too big.",
            Msg::DeleteTooBig => "Index of deletion too big.",
            Msg::CounterTooBig => "Index of counter too big.",
            Msg::InvalidArgument => "Invalid argument. Run `dmesg' for more information.",
            Msg::BadPolicy => "Bad policy name. Run `dmesg' for more information.",
        }
    }

    /// The whole line as the tool of `family` prints it.
    pub fn text(self, family: Family) -> String {
        format!("{}: {}", program(family), self.words())
    }
}

/// The tool's name as it starts its messages.
pub fn program(family: Family) -> &'static str {
    match family {
        Family::Ipv6 => "ip6tables",
        _ => "iptables",
    }
}

/// The failing operation a refusal names (index 0: iptables commands are one operation).
pub fn failure(errno: i32, op: String) -> OpFailure {
    OpFailure {
        index: 0,
        op,
        errno,
        ext_ack: None,
    }
}

/// Something named does not exist: "No chain/target/match by that name." (status 1).
pub fn not_found(family: Family, what: String) -> Error {
    Error::NotFound(failure(libc::ENOENT, what)).context(Msg::NoChain.text(family))
}

/// A refusal found before anything was sent, in iptables' words (status 1).
pub fn refused(family: Family, msg: Msg, detail: String) -> Error {
    Error::Precondition(detail).context(msg.text(family))
}

/// A chain still in use (jumped to, or holding rules), with the errno iptables reports.
pub fn in_use(family: Family, msg: Msg, detail: String, errno: i32) -> Error {
    Error::InUse(failure(errno, detail)).context(msg.text(family))
}

/// A name that exists already, with iptables' message for the command.
pub fn exists(family: Family, msg: Msg, detail: String) -> Error {
    Error::AlreadyExists(failure(libc::EEXIST, detail)).context(msg.text(family))
}

/// Kernel refusals in the words iptables uses for them (callers match on these); errors
/// already in iptables' words are left alone. `deleting_chain`: the command was `-X`.
pub fn kernel_words(e: Error, family: Family, deleting_chain: bool) -> Error {
    if matches!(e, Error::Context { .. } | Error::NoSuchTable(_)) {
        return e;
    }
    match e.kind() {
        crate::ErrorKind::NotFound => e.context(Msg::NoChain.text(family)),
        crate::ErrorKind::AlreadyExists => e.context(Msg::ChainExists.text(family)),
        crate::ErrorKind::InUse if deleting_chain => e.context(Msg::TooManyLinks.text(family)),
        _ => e,
    }
}

/// NFLOG's `--nflog-range` warning (libxt_NFLOG.c prints it when a rule is parsed, before
/// the rule's other checks; never when a rule is printed).
pub const NFLOG_RANGE_WARNING: &str = "warn: --nflog-range has never worked and is no longer \
supported, please use --nflog-size instead";

/// time's `--localtz` warning (libxt_time.c prints it as it reads the option).
pub const TIME_LOCALTZ_WARNING: &str = "WARNING: --localtz is being replaced by --kerneltz, \
since \"local\" is ambiguous. Note the kernel timezone has caveats - see manpage for details.";

thread_local! {
    /// The warnings iptables' extensions print on stderr while a rule is parsed, waiting
    /// for the drop-in's output path ([`take_warnings`]). One per thread: a service
    /// interprets each forwarded invocation on one thread.
    static WARNINGS: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Queues one of iptables' warning lines (without its newline) for stderr. (Only the
/// registry's extensions warn.)
#[cfg_attr(not(feature = "extensions"), allow(dead_code))]
pub(crate) fn warn(line: &str) {
    WARNINGS.with(|w| w.borrow_mut().push(line.to_owned()));
}

thread_local! {
    /// Whether a rule is being printed for iptables' output ([`printing`]).
    static PRINTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, which prints rules for the output (`-S`, `-L`, save, the `-v` echo): the
/// warnings an extension gives only when iptables prints its rule (`warn_printed`) are
/// queued within it, not when a rule is printed for xtnl's own use (a policy judgement, an
/// audit line, a check that it can be printed).
pub fn printing<R>(f: impl FnOnce() -> R) -> R {
    let was = PRINTING.with(|p| p.replace(true));
    let r = f();
    PRINTING.with(|p| p.set(was));
    r
}

/// Queues a warning iptables prints when it prints a rule (connlabel's `Warning: cannot
/// open /etc/xtables/connlabel.conf: ...`), if a rule is being printed for the output.
#[cfg_attr(not(feature = "extensions"), allow(dead_code))]
pub(crate) fn warn_printed(line: &str) {
    if PRINTING.with(std::cell::Cell::get) {
        warn(line);
    }
}

thread_local! {
    /// Whether this thread runs a command under one of iptables' names ([`set_as_iptables`]).
    static AS_IPTABLES: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks this thread as running commands under one of iptables' names (the drop-in, or a
/// service running a forwarded drop-in invocation): where iptables silently takes what xtnl's
/// own command line refuses (an NFLOG prefix over 63 bytes, which iptables-legacy cuts), the
/// drop-in takes it as iptables does.
pub fn set_as_iptables(on: bool) {
    AS_IPTABLES.with(|a| a.set(on));
}

/// Whether this thread runs under one of iptables' names ([`set_as_iptables`]).
pub fn as_iptables() -> bool {
    AS_IPTABLES.with(std::cell::Cell::get)
}

/// connlabel's warning when its label map cannot be opened starts so.
pub const CONNLABEL_MAP_WARNING: &str = "Warning: cannot open /etc/xtables/connlabel.conf: ";

/// After `-S CHAIN N` / `-L CHAIN N`, which print one rule of those rendered: keeps one
/// connlabel map warning for each connlabel match in `printed` (the rule iptables prints),
/// drops the others, keeps every other warning.
pub fn keep_printed_warnings(printed: &str) {
    let mut left = printed.matches("connlabel").count();
    WARNINGS.with(|w| {
        w.borrow_mut().retain(|l| {
            if !l.starts_with(CONNLABEL_MAP_WARNING) {
                return true;
            }
            let keep = left > 0;
            left = left.saturating_sub(1);
            keep
        })
    });
}

/// The warning lines queued on this thread since the last call, in the order iptables
/// prints them; the drop-in writes each with a newline to stderr before anything else it
/// writes there (an error), as iptables prints them while parsing.
pub fn take_warnings() -> Vec<String> {
    WARNINGS.with(|w| std::mem::take(&mut *w.borrow_mut()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_name_follows_the_family() {
        assert_eq!(
            Msg::NoChain.text(Family::Ipv4),
            "iptables: No chain/target/match by that name."
        );
        assert_eq!(
            Msg::BadRule.text(Family::Ipv6),
            "ip6tables: Bad rule (does a matching rule exist in that chain?)."
        );
        let e = in_use(
            Family::Ipv6,
            Msg::TooManyLinks,
            "delete chain X".into(),
            libc::EMLINK,
        );
        assert_eq!(e.to_string(), "ip6tables: Too many links.");
        assert_eq!(e.exit_status(), 1);
    }
}
