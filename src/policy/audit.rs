//! One audit line per transaction a session committed, failed or was denied: who asked (the
//! invoker's uid), what (the operations' short descriptions, as in error messages) and the
//! result. To syslog by default, through the `/dev/log` datagram socket in RFC 3164's local
//! form (`<PRI>xtnl[pid]: message`, which syslogd, rsyslog and journald all accept and stamp
//! with the time of receipt), so no libc `syslog(3)` is needed; or to standard error.

use std::io::Write;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::Error;
use crate::nft::{AuditOutcome, Auditor};
use crate::privilege::{Elevation, Invoker};

/// The local syslog socket.
pub const SYSLOG_SOCKET: &str = "/dev/log";

/// Selects where audit lines go (`syslog`, `stderr`, `off`); ignored in a delegated run.
pub const AUDIT_ENV: &str = "XTNL_AUDIT";

/// Operation descriptions past this many bytes are summarised as a count, so that a line
/// fits the 1 KiB that RFC 3164 relays guarantee (local daemons take more, but a restore of
/// 10,000 rules must not make a 1 MB line).
const MAX_OPS_TEXT: usize = 768;

/// `LOG_AUTHPRIV` (10 << 3), the facility sudo uses for the same kind of record.
const FACILITY_AUTHPRIV: u8 = 10 << 3;
const SEVERITY_WARNING: u8 = 4;
const SEVERITY_NOTICE: u8 = 5;

/// Where audit lines go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditTarget {
    Syslog,
    Stderr,
    Off,
}

impl AuditTarget {
    pub fn parse(s: &str) -> Option<AuditTarget> {
        Some(match s {
            "syslog" => AuditTarget::Syslog,
            "stderr" => AuditTarget::Stderr,
            "off" => AuditTarget::Off,
            _ => return None,
        })
    }
}

/// The text of an audit line (without the syslog header).
pub fn audit_line(
    invoker: &Invoker,
    count: usize,
    ops: &mut dyn Iterator<Item = String>,
    outcome: &AuditOutcome<'_>,
) -> String {
    let mode = match invoker.elevation {
        Elevation::None => "direct",
        Elevation::Secure => "secure",
        Elevation::Sudo => "sudo",
        Elevation::Socket => "socket",
    };
    let result = match outcome {
        AuditOutcome::Committed => "ok".to_owned(),
        AuditOutcome::Denied(_) => "denied".to_owned(),
        AuditOutcome::Failed(e) => result_word(e),
    };
    let mut text = String::new();
    let mut shown = 0;
    for d in ops {
        if text.len() + d.len() > MAX_OPS_TEXT && shown > 0 {
            break;
        }
        if shown > 0 {
            text.push_str("; ");
        }
        text.extend(d.chars().map(|c| if c.is_control() { '?' } else { c }));
        shown += 1;
    }
    if shown < count {
        text.push_str(&format!("; ... and {} more", count - shown));
    }
    format!(
        "uid={} euid={} mode={mode} result={result} ops={count}: {text}",
        invoker.uid, invoker.euid
    )
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

/// Writes audit lines to syslog or standard error.
#[derive(Debug)]
pub struct LineAuditor {
    invoker: Invoker,
    target: AuditTarget,
    socket: PathBuf,
    /// When syslog cannot be reached: write the line to standard error instead (a delegated
    /// run, where the record must not be lost) or drop it (an administrator's own run).
    fallback_to_stderr: bool,
    warned: AtomicBool,
}

impl LineAuditor {
    pub fn new(invoker: Invoker, target: AuditTarget) -> LineAuditor {
        LineAuditor {
            invoker,
            target,
            socket: PathBuf::from(SYSLOG_SOCKET),
            fallback_to_stderr: invoker.delegated(),
            warned: AtomicBool::new(false),
        }
    }
    /// Another syslog socket (tests; hosts with a relocated `/dev/log`).
    pub fn with_socket(mut self, path: impl Into<PathBuf>) -> Self {
        self.socket = path.into();
        self
    }
    pub fn with_stderr_fallback(mut self, yes: bool) -> Self {
        self.fallback_to_stderr = yes;
        self
    }

    fn to_stderr(line: &str) {
        let _ = writeln!(std::io::stderr().lock(), "xtnl: audit: {line}");
    }

    fn to_syslog(&self, line: &str, severity: u8) {
        let msg = format!(
            "<{}>xtnl[{}]: {line}",
            FACILITY_AUTHPRIV | severity,
            std::process::id()
        );
        let sent = UnixDatagram::unbound().and_then(|s| s.send_to(msg.as_bytes(), &self.socket));
        if let Err(e) = sent
            && self.fallback_to_stderr
        {
            // Never fail the change because of the audit: it is committed already.
            if !self.warned.swap(true, Ordering::Relaxed) {
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "xtnl: audit: cannot write to {} ({e}); audit lines go to standard error",
                    self.socket.display()
                );
            }
            Self::to_stderr(line);
        }
    }
}

impl Auditor for LineAuditor {
    fn record(
        &self,
        count: usize,
        ops: &mut dyn Iterator<Item = String>,
        outcome: AuditOutcome<'_>,
    ) {
        if self.target == AuditTarget::Off {
            return;
        }
        let line = audit_line(&self.invoker, count, ops, &outcome);
        match self.target {
            AuditTarget::Syslog => {
                let severity = match outcome {
                    AuditOutcome::Committed => SEVERITY_NOTICE,
                    _ => SEVERITY_WARNING,
                };
                self.to_syslog(&line, severity)
            }
            AuditTarget::Stderr => Self::to_stderr(&line),
            AuditTarget::Off => {}
        }
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
        assert_eq!(
            l,
            "uid=1000 euid=0 mode=secure result=ok ops=2: add chain ip nat vcld-1; add rule ip nat PREROUTING"
        );
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
        // Under target/, like every scratch file of the tests.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target")
            .join(format!("xtnl-audit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sock = dir.join("log");
        let _ = std::fs::remove_file(&sock);
        let server = UnixDatagram::bind(&sock).unwrap();
        let a = LineAuditor::new(inv(), AuditTarget::Syslog).with_socket(&sock);
        a.record(
            1,
            &mut std::iter::once("flush chain ip nat vcld-1".to_string()),
            AuditOutcome::Committed,
        );
        let mut buf = [0u8; 2048];
        let n = server.recv(&mut buf).unwrap();
        let got = String::from_utf8_lossy(&buf[..n]).into_owned();
        let want = format!(
            "<85>xtnl[{}]: uid=1000 euid=0 mode=secure result=ok ops=1: flush chain ip nat vcld-1",
            std::process::id()
        );
        assert_eq!(got, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
