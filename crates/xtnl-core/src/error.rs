//! One error type for the whole library, with kinds a caller can act on and the exit status
//! iptables would use for each.

#![deny(missing_docs)]

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use xtnl_wire::WireError;

/// iptables' exit statuses (`enum xtables_exittype`), which callers of `/sbin/iptables` test.
pub mod exit_status {
    /// `xtables_exittype` OTHER_PROBLEM: a kernel refusal of a well-formed request (no such chain, chain in use, ...).
    pub const OTHER_PROBLEM: i32 = 1;
    /// `xtables_exittype` PARAMETER_PROBLEM: bad command-line parameters or input; iptables prints a usage hint.
    pub const PARAMETER_PROBLEM: i32 = 2;
    /// iptables' VERSION_PROBLEM, which it uses for a table it does not know.
    pub const VERSION_PROBLEM: i32 = 3;
    /// `xtables_exittype` RESOURCE_PROBLEM: the lock, permissions, a missing kernel module, netlink I/O.
    pub const RESOURCE_PROBLEM: i32 = 4;
    /// xtnl's own: the policy file denied the change (iptables never exits with 5).
    pub const POLICY_DENIED: i32 = 5;
    /// xtnl's own: the policy file is missing where one is required, unsafe, or invalid.
    pub const POLICY_INVALID: i32 = 6;
}

/// One operation of a batch that the kernel refused: which one, what it was, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpFailure {
    /// Index of the operation in its transaction (0-based, in the order it was added).
    pub index: usize,
    /// What the operation was, e.g. `add rule ip nat vcld-5205`.
    pub op: String,
    /// The errno the kernel answered with (positive).
    pub errno: i32,
    /// The kernel's extended-ack text, when it sent one.
    pub ext_ack: Option<String>,
}

impl OpFailure {
    /// Whether the operation adds or replaces a rule (not a chain or table operation).
    pub fn is_rule_op(&self) -> bool {
        ["add rule ", "insert rule ", "replace rule "]
            .iter()
            .any(|p| self.op.starts_with(p))
    }
}

impl std::fmt::Display for OpFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "operation #{} ({}): {}",
            self.index,
            self.op,
            nix::errno::Errno::from_raw(self.errno).desc()
        )?;
        if let Some(msg) = &self.ext_ack {
            write!(f, " ({msg})")?;
        }
        // nf_tables reports a jump that closes a cycle as ELOOP, or, when its validation
        // runs past the 16-deep jump stack first, EMLINK: texts that say nothing of chains.
        if self.errno == libc::ELOOP || (self.errno == libc::EMLINK && self.is_rule_op()) {
            f.write_str(": the rule's jump or goto would make a loop between chains")?;
        }
        Ok(())
    }
}

/// Everything the library can fail with. Kernel refusals carry the [`OpFailure`] they answered;
/// [`Error::kind`] groups the variants for callers that branch, [`Error::exit_status`] maps
/// them to iptables' exit statuses.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The xtables lock is held by another process and the wait policy gave up.
    #[error(
        "can't lock {}: another app is currently holding the xtables lock{}",
        path.display(),
        waited.map(|d| format!("; stopped waiting after {}s", d.as_secs_f64())).unwrap_or_default()
    )]
    LockBusy {
        /// The lock file that was busy.
        path: PathBuf,
        /// How long the wait policy waited before giving up (`None`: it did not wait).
        waited: Option<Duration>,
    },

    /// The lock file could not be opened or locked.
    #[error("can't open lock file {}", path.display())]
    LockFile {
        /// The lock file that could not be opened or locked.
        path: PathBuf,
        /// The `open(2)` or `flock(2)` error.
        #[source]
        source: io::Error,
    },

    /// A table, chain or rule named by an operation does not exist (ENOENT).
    #[error("no such object: {0}")]
    NotFound(OpFailure),

    /// The object already exists (EEXIST, from an exclusive create).
    #[error("already exists: {0}")]
    AlreadyExists(OpFailure),

    /// The chain is still referenced by a jump or still holds rules (EBUSY).
    #[error("chain in use: {0}")]
    InUse(OpFailure),

    /// The caller lacks CAP_NET_ADMIN in this network namespace.
    #[error(
        "permission denied: changing or reading nf_tables needs CAP_NET_ADMIN in this network \
         namespace (run as root, or grant the capability: setcap cap_net_admin+ep <binary>); {context}"
    )]
    NotPermitted {
        /// What was being done: the operation or the socket call that got EPERM/EACCES.
        context: String,
    },

    /// The kernel lacks support for something the operation needs (EOPNOTSUPP, missing module).
    #[error("not supported by this kernel: {0}")]
    Unsupported(OpFailure),

    /// The kernel refused an operation as malformed or inconsistent (EINVAL and others).
    #[error("kernel refused {0}")]
    Rejected(OpFailure),

    /// The ruleset kept changing under us; the transaction was re-planned this many times.
    #[error("the ruleset changed during each of {attempts} attempts (generation id conflict)")]
    GenerationConflict {
        /// How many times the plan ran, each one lost to a concurrent commit (ERESTART).
        attempts: u32,
    },

    /// The netlink socket itself failed.
    #[error("netlink I/O: {context}")]
    Netlink {
        /// The socket call that failed (`sendmsg`, `recvmsg`, `bind`, ...).
        context: &'static str,
        /// The error the call returned.
        #[source]
        source: io::Error,
    },

    /// The kernel sent something we could not decode.
    #[error("malformed netlink reply")]
    Malformed(#[from] WireError),

    /// The caller's input is invalid; nothing was sent to the kernel.
    #[error("invalid input: {0}")]
    InvalidInput(String),

    /// The request does not fit the ruleset as it is (a rule index past the end, no rule
    /// equal to the one given, ...); found before anything was sent.
    #[error("{0}")]
    Precondition(String),

    /// The table does not exist and is not one xtnl creates on demand.
    #[error("table '{0}' does not exist")]
    NoSuchTable(String),

    /// The policy denied a change; nothing was sent to the kernel. The message names the
    /// policy line closest to allowing it and the operation denied.
    #[error("{0}")]
    PolicyDenied(String),

    /// The policy file cannot be used (missing in a delegated run, unsafe ownership or mode,
    /// invalid TOML or keys); nothing is changed.
    #[error("{0}")]
    PolicyInvalid(String),

    /// A failure in a front end's own words (iptables' messages, which callers match on),
    /// with the library's error underneath; its kind and exit status are the inner one's.
    #[error("{message}")]
    Context {
        /// The front end's message, printed instead of the inner error's.
        message: String,
        /// The library's error, which gives the kind and exit status.
        #[source]
        source: Box<Error>,
    },
}

/// What kind of failure an [`Error`] is, for callers that branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// [`Error::LockBusy`]: another process holds the xtables lock.
    LockBusy,
    /// [`Error::NotFound`] (ENOENT) or [`Error::NoSuchTable`].
    NotFound,
    /// [`Error::AlreadyExists`] (EEXIST).
    AlreadyExists,
    /// [`Error::InUse`] (EBUSY, ENOTEMPTY, EMLINK outside a rule).
    InUse,
    /// [`Error::NotPermitted`] (EPERM, EACCES: no CAP_NET_ADMIN).
    NotPermitted,
    /// [`Error::Unsupported`] (EOPNOTSUPP and friends: a kernel module is missing).
    Unsupported,
    /// [`Error::Rejected`] by the kernel (EINVAL and others).
    InvalidArgument,
    /// The request does not fit the ruleset as read (see [`Error::Precondition`]); found
    /// before anything was sent, so not the kernel's refusal.
    Precondition,
    /// [`Error::GenerationConflict`]: the re-plan attempts ran out.
    GenerationConflict,
    /// [`Error::LockFile`], [`Error::Netlink`] or [`Error::Malformed`]: I/O with the kernel or the lock file failed.
    Io,
    /// [`Error::InvalidInput`]: the caller's input, refused before anything was sent.
    InvalidInput,
    /// [`Error::PolicyDenied`]: the policy refused the change.
    PolicyDenied,
    /// [`Error::PolicyInvalid`]: the policy file is missing, unsafe or invalid.
    PolicyInvalid,
}

impl ErrorKind {
    /// The kind's name in xtnl's JSON output (`"kind"` of an error object; docs/json.md).
    /// The match stays exhaustive here, in the crate that defines the kind, so that a new
    /// kind cannot go without a name (the enum is `#[non_exhaustive]` for other crates).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::LockBusy => "lock_busy",
            ErrorKind::NotFound => "not_found",
            ErrorKind::AlreadyExists => "already_exists",
            ErrorKind::InUse => "in_use",
            ErrorKind::NotPermitted => "not_permitted",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::InvalidArgument => "rejected_by_kernel",
            ErrorKind::Precondition => "precondition_failed",
            ErrorKind::GenerationConflict => "generation_conflict",
            ErrorKind::Io => "io",
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::PolicyDenied => "policy_denied",
            ErrorKind::PolicyInvalid => "policy_invalid",
        }
    }
}

impl Error {
    /// The kind of failure, looking through any [`Error::Context`] wording.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::LockBusy { .. } => ErrorKind::LockBusy,
            Error::LockFile { .. } | Error::Netlink { .. } | Error::Malformed(_) => ErrorKind::Io,
            Error::NotFound(_) => ErrorKind::NotFound,
            Error::AlreadyExists(_) => ErrorKind::AlreadyExists,
            Error::InUse(_) => ErrorKind::InUse,
            Error::NotPermitted { .. } => ErrorKind::NotPermitted,
            Error::Unsupported(_) => ErrorKind::Unsupported,
            Error::Rejected(_) => ErrorKind::InvalidArgument,
            Error::GenerationConflict { .. } => ErrorKind::GenerationConflict,
            Error::InvalidInput(_) => ErrorKind::InvalidInput,
            Error::Precondition(_) => ErrorKind::Precondition,
            Error::NoSuchTable(_) => ErrorKind::NotFound,
            Error::PolicyDenied(_) => ErrorKind::PolicyDenied,
            Error::PolicyInvalid(_) => ErrorKind::PolicyInvalid,
            Error::Context { source, .. } => source.kind(),
        }
    }

    /// The exit status iptables uses for the same failure.
    pub fn exit_status(&self) -> i32 {
        use exit_status::*;
        if let Error::NoSuchTable(_) = self.innermost() {
            return VERSION_PROBLEM;
        }
        match self.kind() {
            ErrorKind::InvalidInput => PARAMETER_PROBLEM,
            ErrorKind::NotFound
            | ErrorKind::AlreadyExists
            | ErrorKind::InUse
            | ErrorKind::InvalidArgument
            | ErrorKind::Precondition => OTHER_PROBLEM,
            ErrorKind::LockBusy
            | ErrorKind::NotPermitted
            | ErrorKind::Unsupported
            | ErrorKind::GenerationConflict
            | ErrorKind::Io => RESOURCE_PROBLEM,
            ErrorKind::PolicyDenied => POLICY_DENIED,
            ErrorKind::PolicyInvalid => POLICY_INVALID,
        }
    }

    /// The failing operation, for kernel refusals.
    pub fn op_failure(&self) -> Option<&OpFailure> {
        match self {
            Error::NotFound(f)
            | Error::AlreadyExists(f)
            | Error::InUse(f)
            | Error::Unsupported(f)
            | Error::Rejected(f) => Some(f),
            Error::Context { source, .. } => source.op_failure(),
            _ => None,
        }
    }

    /// Classifies a kernel errno for the operation it answered.
    pub fn from_op_failure(f: OpFailure) -> Error {
        match f.errno {
            libc::ENOENT => Error::NotFound(f),
            libc::EEXIST => Error::AlreadyExists(f),
            libc::EMLINK if f.is_rule_op() => Error::Rejected(f),
            libc::EBUSY | libc::ENOTEMPTY | libc::EMLINK => Error::InUse(f),
            libc::EPERM | libc::EACCES => Error::NotPermitted {
                context: f.to_string(),
            },
            libc::EOPNOTSUPP | libc::EAFNOSUPPORT | libc::EPROTONOSUPPORT => Error::Unsupported(f),
            _ => Error::Rejected(f),
        }
    }

    /// The error under any front-end wording.
    pub fn innermost(&self) -> &Error {
        match self {
            Error::Context { source, .. } => source.innermost(),
            e => e,
        }
    }

    /// Wraps the error with a front end's message.
    pub fn context(self, message: impl Into<String>) -> Error {
        Error::Context {
            message: message.into(),
            source: Box::new(self),
        }
    }

    /// A failure of the netlink socket itself (open, send, receive) during `context`;
    /// EPERM and EACCES become [`Error::NotPermitted`].
    pub fn netlink(context: &'static str, source: io::Error) -> Error {
        if matches!(
            source.raw_os_error(),
            Some(libc::EPERM) | Some(libc::EACCES)
        ) {
            return Error::NotPermitted {
                context: format!("{context}: {source}"),
            };
        }
        Error::Netlink { context, source }
    }
}

/// The library's result type; the error defaults to [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Ends the process as iptables (or `cat`) ends when its output is a pipe whose reader has
/// gone (`xtnl save | head -1`): silently, killed by SIGPIPE. A closed output is not a
/// failure to report; the command line calls this when a write to standard output says
/// EPIPE.
pub fn exit_on_closed_output() -> ! {
    xtnl_sys::die_of_sigpipe()
}
