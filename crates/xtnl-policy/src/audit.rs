//! Audit records of every transaction a session sends or is denied, written as sudo logs a
//! command: a record of the attempt before anything is sent, and a record of the result after
//! (a helper killed in between still leaves the attempt). Each record names who asked (the
//! caller's uid and how the run was delegated), where (the network namespace's inode, so a
//! scratch namespace is not mistaken for the host's), what (each operation, rules in iptables
//! syntax, summarised past [`MAX_OPS_TEXT`] bytes) and the result.
//!
//! The sink is the system log, chosen so that a reader can tell a real record from a line any
//! local user could write: journald's native protocol first (`/run/systemd/journal/socket`,
//! where journald sets `_UID`, `_PID` and `_EXE` from the kernel's credentials of the
//! sender), else the syslog socket `/dev/log` with `SCM_CREDENTIALS` attached (which the
//! kernel checks: a sender can only claim its own pid and uid, or any with CAP_SYS_ADMIN /
//! CAP_SETUID), in RFC 3164's local form. A delegated run whose system log cannot be reached
//! writes its records to standard error instead (see docs/privileged-helper.md for how to
//! tell them apart).

use std::io::{IoSlice, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::error::Error;
use crate::nft::{AuditOutcome, Auditor, Op, RulePosition, Transaction};
use crate::privilege::{Elevation, Invoker};

/// The local syslog socket.
pub const SYSLOG_SOCKET: &str = "/dev/log";

/// journald's native-protocol socket.
pub const JOURNAL_SOCKET: &str = "/run/systemd/journal/socket";

/// Selects where audit lines go (`syslog`, `stderr`, `off`); ignored in a delegated run.
pub const AUDIT_ENV: &str = "XTNL_AUDIT";

/// Operation descriptions past this many bytes are summarised as a count, so that a line
/// fits the 1 KiB that RFC 3164 relays guarantee (local daemons take more, but a restore of
/// 10,000 rules must not make a 1 MB line).
pub const MAX_OPS_TEXT: usize = 768;

/// How long a record may wait for room in the log daemon's queue (a datagram socket blocks
/// while the receiver's queue is full) before the next sink is tried.
const SEND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// `LOG_AUTHPRIV` (10 << 3), the facility sudo uses for the same kind of record.
const FACILITY_AUTHPRIV: u8 = 10 << 3;
const SEVERITY_WARNING: u8 = 4;
const SEVERITY_NOTICE: u8 = 5;

/// Where audit lines go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditTarget {
    /// The system log: journald's native socket, else `/dev/log`.
    Syslog,
    /// Standard error, one `xtnl: audit: ...` line per record.
    Stderr,
    /// No audit records.
    Off,
}

impl AuditTarget {
    /// `syslog`, `stderr` or `off`, as `--audit` and `XTNL_AUDIT` spell it; `None` for anything
    /// else.
    pub fn parse(s: &str) -> Option<AuditTarget> {
        Some(match s {
            "syslog" => AuditTarget::Syslog,
            "stderr" => AuditTarget::Stderr,
            "off" => AuditTarget::Off,
            _ => return None,
        })
    }
}

thread_local! {
    /// The namespace the records written on this thread are about, when it is not the
    /// thread's own (see [`set_netns`]).
    static NETNS: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// The inode of the network namespace the calling thread's records are about: the one
/// [`set_netns`] set, else the thread's own (what `ip netns identify` and `lsns` show); 0 when
/// it cannot be read.
pub fn netns_inode() -> u64 {
    NETNS
        .with(|n| n.get())
        .unwrap_or_else(|| std::fs::metadata("/proc/thread-self/ns/net").map_or(0, |m| m.ino()))
}

/// Makes the records written on this thread name the network namespace at `path` (an nsfs
/// file, `/run/netns/NAME` or `/proc/PID/ns/net`), or, with `None`, the thread's own: a
/// thread that changes another namespace through sockets opened there (`xtnl serve`'s
/// engine) names the namespace changed, not its own.
pub fn set_netns(path: Option<&std::path::Path>) {
    let inode = path.map(|p| std::fs::metadata(p).map_or(0, |m| m.ino()));
    NETNS.with(|n| n.set(inode));
}

/// Whether a log viewer may show `c` as something other than one visible character: control
/// characters (C0, DEL, C1 with U+0085 NEXT LINE), the line and paragraph separators
/// (U+2028, U+2029), and the invisible format characters, among them every bidirectional
/// control (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), which can turn the rest of
/// a line around, and the zero-width ones.
pub fn unsafe_in_log(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{E0000}'..='\u{E007F}'
        )
}

/// One record's facts besides the operations.
#[derive(Debug, Clone, Copy)]
pub struct RecordHead<'a> {
    /// Who asked for the change.
    pub invoker: &'a Invoker,
    /// The network namespace's inode (see [`netns_inode`]).
    pub netns: u64,
    /// Pairs an attempt record with its result: `pid.sequence`.
    pub id: (u32, u64),
    /// Whether this is the attempt, the result, or a denial.
    pub outcome: &'a AuditOutcome<'a>,
}

fn phase(o: &AuditOutcome<'_>) -> &'static str {
    match o {
        AuditOutcome::Attempt => "attempt",
        _ => "result",
    }
}

fn result_of(o: &AuditOutcome<'_>) -> String {
    match o {
        AuditOutcome::Attempt => "pending".to_owned(),
        AuditOutcome::Retried => "retry".to_owned(),
        AuditOutcome::Committed => "ok".to_owned(),
        AuditOutcome::Denied(_) => "denied".to_owned(),
        AuditOutcome::Failed(e) => result_word(e),
    }
}

fn mode(invoker: &Invoker) -> &'static str {
    match invoker.elevation {
        Elevation::None => "direct",
        Elevation::Secure => "secure",
        Elevation::Tool(t) => t.as_str(),
        Elevation::Socket => "socket",
    }
}

/// The operations' text, bounded by [`MAX_OPS_TEXT`] (every character a log viewer could
/// show as a line or direction change, [`unsafe_in_log`], shown as `?`).
fn ops_text(count: usize, ops: &mut dyn Iterator<Item = String>) -> String {
    let mut text = String::new();
    let mut shown = 0;
    for d in ops {
        // An empty text is one past what a record shows, kept for the count only
        // (`seam::Judge`).
        if d.is_empty() || text.len() + d.len() > MAX_OPS_TEXT && shown > 0 {
            break;
        }
        if shown > 0 {
            text.push_str("; ");
        }
        let room = MAX_OPS_TEXT.saturating_sub(text.len()).max(64);
        text.extend(
            d.chars()
                .take(room)
                .map(|c| if unsafe_in_log(c) { '?' } else { c }),
        );
        shown += 1;
    }
    if shown < count {
        text.push_str(&format!("; ... and {} more", count - shown));
    }
    text
}

/// The text of an audit record (without the syslog header).
pub fn audit_line(
    invoker: &Invoker,
    count: usize,
    ops: &mut dyn Iterator<Item = String>,
    outcome: &AuditOutcome<'_>,
) -> String {
    let head = RecordHead {
        invoker,
        netns: netns_inode(),
        id: (std::process::id(), 0),
        outcome,
    };
    record_text(&head, count, ops)
}

/// `uid=.. euid=.. mode=.. result=.. ops=N: ...; via=.. netns=.. id=.. phase=..` in front.
pub fn record_text(
    h: &RecordHead<'_>,
    count: usize,
    ops: &mut dyn Iterator<Item = String>,
) -> String {
    format!(
        "{} id={}.{} via={} netns={} uid={} euid={} mode={} result={} ops={count}: {}",
        phase(h.outcome),
        h.id.0,
        h.id.1,
        h.invoker.via(),
        h.netns,
        h.invoker.uid,
        h.invoker.euid,
        mode(h.invoker),
        result_of(h.outcome),
        ops_text(count, ops)
    )
}

/// An operation as a record shows it: its description, and for a rule the rule in iptables
/// syntax (`insert rule ip nat PREROUTING: -t nat -I PREROUTING -p tcp ... -j vcld-1`).
pub fn describe_op(op: &Op) -> String {
    let (chain, position, rule) = match op {
        Op::AddEncodedRule {
            chain,
            position,
            rule,
        } => (chain, Some(*position), encoded_rule_text(chain, rule)),
        Op::ReplaceEncodedRule { chain, rule, .. } => (chain, None, encoded_rule_text(chain, rule)),
        Op::AddRule {
            chain,
            position,
            rule,
        } => (chain, Some(*position), model_rule_text(chain, rule)),
        Op::ReplaceRule { chain, rule, .. } => (chain, None, model_rule_text(chain, rule)),
        // A built-in chain made or given its policy: the policy in iptables syntax.
        Op::EnsureChain { table, chain } | Op::CreateChain { table, chain } => {
            return match &chain.base {
                Some(b) => format!(
                    "{op}: -t {} -P {} {}",
                    table.name,
                    chain.name,
                    match b.policy {
                        crate::model::ChainPolicy::Accept => "ACCEPT",
                        crate::model::ChainPolicy::Drop => "DROP",
                    }
                ),
                None => op.to_string(),
            };
        }
        other => return other.to_string(),
    };
    let verb = match position {
        Some(RulePosition::Head | RulePosition::Before(_)) => "-I",
        Some(_) => "-A",
        None => "-R",
    };
    let spec = rule
        .strip_prefix(&format!("-A {}", chain.name))
        .unwrap_or(&rule);
    format!("{op}: -t {} {verb} {}{spec}", chain.table.name, chain.name)
}

fn encoded_rule_text(chain: &crate::nft::ChainRef, rule: &crate::nft::EncodedRule) -> String {
    let raw = crate::nft::RawRule {
        chain: chain.clone(),
        handle: 0,
        exprs: rule.exprs.clone(),
        userdata: rule.userdata.clone(),
        sets: Default::default(),
    };
    let ipt = crate::ipt::compat::decode(&chain.table, &raw);
    crate::ipt::print::append_line(&chain.name, &ipt, false)
}

fn model_rule_text(chain: &crate::nft::ChainRef, rule: &crate::model::Rule) -> String {
    match crate::nft::codec::encode_native(rule, chain.table.family) {
        Ok(native) => encoded_rule_text(
            chain,
            &crate::nft::EncodedRule {
                exprs: native.exprs,
                userdata: native.userdata,
                compat: None,
                sets: Vec::new(),
            },
        ),
        Err(_) => format!("-A {} (unencodable rule)", chain.name),
    }
}

/// `EEXIST`-style names for kernel refusals, the error kind otherwise.
fn result_word(e: &Error) -> String {
    if let Some(f) = e.op_failure() {
        return format!("{:?}", nix::errno::Errno::from_raw(f.errno));
    }
    match e.innermost() {
        Error::NotPermitted { .. } => "EPERM".into(),
        Error::GenerationConflict { .. } => "conflict".into(),
        other => format!("{:?}", other.kind()).to_lowercase(),
    }
}

/// Writes audit records to the system log or standard error.
#[derive(Debug)]
pub struct LineAuditor {
    invoker: Invoker,
    target: AuditTarget,
    journal: PathBuf,
    socket: PathBuf,
    /// When the system log cannot be reached: write the record to standard error instead (a
    /// delegated run, where the record must not be lost) or drop it (an administrator's own
    /// run).
    fallback_to_stderr: bool,
    warned: AtomicBool,
    /// The id of this auditor's last attempt (or denial), which its result record repeats.
    last: AtomicU64,
    /// The system log, connected before anything is changed ([`LineAuditor::opened`]).
    sink: std::sync::Mutex<Option<Sink>>,
}

/// A connected system-log socket.
#[derive(Debug)]
enum Sink {
    Journal(UnixDatagram),
    Syslog(std::os::fd::OwnedFd),
}

/// Record ids, unique in the process (a service holds one auditor per client).
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

impl LineAuditor {
    /// An auditor writing to `target`, naming `invoker`; in a delegated run it falls back to
    /// standard error when the system log cannot be reached.
    pub fn new(invoker: Invoker, target: AuditTarget) -> LineAuditor {
        LineAuditor {
            invoker,
            target,
            journal: PathBuf::from(JOURNAL_SOCKET),
            socket: PathBuf::from(SYSLOG_SOCKET),
            fallback_to_stderr: invoker.delegated(),
            warned: AtomicBool::new(false),
            last: AtomicU64::new(0),
            sink: std::sync::Mutex::new(None),
        }
    }

    /// In a delegated run, connects to the system log now, before anything is read or
    /// changed, and refuses the run if it cannot: a caller must not be able to make the
    /// records go to a descriptor it owns (standard error), where they are under its control
    /// and where a write can block for as long as the caller likes while the helper holds the
    /// xtables lock (a pipe it never reads), or be lost (`ulimit -n` leaving no descriptor
    /// for the log socket). Elsewhere it does nothing: records are sent as they come.
    pub fn opened(self) -> crate::error::Result<Self> {
        if !self.invoker.delegated() || self.target != AuditTarget::Syslog {
            return Ok(self);
        }
        let journal = UnixDatagram::unbound().and_then(|s| {
            s.set_write_timeout(Some(SEND_TIMEOUT))?;
            s.connect(&self.journal)?;
            Ok(s)
        });
        let sink = match journal {
            Ok(s) => Sink::Journal(s),
            Err(je) => match self.syslog_socket(true) {
                Ok(fd) => Sink::Syslog(fd),
                Err(se) => {
                    return Err(Error::NotPermitted {
                        context: format!(
                            "a privileged run records every change in the system log, and \
                             neither {} ({je}) nor {} ({se}) can be reached; nothing was \
                             changed",
                            self.journal.display(),
                            self.socket.display()
                        ),
                    });
                }
            },
        };
        *self.sink.lock().unwrap_or_else(|p| p.into_inner()) = Some(sink);
        Ok(self)
    }

    /// A datagram socket for `/dev/log` with the send timeout set (and connected to it).
    fn syslog_socket(&self, connect: bool) -> std::io::Result<std::os::fd::OwnedFd> {
        use nix::sys::socket::{AddressFamily, SockFlag, SockType, UnixAddr, socket};
        let fd = socket(
            AddressFamily::Unix,
            SockType::Datagram,
            SockFlag::SOCK_CLOEXEC,
            None,
        )?;
        let timeout = nix::sys::time::TimeVal::new(SEND_TIMEOUT.as_secs() as _, 0);
        nix::sys::socket::setsockopt(&fd, nix::sys::socket::sockopt::SendTimeout, &timeout)?;
        if connect {
            nix::sys::socket::connect(fd.as_raw_fd(), &UnixAddr::new(&self.socket)?)?;
        }
        Ok(fd)
    }
    /// Another syslog socket (tests; hosts with a relocated `/dev/log`).
    pub fn with_socket(mut self, path: impl Into<PathBuf>) -> Self {
        self.socket = path.into();
        self
    }
    /// Another journald socket (tests).
    pub fn with_journal_socket(mut self, path: impl Into<PathBuf>) -> Self {
        self.journal = path.into();
        self
    }
    /// Whether to fall back to standard error when the system log cannot be reached (default:
    /// in a delegated run only).
    pub fn with_stderr_fallback(mut self, yes: bool) -> Self {
        self.fallback_to_stderr = yes;
        self
    }

    fn to_stderr(line: &str) {
        let _ = writeln!(std::io::stderr().lock(), "xtnl: audit: {line}");
    }

    /// Standard error when it is the caller's (a delegated run whose system log, reached
    /// before the change, went away since): one write of at most `PIPE_BUF` bytes, made only if
    /// the descriptor takes it within [`SEND_TIMEOUT`], so that a caller cannot block the
    /// helper (which may hold the xtables lock) with a pipe it never reads.
    fn to_callers_stderr(line: &str) {
        use std::os::fd::AsFd;
        let mut text = format!("xtnl: audit: {line}");
        let mut end = text.len().min(4095);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('\n');
        let stderr = std::io::stderr();
        let mut fds = [nix::poll::PollFd::new(
            stderr.as_fd(),
            nix::poll::PollFlags::POLLOUT,
        )];
        let ms = nix::poll::PollTimeout::try_from(SEND_TIMEOUT.as_millis() as i32)
            .unwrap_or(nix::poll::PollTimeout::ZERO);
        if matches!(nix::poll::poll(&mut fds, ms), Ok(n) if n > 0) {
            let _ = nix::unistd::write(stderr.as_fd(), text.as_bytes());
        }
    }

    /// journald's native protocol: `KEY=value` lines in one datagram (values hold no
    /// newline: control characters were replaced).
    fn to_journal(&self, h: &RecordHead<'_>, line: &str, severity: u8) -> std::io::Result<()> {
        let mut m = String::with_capacity(line.len() + 256);
        let mut field = |k: &str, v: &str| {
            m.push_str(k);
            m.push('=');
            m.extend(v.chars().map(|c| if c == '\n' { ' ' } else { c }));
            m.push('\n');
        };
        field("MESSAGE", line);
        field("PRIORITY", &severity.to_string());
        field("SYSLOG_FACILITY", &(FACILITY_AUTHPRIV >> 3).to_string());
        field("SYSLOG_IDENTIFIER", "xtnl");
        field("XTNL_PHASE", phase(h.outcome));
        field("XTNL_ID", &format!("{}.{}", h.id.0, h.id.1));
        field("XTNL_CALLER_UID", &h.invoker.uid.to_string());
        field("XTNL_VIA", h.invoker.via());
        field("XTNL_NETNS", &h.netns.to_string());
        field("XTNL_RESULT", &result_of(h.outcome));
        if let Some(Sink::Journal(s)) = &*self.sink.lock().unwrap_or_else(|p| p.into_inner()) {
            return s.send(m.as_bytes()).map(|_| ());
        }
        let sock = UnixDatagram::unbound()?;
        sock.set_write_timeout(Some(SEND_TIMEOUT))?;
        sock.send_to(m.as_bytes(), &self.journal).map(|_| ())
    }

    /// RFC 3164 to `/dev/log`, with this process's credentials attached.
    fn to_syslog(&self, line: &str, severity: u8) -> std::io::Result<()> {
        use nix::sys::socket::{ControlMessage, MsgFlags, UnixAddr, UnixCredentials, sendmsg};
        let msg = format!(
            "<{}>xtnl[{}]: {line}",
            FACILITY_AUTHPRIV | severity,
            std::process::id()
        );
        let creds = UnixCredentials::new();
        let cmsg = [ControlMessage::ScmCredentials(&creds)];
        let iov = [IoSlice::new(msg.as_bytes())];
        if let Some(Sink::Syslog(fd)) = &*self.sink.lock().unwrap_or_else(|p| p.into_inner()) {
            sendmsg::<UnixAddr>(fd.as_raw_fd(), &iov, &cmsg, MsgFlags::empty(), None)?;
            return Ok(());
        }
        let fd = self.syslog_socket(false)?;
        let addr = UnixAddr::new(&self.socket)?;
        sendmsg(fd.as_raw_fd(), &iov, &cmsg, MsgFlags::empty(), Some(&addr))?;
        Ok(())
    }

    fn write(&self, h: &RecordHead<'_>, line: &str) {
        let severity = match h.outcome {
            AuditOutcome::Attempt | AuditOutcome::Committed | AuditOutcome::Retried => {
                SEVERITY_NOTICE
            }
            _ => SEVERITY_WARNING,
        };
        match self.target {
            AuditTarget::Off => {}
            AuditTarget::Stderr => Self::to_stderr(line),
            AuditTarget::Syslog => {
                let Err(journal) = self.to_journal(h, line, severity) else {
                    return;
                };
                let Err(syslog) = self.to_syslog(line, severity) else {
                    return;
                };
                if self.fallback_to_stderr {
                    // Never fail the change because of the audit.
                    if !self.warned.swap(true, Ordering::Relaxed) {
                        Self::to_callers_stderr(&format!(
                            "cannot write to {} ({journal}) nor {} ({syslog}); audit lines go \
                             to standard error",
                            self.journal.display(),
                            self.socket.display()
                        ));
                    }
                    Self::to_callers_stderr(line);
                }
            }
        }
    }

    fn record_with(
        &self,
        count: usize,
        ops: &mut dyn Iterator<Item = String>,
        outcome: AuditOutcome<'_>,
    ) {
        if self.target == AuditTarget::Off {
            return;
        }
        // An attempt opens a new id; its result (and a denial, which has no attempt) uses
        // the current one, or a new one.
        let seq = match outcome {
            AuditOutcome::Attempt | AuditOutcome::Denied(_) => {
                let id = SEQUENCE.fetch_add(1, Ordering::Relaxed) + 1;
                self.last.store(id, Ordering::Relaxed);
                id
            }
            _ => self.last.load(Ordering::Relaxed),
        };
        let head = RecordHead {
            invoker: &self.invoker,
            netns: netns_inode(),
            id: (std::process::id(), seq),
            outcome: &outcome,
        };
        let line = record_text(&head, count, ops);
        self.write(&head, &line);
    }
}

impl Auditor for LineAuditor {
    fn record(
        &self,
        count: usize,
        ops: &mut dyn Iterator<Item = String>,
        outcome: AuditOutcome<'_>,
    ) {
        self.record_with(count, ops, outcome)
    }
    fn record_tx(&self, tx: &Transaction, outcome: AuditOutcome<'_>) {
        self.record_with(tx.len(), &mut tx.ops().iter().map(describe_op), outcome)
    }
    /// A record shows at most [`MAX_OPS_TEXT`] bytes of operations, each at least one.
    fn rules_read(&self) -> usize {
        MAX_OPS_TEXT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv() -> Invoker {
        Invoker {
            uid: 1000,
            euid: 0,
            elevation: Elevation::Secure,
        }
    }

    #[test]
    fn line_names_caller_ops_and_result() {
        let ops = [
            "add chain ip nat vcld-1".to_string(),
            "add rule ip nat PREROUTING".into(),
        ];
        let l = audit_line(&inv(), 2, &mut ops.into_iter(), &AuditOutcome::Committed);
        let want = format!(
            "result id={}.0 via=setuid netns={} uid=1000 euid=0 mode=secure result=ok ops=2: add \
             chain ip nat vcld-1; add rule ip nat PREROUTING",
            std::process::id(),
            netns_inode()
        );
        assert_eq!(l, want);
        assert_ne!(netns_inode(), 0);
    }

    #[test]
    fn long_transactions_are_summarised() {
        let mut ops = (0..10_000).map(|i| format!("add rule ip nat vcld-{i}"));
        let l = audit_line(&inv(), 10_000, &mut ops, &AuditOutcome::Committed);
        assert!(l.len() < 1000, "{}", l.len());
        assert!(l.ends_with(" more"), "{l}");
    }

    #[test]
    fn kernel_refusal_is_named_by_errno() {
        let e = Error::from_op_failure(crate::OpFailure {
            index: 0,
            op: "create chain ip nat x".into(),
            errno: libc::EEXIST,
            ext_ack: None,
        });
        let l = audit_line(
            &inv(),
            1,
            &mut std::iter::once("create chain ip nat x".to_string()),
            &AuditOutcome::Failed(&e),
        );
        assert!(l.contains("result=EEXIST"), "{l}");
    }

    #[test]
    fn syslog_datagram_format() {
        // Under the workspace's target/, like every scratch file of the tests.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../target")
            .join(format!("xtnl-audit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sock = dir.join("log");
        let _ = std::fs::remove_file(&sock);
        let server = UnixDatagram::bind(&sock).unwrap();
        let a = LineAuditor::new(inv(), AuditTarget::Syslog)
            .with_journal_socket(dir.join("no-journal"))
            .with_socket(&sock);
        let one = || std::iter::once("flush chain ip nat vcld-1".to_string());
        a.record(1, &mut one(), AuditOutcome::Attempt);
        a.record(1, &mut one(), AuditOutcome::Committed);
        let mut buf = [0u8; 2048];
        let pid = std::process::id();
        let ns = netns_inode();
        for (phase, result, pri) in [("attempt", "pending", 85), ("result", "ok", 85)] {
            let n = server.recv(&mut buf).unwrap();
            let got = String::from_utf8_lossy(&buf[..n]).into_owned();
            let want = format!(
                "<{pri}>xtnl[{pid}]: {phase} id={pid}.1 via=setuid netns={ns} uid=1000 euid=0 \
                 mode=secure result={result} ops=1: flush chain ip nat vcld-1"
            );
            assert_eq!(got, want);
        }

        // With a journal socket, the native protocol with its fields.
        let journal = dir.join("journal");
        let jserver = UnixDatagram::bind(&journal).unwrap();
        let a = LineAuditor::new(inv(), AuditTarget::Syslog)
            .with_journal_socket(&journal)
            .with_socket(&sock);
        a.record(1, &mut one(), AuditOutcome::Attempt);
        let n = jserver.recv(&mut buf).unwrap();
        let got = String::from_utf8_lossy(&buf[..n]).into_owned();
        for f in [
            "SYSLOG_IDENTIFIER=xtnl\n",
            "PRIORITY=5\n",
            "SYSLOG_FACILITY=10\n",
            "XTNL_PHASE=attempt\n",
            "XTNL_CALLER_UID=1000\n",
            "XTNL_VIA=setuid\n",
            "XTNL_RESULT=pending\n",
        ] {
            assert!(got.contains(f), "{f:?} in {got:?}");
        }
        assert!(got.starts_with("MESSAGE=attempt id="), "{got}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
