//! The engine's side of drop-in requests ([`crate::serve::thin`]): checked against the
//! service's namespace and lock environment, then run by the registered interpreter on the
//! namespace's session.

use serde_json::Value;

use super::Engine;
use crate::backend::Backend;
use crate::error::Result;
use crate::lock::XtablesLock;
use crate::model::Family;
use crate::netns::Netns;
use crate::serve::request::{Request, response};
use crate::serve::thin::{self, Dropin};

fn fallback(id: &Value, why: &str) -> Value {
    response(id, false, thin::fallback_body(why))
}

impl Engine {
    /// Serves one drop-in request (the caller's policy and auditor already set), or answers
    /// `fallback` with nothing done.
    pub(super) fn dropin(
        &mut self,
        req: &Request,
        netns: &Option<Netns>,
        d: &Dropin,
    ) -> Result<Value> {
        if let Some(why) = thin::mismatch(d, netns.as_ref()) {
            return Ok(fallback(&req.id, &why));
        }
        let Some(runner) = thin::runner() else {
            return Ok(fallback(&req.id, "this service has no drop-in interpreter"));
        };
        let family = if d.program.starts_with("ip6tables") {
            Family::Ipv6
        } else {
            Family::Ipv4
        };
        if self.backend(req, family) != Backend::Nft {
            return Ok(fallback(&req.id, "this service's backend is not nf_tables"));
        }
        let no_follow = self.config.no_follow;
        let lock = move |wait| XtablesLock::from_env(wait).with_no_follow(no_follow);
        // The socket opened first: a failure to open it is the request's error, not the
        // forwarded command's.
        let session = self.session(netns)?;
        if let Err(e) = session.connect() {
            self.sessions.remove(netns); // not kept unopened (see `Engine::give_back`)
            return Err(e);
        }
        let out = runner(session, d, &lock);
        if out.broken {
            // The socket may be broken: the next request opens a fresh one.
            self.sessions.remove(netns);
        }
        let (ok, body) = thin::reply_body(out);
        Ok(response(&req.id, ok, body))
    }
}
