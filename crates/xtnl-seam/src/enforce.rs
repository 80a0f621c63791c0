//! What a run is held to: the policy that checks every change and the auditor that records
//! it. One value, made once by whoever knows (the binary from its policy file and audit
//! settings, `xtnl serve` per request, a library user as it likes) and handed to each
//! backend it opens: no process-wide state decides what a session or a replace enforces.

use std::sync::Arc;

use super::judge::Judged;
use crate::error::Result;
use crate::nft::{AuditOutcome, Auditor, Guard, Session, SessionBuilder};
use crate::policy::Policy;

/// The policy and the auditor in force (either may be absent: root's own run without a
/// policy file checks nothing; `--audit off` records nothing).
#[derive(Clone, Default)]
pub struct Enforcement {
    /// Checks every change before anything is sent.
    pub policy: Option<Arc<Policy>>,
    /// Records every change attempted, committed, failed or denied.
    pub auditor: Option<Arc<dyn Auditor>>,
}

impl std::fmt::Debug for Enforcement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Enforcement")
            .field("policy", &self.policy.as_ref().map(|p| p.path.clone()))
            .field("auditor", &self.auditor.is_some())
            .finish()
    }
}

impl Enforcement {
    /// Nothing checked, nothing recorded.
    pub fn none() -> Enforcement {
        Enforcement::default()
    }

    /// A policy and an auditor.
    pub fn new(policy: Option<Arc<Policy>>, auditor: Option<Arc<dyn Auditor>>) -> Enforcement {
        Enforcement { policy, auditor }
    }

    /// Whether anything is checked or recorded.
    pub fn is_active(&self) -> bool {
        self.policy.is_some() || self.auditor.is_some()
    }

    /// The policy as an nf_tables session's guard.
    pub fn guard(&self) -> Option<Arc<dyn Guard>> {
        self.policy.clone().map(|p| p as Arc<dyn Guard>)
    }

    /// A session builder that enforces this.
    pub fn session(&self) -> SessionBuilder {
        Session::builder()
            .guard(self.guard())
            .auditor(self.auditor.clone())
    }

    /// The one judgement of a commit made of `changes` (each one operation or edit, see
    /// [`super::judge`]): their number against the policy's `max_ops`, then every touch;
    /// each touch names its change (`by operation #i (text)`, the text without the rule in
    /// iptables syntax that audit records add after `: `, as nf_tables' denials name their
    /// operations). A denial is recorded and returned; nothing is recorded when allowed (see
    /// [`Enforcement::record`]).
    pub fn check(&self, changes: &mut [Judged]) -> Result<()> {
        let mut i = 0;
        for j in changes.iter_mut() {
            let short = j.text.split(": ").next().unwrap_or(&j.text);
            for t in &mut j.touches {
                t.op_index = i;
                t.op = short.to_owned();
            }
            i += 1 + j.more;
        }
        let Some(p) = &self.policy else {
            return Ok(());
        };
        let touches: Vec<crate::policy::Touch> =
            changes.iter().flat_map(|j| j.touches.clone()).collect();
        let r = p
            .check_size(Judged::count(changes))
            .and_then(|()| p.check(&touches));
        if let Err(e) = &r {
            self.record(changes, AuditOutcome::Denied(e));
        }
        r
    }

    /// One audit record of `changes` (nothing without an auditor).
    pub fn record(&self, changes: &[Judged], outcome: AuditOutcome<'_>) {
        if let Some(a) = &self.auditor {
            a.record(
                Judged::count(changes),
                &mut changes.iter().map(|j| j.text.clone()),
                outcome,
            );
        }
    }
}
