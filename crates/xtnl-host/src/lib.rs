//! What xtnl needs from the host besides the netlink socket: who is running it and on whose
//! behalf ([`privilege`]), the xtables lock that iptables takes too ([`lock`]), and the other
//! network namespaces a session may act in ([`netns`]).
//!
//! The three sit together because they are the process's view of the machine it runs on:
//! none reads or writes a ruleset, none needs the transport, and the layers above (the
//! nf_tables and x_tables backends, the CLI, `xtnl serve`) take all three. It sits on
//! `xtnl-core` (the error type, the input bounds) and `xtnl-sys` (the extended attributes
//! and the environment reset of a privileged run). The library re-exports the modules
//! under their old paths: `xtnl::privilege`, `xtnl::lock`, `xtnl::netns`.
//!
//! ```
//! use xtnl_host::lock::{WaitPolicy, XtablesLock};
//! use xtnl_host::netns::Netns;
//!
//! // The xtables lock on a private path (not /run/xtables.lock): taken once, then refused
//! // to a second taker that will not wait, until the first guard is dropped.
//! let path = std::env::temp_dir().join(format!("xtnl-host-doc-{}.lock", std::process::id()));
//! let lock = XtablesLock::new(&path, WaitPolicy::FailFast);
//! let held = lock.acquire()?;
//! assert!(lock.acquire().is_err());
//! drop(held);
//! drop(lock.acquire()?);
//! std::fs::remove_file(&path)?;
//!
//! // A namespace named as `ip netns` names it; nothing is opened until it is used.
//! let blue = Netns::resolve("blue")?;
//! assert_eq!(blue.path, std::path::Path::new("/run/netns/blue"));
//! assert!(Netns::resolve("..").is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod lock;
pub mod netns;
pub mod privilege;
