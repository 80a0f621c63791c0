//! Sessions in another network namespace: the netlink socket is created on a thread that has
//! joined the namespace, so the session acts there while the process stays where it is.

#![deny(missing_docs)]

use super::{Session, SessionBuilder};
use crate::error::Result;
use xtnl_host::netns::Netns;

impl SessionBuilder {
    /// Opens the session's socket in `netns` (`None`: the calling thread's namespace).
    pub fn open_in(self, netns: Option<&Netns>) -> Result<Session> {
        let mut s = match netns {
            None => self.open(),
            Some(ns) => ns.run_in(move || self.open()),
        }?;
        s.home = netns.cloned();
        Ok(s)
    }
}

impl Session {
    /// [`Session::open`] in another network namespace: `Session::open_in(Some(&ns))` with
    /// `ns` from [`Netns::resolve`] (`"blue"` is `/run/netns/blue`, as `ip netns` names it).
    pub fn open_in(netns: Option<&Netns>) -> Result<Session> {
        Session::builder().open_in(netns)
    }
}
