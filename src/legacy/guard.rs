//! The policy check and audit records of the x_tables backend: the same [`Policy`] and the
//! same [`Auditor`] as nf_tables sessions use (the [`crate::seam::Enforcement`] the backend was
//! opened with).
//!
//! The iptables commands, restore blocks, JSON `apply` and the NAT-host operations are
//! judged on what they mean, not on a comparison of tables: the interpreter's edits and the
//! NAT-host changes, resolved against the table read in this attempt
//! ([`crate::seam::judge`]), which is what nf_tables judges too. So a flush of an empty
//! chain is a flush, a policy set to what it was is a policy, and a rename is one change
//! (the chain deleted under its old name and created under its new one).
//!
//! What is left here is for [`super::Legacy::transact`], whose plan is any closure over the
//! table: there only the table as read and the table about to be committed say what
//! changed, so they are compared chain by chain ([`changes`]): chains created, deleted or
//! given another policy, chains emptied (a flush), and rules removed or added, each rule
//! with its real target as the table holds it.

use std::collections::HashMap;

use super::table::{Chain, Rule, Table, Verdict};
use crate::error::Result;
use crate::nft::AuditOutcome;
use crate::policy::{Touch, Verb};
use crate::seam::{Enforcement, Judged};

fn one(touch: Touch, text: String) -> Judged {
    Judged {
        touches: vec![touch],
        text,
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
pub(crate) fn changes(before: &Table, after: &Table) -> Vec<Judged> {
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
            out.push(one(
                touch(&c.name, Verb::Delete, None),
                format!("-t {name} -X {}", c.name),
            ));
        }
    }
    for c in &after.chains {
        let Some(o) = old.get(c.name.as_str()) else {
            out.push(one(
                touch(&c.name, Verb::Create, None),
                format!("-t {name} -N {}", c.name),
            ));
            for r in &c.rules {
                out.push(one(
                    touch(&c.name, Verb::AddRule, jump_of(r)),
                    rule_text(after, &c.name, "-A", r),
                ));
            }
            continue;
        };
        if c.is_builtin() && c.policy != o.policy {
            out.push(one(
                touch(&c.name, Verb::Policy, None),
                format!("-t {name} -P {} {}", c.name, policy_name(c.policy)),
            ));
        }
        if c.rules.is_empty() && !o.rules.is_empty() {
            out.push(one(
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
                out.push(one(
                    touch(&c.name, Verb::DeleteRule, jump_of(r)),
                    rule_text(before, &c.name, "-D", r),
                ));
            }
        }
        for r in added {
            out.push(one(
                touch(&c.name, Verb::AddRule, jump_of(r)),
                rule_text(after, &c.name, "-A", r),
            ));
        }
    }
    out
}

/// What an audit record says of a replace when the difference was not computed.
pub(crate) fn replace_of(t: &Table) -> Judged {
    let rules: usize = t.chains.iter().map(|c| c.rules.len()).sum();
    one(
        Touch::new(t.family, &t.name, None, Verb::FlushTable),
        format!(
            "replace table {} {} ({} chains, {rules} rules)",
            t.family,
            t.name,
            t.chains.len()
        ),
    )
}

/// Runs the one judgement ([`Enforcement::check`]), the attempt record, `commit` and the
/// result record (nothing when `e` checks and records nothing).
pub(crate) fn enforce<T>(
    e: &Enforcement,
    mut changes: Vec<Judged>,
    commit: impl FnOnce() -> std::result::Result<T, super::kernel::XtError>,
) -> Result<std::result::Result<T, super::kernel::XtError>> {
    if !e.is_active() {
        return Ok(commit());
    }
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
