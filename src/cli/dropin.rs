//! xtnl under iptables' names: dispatch on the program name as `xtables-nft-multi` does, and
//! iptables' identity (`-V`, `-h`) and message shapes for programs that parse them.
//!
//! A symbolic link is the whole install: `iptables`, `ip6tables`, `iptables-save`,
//! `ip6tables-save`, `iptables-restore`, `ip6tables-restore`, and the `-nft` / `-legacy`
//! spellings of each (`iptables-nft`, `iptables-legacy-save`, ...), which also choose the
//! backend. `xtnl iptables ARGS` works like `xtables-nft-multi iptables ARGS`.
//!
//! Libraries parse `-V` (coreos/go-iptables reads `vX.Y.Z` and the mode in parentheses at
//! construction and refuses anything else), so under an iptables name `-V` prints the version
//! of iptables whose behaviour xtnl reproduces, 1.8.9, and the backend in iptables' words:
//! `(nf_tables)` or `(legacy)`. `xtnl version` says what xtnl is.

use std::io::Write;
use std::sync::OnceLock;

use crate::backend::{Backend, BackendChoice};
use crate::error::{Error, ErrorKind};
use crate::model::Family;

/// The iptables release whose command line, output and messages xtnl reproduces.
pub const IPTABLES_VERSION: &str = "1.8.9";

/// Which of iptables' programs xtnl is standing in for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Iptables,
    Save,
    Restore,
}

/// What a program name says: the tool, the family, and a backend if the name spells one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub tool: Tool,
    pub family: Family,
    pub backend: Option<BackendChoice>,
    /// The name as invoked (`iptables-nft-save`), for `-V` of save and restore.
    pub program: String,
}

impl Identity {
    /// `iptables` or `ip6tables`.
    pub fn base(&self) -> &'static str {
        if self.family == Family::Ipv6 {
            "ip6tables"
        } else {
            "iptables"
        }
    }
}

/// Reads a program name (the file name of argv[0]); `None` for names that are not
/// iptables'.
pub fn identify(program: &str) -> Option<Identity> {
    let (family, rest) = if let Some(r) = program.strip_prefix("ip6tables") {
        (Family::Ipv6, r)
    } else if let Some(r) = program.strip_prefix("iptables") {
        (Family::Ipv4, r)
    } else {
        return None;
    };
    let (backend, rest) = if let Some(r) = rest.strip_prefix("-nft") {
        (Some(BackendChoice::Nft), r)
    } else if let Some(r) = rest.strip_prefix("-legacy") {
        (Some(BackendChoice::Legacy), r)
    } else {
        (None, rest)
    };
    let tool = match rest {
        "" => Tool::Iptables,
        "-save" => Tool::Save,
        "-restore" => Tool::Restore,
        _ => return None,
    };
    Some(Identity {
        tool,
        family,
        backend,
        program: program.to_owned(),
    })
}

/// The backend the command resolved to, for messages printed after it failed.
static RESOLVED: OnceLock<Backend> = OnceLock::new();

/// Records the backend a command runs on (the first call wins).
pub fn note_backend(b: Backend) {
    let _ = RESOLVED.set(b);
}

/// Whether this process runs under an iptables name.
pub fn active() -> bool {
    RESOLVED.get().is_some()
}

/// iptables' word for a backend, as `-V` prints it in parentheses.
pub fn mode(b: Backend) -> &'static str {
    match b {
        Backend::Nft => "nf_tables",
        Backend::Legacy => "legacy",
    }
}

fn resolved_mode(id: &Identity) -> &'static str {
    let b = RESOLVED.get().copied().unwrap_or_else(|| {
        let choice = id
            .backend
            .or_else(|| BackendChoice::from_env().ok())
            .unwrap_or_default();
        choice.resolve(id.family).0
    });
    mode(b)
}

/// The `-V` line: `iptables v1.8.9 (nf_tables)`; save and restore name themselves as
/// invoked, as iptables-nft's do.
pub fn version_line(id: &Identity, backend: Backend) -> String {
    // iptables-legacy-save names itself `iptables-save`; xtables-nft-multi uses argv[0].
    let name = match (id.tool, backend) {
        (Tool::Iptables, _) => id.base().to_owned(),
        (Tool::Save, Backend::Legacy) => format!("{}-save", id.base()),
        (Tool::Restore, Backend::Legacy) => format!("{}-restore", id.base()),
        (Tool::Save | Tool::Restore, Backend::Nft) => id.program.clone(),
    };
    format!("{name} v{IPTABLES_VERSION} ({})", mode(backend))
}

/// Whether the command line asks only for the version or the help (printed before anything
/// else, as iptables does).
pub fn wants_version(args: &[String]) -> bool {
    args.iter().any(|a| a == "-V" || a == "--version")
}

pub fn wants_help(args: &[String]) -> bool {
    args.iter().any(|a| a == "-h" || a == "--help")
}

/// The usage text of `iptables -h`, in the shape iptables prints it (the version line, the
/// synopsis, the commands, the options), listing what xtnl accepts.
pub fn usage(id: &Identity, backend: Backend) -> String {
    let p = id.base();
    let mut s = format!("{}\n\n", version_line(id, backend));
    for (i, line) in [
        "-[ACD] chain rule-specification [options]",
        "-I chain [rulenum] rule-specification [options]",
        "-R chain rulenum rule-specification [options]",
        "-D chain rulenum [options]",
        "-[LS] [chain [rulenum]] [options]",
        "-[FZ] [chain] [options]",
        "-[NX] chain",
        "-E old-chain-name new-chain-name",
        "-P chain target [options]",
        "-h (print this help information)",
    ]
    .iter()
    .enumerate()
    {
        let lead = if i == 0 { "Usage:" } else { "      " };
        s.push_str(&format!("{lead} {p} {line}\n"));
    }
    s.push_str("\nCommands:\nEither long or short options are allowed.\n");
    for (long, short, what) in [
        ("--append", "-A chain", "Append to chain"),
        ("--check", "-C chain", "Check for the existence of a rule"),
        ("--delete", "-D chain", "Delete matching rule from chain"),
        (
            "--delete",
            "-D chain rulenum",
            "Delete rule rulenum (1 = first) from chain",
        ),
        (
            "--insert",
            "-I chain [rulenum]",
            "Insert in chain as rulenum (default 1=first)",
        ),
        (
            "--replace",
            "-R chain rulenum",
            "Replace rule rulenum (1 = first) in chain",
        ),
        (
            "--list",
            "-L [chain [rulenum]]",
            "List the rules in a chain or all chains",
        ),
        (
            "--list-rules",
            "-S [chain [rulenum]]",
            "Print the rules in a chain or all chains",
        ),
        (
            "--flush",
            "-F [chain]",
            "Delete all rules in  chain or all chains",
        ),
        (
            "--zero",
            "-Z [chain [rulenum]]",
            "Zero counters in chain or all chains",
        ),
        ("--new", "-N chain", "Create a new user-defined chain"),
        (
            "--delete-chain",
            "-X [chain]",
            "Delete a user-defined chain",
        ),
        (
            "--policy",
            "-P chain target",
            "Change policy on chain to target",
        ),
        (
            "--rename-chain",
            "-E old-chain new-chain",
            "Change chain name, (moving any references)",
        ),
    ] {
        s.push_str(&format!("  {long:<13} {short:<22} {what}\n"));
    }
    s.push_str("\nOptions:\n");
    for (opt, what) in [
        (
            "--ipv4\t-4",
            "Nothing (line is ignored by ip6tables-restore)",
        ),
        ("--ipv6\t-6", "Error (line is ignored by iptables-restore)"),
        (
            "[!] --protocol\t-p proto",
            "protocol: by number or name, eg. `tcp'",
        ),
        (
            "[!] --source\t-s address[/mask][...]",
            "source specification",
        ),
        (
            "[!] --destination -d address[/mask][...]",
            "destination specification",
        ),
        (
            "[!] --in-interface -i input name[+]",
            "network interface name ([+] for wildcard)",
        ),
        (
            "--jump\t-j target",
            "target for rule (may load target extension)",
        ),
        ("--goto\t-g chain", "jump to chain with no return"),
        ("--match\t-m match", "extended match (may load extension)"),
        ("--numeric\t-n", "numeric output of addresses and ports"),
        (
            "[!] --out-interface -o output name[+]",
            "network interface name ([+] for wildcard)",
        ),
        (
            "--table\t-t table",
            "table to manipulate (default: `filter')",
        ),
        ("--verbose\t-v", "verbose mode"),
        (
            "--wait\t-w [seconds]",
            "maximum wait to acquire xtables lock before give up",
        ),
        (
            "--wait-interval -W [usecs]",
            "wait time to try to acquire xtables lock",
        ),
        ("--line-numbers", "print line numbers when listing"),
        ("--exact\t-x", "expand numbers (display exact values)"),
        ("--version\t-V", "print package version."),
    ] {
        s.push_str(&format!("  {opt}\n\t\t\t\t{what}\n"));
    }
    s.push_str(&format!(
        "\nWithout -w, {p} waits up to {}s for the xtables lock (xtnl's default; -w 0 fails \
         at once).\n",
        crate::lock::DEFAULT_WAIT.as_secs()
    ));
    s
}

/// Runs a command line under an iptables name: `-V` and `-h` first (as iptables does, before
/// anything else), then the tool.
pub(crate) fn run(
    out: &mut impl Write,
    id: &Identity,
    args: &[String],
    backend: BackendChoice,
) -> crate::Result<i32> {
    let resolved = backend.resolve(id.family).0;
    note_backend(resolved);
    let text = if wants_version(args) {
        Some(format!("{}\n", version_line(id, resolved)))
    } else if wants_help(args) && id.tool == Tool::Iptables {
        Some(usage(id, resolved))
    } else {
        None
    };
    if let Some(text) = text {
        out.write_all(text.as_bytes()).map_err(super::io_error)?;
        return Ok(0);
    }
    match id.tool {
        Tool::Iptables => super::iptables::run(out, args, id.family, backend)?,
        Tool::Save => super::restore::run_save(out, args, id.family, backend)?,
        Tool::Restore => super::restore::run_restore(out, args, id.family, backend)?,
    }
    Ok(0)
}

/// Prints an error as iptables prints it under this identity; returns the exit status.
///
/// - bad parameters: `iptables v1.8.9 (nf_tables): MESSAGE` and the `Try ...` line (status 2);
/// - a refusal in iptables' words (`iptables: Chain already exists.`): that line alone;
/// - a busy lock: `Can't lock PATH: ...` and `Another app is currently holding the xtables
///   lock. ...` (status 4);
/// - anything else: the version prefix, the error and its causes.
pub fn report(id: &Identity, err: &Error) -> i32 {
    let mut e = std::io::stderr().lock();
    let p = id.base();
    let head = format!("{p} v{IPTABLES_VERSION} ({})", resolved_mode(id));
    match err.innermost() {
        Error::LockBusy { path, waited } => {
            let _ = writeln!(
                e,
                "Can't lock {}: Resource temporarily unavailable",
                path.display()
            );
            let tail = match waited {
                Some(d) => format!("Stopped waiting after {}s.", round_secs(*d)),
                None => "Perhaps you want to use the -w option?".into(),
            };
            let _ = writeln!(
                e,
                "Another app is currently holding the xtables lock. {tail}"
            );
            return err.exit_status();
        }
        Error::LockFile { path, source } => {
            let _ = writeln!(
                e,
                "Fatal: can't open lock file {}: {source}",
                path.display()
            );
            return err.exit_status();
        }
        _ => {}
    }
    match err {
        Error::Context { message, .. } => {
            let _ = writeln!(e, "{message}");
        }
        Error::InvalidInput(msg) if err.kind() == ErrorKind::InvalidInput => {
            if msg.is_empty() {
                // iptables' exit_tryhelp: the hint alone.
            } else if msg.starts_with("Bad argument") {
                let _ = writeln!(e, "{msg}");
            } else {
                let _ = writeln!(e, "{head}: {msg}");
            }
            let _ = writeln!(e, "Try `{p} -h' or '{p} --help' for more information.");
        }
        other => {
            let _ = writeln!(e, "{head}: {other}");
            let mut source = std::error::Error::source(other);
            while let Some(s) = source {
                let _ = writeln!(e, "  caused by: {s}");
                source = s.source();
            }
        }
    }
    err.exit_status()
}

/// iptables prints whole seconds.
fn round_secs(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", d.as_secs())
    } else {
        format!("{s}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_xtables_multi_reads_them() {
        let id = identify("iptables").unwrap();
        assert_eq!(
            (id.tool, id.family, id.backend),
            (Tool::Iptables, Family::Ipv4, None)
        );
        let id = identify("ip6tables-legacy-restore").unwrap();
        assert_eq!(
            (id.tool, id.family, id.backend),
            (Tool::Restore, Family::Ipv6, Some(BackendChoice::Legacy))
        );
        let id = identify("iptables-nft-save").unwrap();
        assert_eq!(
            (id.tool, id.family, id.backend),
            (Tool::Save, Family::Ipv4, Some(BackendChoice::Nft))
        );
        assert_eq!(identify("ip6tables-save").unwrap().tool, Tool::Save);
        for not in [
            "xtnl",
            "xtnl6",
            "iptables-apply",
            "iptables-nft-foo",
            "iptablesx",
        ] {
            assert!(identify(not).is_none(), "{not}");
        }
    }

    #[test]
    fn version_lines() {
        let id = identify("ip6tables-nft").unwrap();
        assert_eq!(
            version_line(&id, Backend::Nft),
            "ip6tables v1.8.9 (nf_tables)"
        );
        let id = identify("iptables-legacy-save").unwrap();
        assert_eq!(
            version_line(&id, Backend::Legacy),
            "iptables-save v1.8.9 (legacy)"
        );
    }
}
