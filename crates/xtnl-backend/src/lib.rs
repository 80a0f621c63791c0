//! Which kernel interface iptables commands go to: nf_tables (as iptables-nft) or x_tables
//! (as iptables-legacy). `auto` follows what the host's own `iptables` command is; [`Call`]
//! opens the one chosen, runs a command on it and closes it ([`open`] opens it for a caller
//! that uses it in several steps).
//!
//! The library re-exports this crate as `xtnl::backend`. Opening a backend needs root; the
//! choice itself does not:
//!
//! ```
//! use xtnl_backend::{Backend, BackendChoice};
//!
//! assert_eq!("legacy".parse::<BackendChoice>()?, BackendChoice::Legacy);
//! assert!("iptables".parse::<BackendChoice>().is_err());
//! // nf_tables commits several tables in one batch; x_tables replaces one table at a time.
//! assert!(Backend::Nft.groups() && !Backend::Legacy.groups());
//! assert_eq!(Backend::Legacy.as_str(), "legacy");
//! # Ok::<(), xtnl_core::Error>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The old paths: this crate was the root package's `backend` module, and its files keep the
// `crate::seam::...`, `crate::legacy::...`, `crate::ipt::...` paths they had there (as the
// crates below did).
use xtnl_core::{error, model};
use xtnl_host::{lock, netns};
use xtnl_legacy as legacy;
use xtnl_nathost as nathost;
use xtnl_nft as nft;
use xtnl_seam as seam;

/// iptables' syntax under the library's paths (`crate::ipt::parse`, ...).
mod ipt {
    pub(crate) use xtnl_ipt::{Flavour, parse, restore_file};
}

use std::path::{Path, PathBuf};

mod opened;
pub use opened::{Call, First, Opened, open};

use crate::error::{Error, Result};
use crate::model::Family;

/// The environment variable that sets the default choice (for when xtnl is installed as
/// `/sbin/iptables` and its callers cannot pass `--backend`).
pub const BACKEND_ENV: &str = "XTNL_BACKEND";

/// The kernel interface a command was sent to, once [`BackendChoice::resolve`] has decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// nf_tables, through netlink (iptables-nft's interface).
    Nft,
    /// x_tables, through `IPT_SO_*`/`IP6T_SO_*` socket options (iptables-legacy's interface).
    Legacy,
}

impl Backend {
    /// Which iptables it answers as.
    pub fn flavour(self) -> crate::ipt::Flavour {
        match self {
            Backend::Nft => crate::ipt::Flavour::Nft,
            Backend::Legacy => crate::ipt::Flavour::Legacy,
        }
    }

    /// Whether changes to several tables and families commit as one transaction, so that
    /// `xtnl serve` may commit several requests' changes together: nf_tables (one batch),
    /// not x_tables (one replace per table).
    pub fn groups(self) -> bool {
        match self {
            Backend::Nft => true,
            Backend::Legacy => false,
        }
    }

    /// The name `--backend` takes for it: `nft` or `legacy`.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Nft => "nft",
            Backend::Legacy => "legacy",
        }
    }
}

/// `--backend nft|legacy|auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// Always nf_tables.
    Nft,
    /// Always x_tables.
    Legacy,
    /// Whatever the host's own `iptables` (or `ip6tables`) is: legacy if its symlink chain names
    /// `legacy`, nf_tables otherwise (the default).
    #[default]
    Auto,
}

impl std::str::FromStr for BackendChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "nft" => Ok(BackendChoice::Nft),
            "legacy" => Ok(BackendChoice::Legacy),
            "auto" => Ok(BackendChoice::Auto),
            other => Err(Error::InvalidInput(format!(
                "unknown backend {other:?} (nft, legacy or auto)"
            ))),
        }
    }
}

impl BackendChoice {
    /// The choice from [`BACKEND_ENV`], `Auto` when unset.
    pub fn from_env() -> Result<Self> {
        match std::env::var(BACKEND_ENV) {
            Ok(v) if !v.is_empty() => v
                .parse()
                .map_err(|e: Error| Error::InvalidInput(format!("{BACKEND_ENV}: {e}"))),
            _ => Ok(BackendChoice::Auto),
        }
    }

    /// The backend to use for `family`, and why.
    pub fn resolve(self, family: Family) -> (Backend, String) {
        match self {
            BackendChoice::Nft => (Backend::Nft, "asked for (--backend nft)".into()),
            BackendChoice::Legacy => (Backend::Legacy, "asked for (--backend legacy)".into()),
            BackendChoice::Auto => {
                let program = if family == Family::Ipv6 {
                    "ip6tables"
                } else {
                    "iptables"
                };
                detect(program, std::env::var_os("PATH").as_deref())
            }
        }
    }
}

/// Follows `program` through `PATH` (then /usr/sbin and /sbin) and its symlink chain
/// (alternatives included) to the binary it runs, and reads the backend from the names on
/// the way: `xtables-legacy-multi` / `iptables-legacy` mean x_tables, `xtables-nft-multi` /
/// `iptables-nft` nf_tables. Anything else (no iptables, or xtnl itself installed as
/// iptables) falls back to nf_tables.
pub fn detect(program: &str, path: Option<&std::ffi::OsStr>) -> (Backend, String) {
    let mut dirs: Vec<PathBuf> = path
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    dirs.extend([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")]);
    let Some(start) = dirs
        .iter()
        .map(|d| d.join(program))
        .find(|p| p.symlink_metadata().is_ok())
    else {
        return (
            Backend::Nft,
            format!("auto: no `{program}' command found; nf_tables is the default"),
        );
    };
    let chain = link_chain(&start);
    let shown = chain
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" -> ");
    for p in &chain {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.contains("legacy") {
            return (Backend::Legacy, format!("auto: {shown} is iptables-legacy"));
        }
        if name.contains("nft") {
            return (Backend::Nft, format!("auto: {shown} is iptables-nft"));
        }
    }
    let ours = std::env::current_exe().and_then(|p| p.canonicalize()).ok();
    let target = chain.last().and_then(|p| p.canonicalize().ok());
    if ours.is_some() && ours == target {
        return (
            Backend::Nft,
            format!(
                "auto: {shown} is xtnl itself; nf_tables is the default (set {BACKEND_ENV}=legacy for x_tables)"
            ),
        );
    }
    (
        Backend::Nft,
        format!("auto: {shown} names neither backend; nf_tables is the default"),
    )
}

/// `start` and every symlink target after it (relative targets resolved), at most 40 hops.
fn link_chain(start: &Path) -> Vec<PathBuf> {
    let mut out = vec![start.to_path_buf()];
    let mut cur = start.to_path_buf();
    for _ in 0..40 {
        let Ok(next) = std::fs::read_link(&cur) else {
            break;
        };
        let next = match cur.parent() {
            Some(dir) if next.is_relative() => dir.join(next),
            _ => next,
        };
        out.push(next.clone());
        cur = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_symlink_chains_to_the_multi_binary() {
        let dir = std::env::temp_dir().join(format!("xtnl-backend-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("alt")).unwrap();
        std::fs::write(dir.join("xtables-legacy-multi"), b"").unwrap();
        std::fs::write(dir.join("xtables-nft-multi"), b"").unwrap();
        let link =
            |target: &str, at: &str| std::os::unix::fs::symlink(target, dir.join(at)).unwrap();
        link("xtables-legacy-multi", "iptables-legacy");
        link("xtables-nft-multi", "iptables-nft");
        link("../iptables-legacy", "alt/iptables");
        link("alt/iptables", "iptables");
        link("iptables-nft", "ip6tables");
        let path = dir.as_os_str();
        let (b, why) = detect("iptables", Some(path));
        assert_eq!(b, Backend::Legacy, "{why}");
        assert!(why.contains("alt/iptables"), "{why}");
        let (b, why) = detect("ip6tables", Some(path));
        assert_eq!(b, Backend::Nft, "{why}");
        let (b, why) = detect("no-such-iptables", Some(path));
        assert_eq!(b, Backend::Nft);
        assert!(why.contains("no `no-such-iptables'"), "{why}");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!("bogus".parse::<BackendChoice>().is_err());
        assert_eq!(
            "legacy".parse::<BackendChoice>().unwrap(),
            BackendChoice::Legacy
        );
    }
}
