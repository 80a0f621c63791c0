//! `--netns NAME|PATH`, a global option of every command: the command runs on a thread that
//! has joined that network namespace (so every socket it opens belongs there), while the
//! process stays where it is. `serve` takes it as the namespace of requests that name none.

use std::sync::OnceLock;

use xtnl::error::{Error, Result};
use xtnl::netns::Netns;

/// The namespace named on the command line, for the policy (entries are for namespaces).
static REQUESTED: OnceLock<Option<String>> = OnceLock::new();

/// The `--netns` of this run, as written (`None`: xtnl's own namespace).
pub(crate) fn requested() -> Option<String> {
    REQUESTED.get().cloned().flatten()
}

/// Records the namespace the command runs in, for the policy. (`serve` does not: its
/// `--netns` is only the default of its requests, each checked against its caller's
/// entries for its own namespace.)
pub(crate) fn set_requested(ns: Option<&Netns>) {
    let _ = REQUESTED.set(ns.map(|n| n.name.clone()));
}

/// Removes `--netns X` / `--netns=X` (anywhere on the line) and resolves it.
pub(crate) fn take(args: &[String]) -> Result<(Vec<String>, Option<Netns>)> {
    let mut rest = Vec::with_capacity(args.len());
    let mut spec = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--netns" {
            let v = it
                .next()
                .ok_or_else(|| Error::InvalidInput("--netns needs a name or a path".into()))?;
            spec = Some(v.clone());
        } else if let Some(v) = a.strip_prefix("--netns=") {
            spec = Some(v.to_owned());
        } else {
            rest.push(a.clone());
        }
    }
    let ns = spec.as_deref().map(Netns::resolve).transpose()?;
    if let Some(ns) = &ns
        && xtnl::privilege::delegated()
        && !ns.is_named()
    {
        return Err(Error::InvalidInput(format!(
            "--netns {:?}: a privileged run (setuid, file capabilities or sudo) joins only \
             namespaces that `ip netns` names (under /run/netns), not paths",
            ns.name
        )));
    }
    Ok((rest, ns))
}

/// The policy as it applies to this run: the entries for the invoker's uid and groups and
/// for the namespace of `--netns`. A namespace that no entry is for is refused outright
/// (reads included), so a policy never opens a namespace its author did not name.
pub(crate) fn scope_policy(
    policy: Option<xtnl::policy::Policy>,
    who: &xtnl::privilege::Invoker,
) -> Result<Option<xtnl::policy::Policy>> {
    let Some(p) = policy else { return Ok(None) };
    let caller = xtnl::policy::Caller::of_uid(who.uid, None).in_netns(requested());
    if let Some(ns) = &caller.netns
        && !p.has_entries_for(&caller)
    {
        return Err(Error::PolicyDenied(format!(
            "policy {} has no entry for uid {} in network namespace {ns:?} (an entry's \
             `netns` must name it)",
            p.path.display(),
            caller.uid
        )));
    }
    Ok(Some(p.for_caller(&caller)))
}
