//! The policy check and audit records of the x_tables backend: the same [`Policy`] and the
//! same [`Auditor`] as nf_tables sessions use (the [`crate::seam::Enforcement`] the backend was
//! opened with), applied to
//! what a replace actually changes.
//!
//! x_tables has no operations on the wire: a replace hands the kernel a whole new table.
//! So the check compares the table as read with the table about to be committed, chain by
//! chain, and turns the difference into the policy's [`Touch`]es: chains created, deleted or
//! given another policy, chains emptied (a flush), and rules removed or added, each rule
//! with its real target as the table holds it. Whatever command, number, restore line or
//! JSON operation caused a change, the policy judges the rules that the kernel will hold
//! (a replacement is a removal and an addition; a delete by number is the removal of that
//! rule, target included). Zeroing counters, which changes no rule, is checked by the caller
//! ([`Enforcement::zero`]).

use std::collections::HashMap;
use std::sync::Arc;

use super::table::{Chain, Rule, Table, Verdict};
use crate::error::Result;
use crate::nft::{AuditOutcome, Auditor};
use crate::policy::{Policy, Touch, Verb};

/// The policy and auditor a backend was opened with, when either is set.
pub(crate) struct Enforcement {
    policy: Option<Arc<Policy>>,
    auditor: Option<Arc<dyn Auditor>>,
}

/// A change as the policy sees it and as an audit record shows it (iptables syntax).
pub(crate) type Described = (Touch, String);

impl Enforcement {
    /// Whether the table difference is needed: only under a policy. Without one (root's own
    /// run, audited) the records name the replaced table instead, so that the legacy
    /// backend's per-command cost does not grow by a copy and a comparison of the table.
    pub(crate) fn compares(&self) -> bool {
        self.policy.is_some()
    }

    /// What `e` asks of a replace; `None` when it checks and records nothing.
    pub(crate) fn of(e: &crate::seam::Enforcement) -> Option<Enforcement> {
        e.is_active().then(|| Enforcement {
            policy: e.policy.clone(),
            auditor: e.auditor.clone(),
        })
    }

    /// Checks the changes (all of one commit); a denial is audited and returned.
    pub(crate) fn check(&self, changes: &mut [Described]) -> Result<()> {
        for (i, (t, text)) in changes.iter_mut().enumerate() {
            t.op_index = i;
            t.op = text.clone();
        }
        let Some(p) = &self.policy else {
            return Ok(());
        };
        let touches: Vec<Touch> = changes.iter().map(|(t, _)| t.clone()).collect();
        let r = p.check_size(touches.len()).and_then(|()| p.check(&touches));
        if let Err(e) = &r {
            self.record(changes, AuditOutcome::Denied(e));
        }
        r
    }

    pub(crate) fn record(&self, changes: &[Described], outcome: AuditOutcome<'_>) {
        if let Some(a) = &self.auditor {
            a.record(
                changes.len(),
                &mut changes.iter().map(|(_, s)| s.clone()),
                outcome,
            );
        }
    }

    /// Checks and audits zeroing counters (`-Z`, `-L -Z`), which changes no rule; returns
    /// the description to record the result with.
    pub(crate) fn zero(&self, t: &Table, chain: Option<&str>) -> Result<Vec<Described>> {
        let text = match chain {
            Some(c) => format!("-t {} -Z {c}", t.name),
            None => format!("-t {} -Z", t.name),
        };
        let mut changes = vec![(Touch::new(t.family, &t.name, chain, Verb::Zero), text)];
        self.check(&mut changes)?;
        Ok(changes)
    }
}

fn jump_of(r: &Rule) -> Option<String> {
    match &r.verdict {
        Verdict::Jump(c) | Verdict::Goto(c) => Some(c.clone()),
        _ => None,
    }
}

fn rule_text(t: &Table, chain: &str, verb: &str, r: &Rule) -> String {
    let ipt = super::convert::to_ipt(t.family, r);
    let line = crate::ipt::print::append_line(chain, &ipt, false);
    let spec = line
        .strip_prefix(&format!("-A {chain}"))
        .unwrap_or(&line)
        .to_owned();
    format!("-t {} {verb} {chain}{spec}", t.name)
}

fn policy_name(v: i32) -> &'static str {
    if v == super::blob::verdict::DROP {
        "DROP"
    } else {
        "ACCEPT"
    }
}

/// What changes from `before` to `after` (the same table), as touches with their text.
pub(crate) fn changes(before: &Table, after: &Table) -> Vec<Described> {
    let fam = after.family;
    let name = after.name.as_str();
    let touch = |chain: &str, verb: Verb, jump_to: Option<String>| Touch {
        jump_to,
        ..Touch::new(fam, name, Some(chain), verb)
    };
    let old: HashMap<&str, &Chain> = before.chains.iter().map(|c| (c.name.as_str(), c)).collect();
    let new: HashMap<&str, &Chain> = after.chains.iter().map(|c| (c.name.as_str(), c)).collect();
    let mut out = Vec::new();
    for c in &before.chains {
        if !new.contains_key(c.name.as_str()) {
            out.push((
                touch(&c.name, Verb::Delete, None),
                format!("-t {name} -X {}", c.name),
            ));
        }
    }
    for c in &after.chains {
        let Some(o) = old.get(c.name.as_str()) else {
            out.push((
                touch(&c.name, Verb::Create, None),
                format!("-t {name} -N {}", c.name),
            ));
            for r in &c.rules {
                out.push((
                    touch(&c.name, Verb::AddRule, jump_of(r)),
                    rule_text(after, &c.name, "-A", r),
                ));
            }
            continue;
        };
        if c.is_builtin() && c.policy != o.policy {
            out.push((
                touch(&c.name, Verb::Policy, None),
                format!("-t {name} -P {} {}", c.name, policy_name(c.policy)),
            ));
        }
        if c.rules.is_empty() && !o.rules.is_empty() {
            out.push((
                touch(&c.name, Verb::Flush, None),
                format!("-t {name} -F {}", c.name),
            ));
            continue;
        }
        // Rules removed and added: a multiset difference by what each rule does.
        let mut kept: HashMap<Vec<u8>, usize> = HashMap::new();
        for r in &o.rules {
            *kept.entry(r.key()).or_default() += 1;
        }
        let mut added = Vec::new();
        for r in &c.rules {
            match kept.get_mut(&r.key()) {
                Some(n) if *n > 0 => *n -= 1,
                _ => added.push(r),
            }
        }
        for r in &o.rules {
            if let Some(n) = kept.get_mut(&r.key())
                && *n > 0
            {
                *n -= 1;
                out.push((
                    touch(&c.name, Verb::DeleteRule, jump_of(r)),
                    rule_text(before, &c.name, "-D", r),
                ));
            }
        }
        for r in added {
            out.push((
                touch(&c.name, Verb::AddRule, jump_of(r)),
                rule_text(after, &c.name, "-A", r),
            ));
        }
    }
    out
}

/// What an audit record says of a replace when the difference was not computed.
pub(crate) fn replace_of(t: &Table) -> Described {
    let rules: usize = t.chains.iter().map(|c| c.rules.len()).sum();
    (
        Touch::new(t.family, &t.name, None, Verb::FlushTable),
        format!(
            "replace table {} {} ({} chains, {rules} rules)",
            t.family,
            t.name,
            t.chains.len()
        ),
    )
}

/// Runs the check, the attempt record, `commit` and the result record.
pub(crate) fn enforce<T>(
    e: Option<&Enforcement>,
    mut changes: Vec<Described>,
    commit: impl FnOnce() -> std::result::Result<T, super::kernel::XtError>,
) -> Result<std::result::Result<T, super::kernel::XtError>> {
    let Some(e) = e else {
        return Ok(commit());
    };
    e.check(&mut changes)?;
    e.record(&changes, AuditOutcome::Attempt);
    let r = commit();
    match &r {
        Ok(_) => e.record(&changes, AuditOutcome::Committed),
        Err(super::kernel::XtError::Changed) => e.record(&changes, AuditOutcome::Retried),
        Err(super::kernel::XtError::Other(err)) => e.record(&changes, AuditOutcome::Failed(err)),
    }
    Ok(r)
}
