//! Who a policy entry is for: callers (uids and groups) and network namespaces.
//!
//! ```toml
//! [[allow]]
//! table = "nat"
//! chains = ["vcld-*"]
//! verbs = ["create", "flush", "delete", "add-rule", "delete-rule"]
//! uids = [1001]                 # only for uid 1001 ...
//! groups = ["vcl", 1200]        # ... and members of group vcl or gid 1200
//! netns = ["vm-*"]              # only in `ip netns` namespaces named vm-*
//! ```
//!
//! An entry without `uids` and `groups` is for every caller (policies written before these
//! keys existed mean what they meant). An entry without `netns` is for the network namespace
//! xtnl runs in only: a request for another namespace (`--netns`, or a `serve` request's
//! `netns`) needs an entry that names it, so a policy never widens to namespaces its author
//! did not think of.

use toml::Spanned;

use super::{Pattern, Policy};
use crate::error::{Error, Result};

/// The caller of a change and where it goes: what selects the policy entries that apply.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Caller {
    /// The caller's uid (the invoker's, or the peer's on `xtnl serve`'s socket).
    pub uid: u32,
    /// Its primary and supplementary gids.
    pub gids: Vec<u32>,
    /// The network namespace as the caller named it (`None`: xtnl's own).
    pub netns: Option<String>,
}

impl Caller {
    /// A caller identified by uid alone: its groups are its primary group and those
    /// `/etc/group` lists it in (as `id` shows), plus `gid` (the peer's primary gid).
    pub fn of_uid(uid: u32, gid: Option<u32>) -> Caller {
        let mut gids: Vec<u32> = gid.into_iter().collect();
        if let Some((name, primary)) = accounts::user_by_uid(uid) {
            gids.push(primary);
            gids.extend(accounts::groups_of(&name));
        }
        gids.sort_unstable();
        gids.dedup();
        Caller {
            uid,
            gids,
            netns: None,
        }
    }
    /// The caller, in the named network namespace (`None`: the service's own).
    pub fn in_netns(mut self, netns: Option<String>) -> Caller {
        self.netns = netns;
        self
    }
}

impl super::Allow {
    /// Whether this entry is for `c` at all (before what it allows is considered).
    pub fn is_for(&self, c: &Caller) -> bool {
        let who = self.is_for_who(c);
        let place = match (&self.netns, &c.netns) {
            (None, None) => true,
            (None, Some(_)) | (Some(_), None) => false,
            (Some(ps), Some(n)) => ps.iter().any(|p| p.matches(n)),
        };
        who && place
    }

    /// Whether this entry is for `c`'s uid or groups, in whichever namespace.
    pub fn is_for_who(&self, c: &Caller) -> bool {
        match (&self.uids, &self.groups) {
            (None, None) => true,
            (uids, groups) => {
                uids.as_ref().is_some_and(|u| u.contains(&c.uid))
                    || groups
                        .as_ref()
                        .is_some_and(|g| g.iter().any(|g| c.gids.contains(g)))
            }
        }
    }
}

impl Policy {
    /// The policy as it applies to `c`: only the entries that are for it. Everything else
    /// stays (the path and `max_ops`), so denials still name the file and lines.
    pub fn for_caller(&self, c: &Caller) -> Policy {
        Policy {
            path: self.path.clone(),
            max_ops: self.max_ops,
            allow: self.allow.iter().filter(|a| a.is_for(c)).cloned().collect(),
        }
    }

    /// Whether any entry is for `c` (a service refuses a caller with none before reading its
    /// requests' contents).
    pub fn has_entries_for(&self, c: &Caller) -> bool {
        self.allow.iter().any(|a| a.is_for(c))
    }

    /// Whether any entry is for `c`'s uid or groups, in any namespace: a caller the policy
    /// does not name may change nothing anywhere (`xtnl serve` answers it from a small pool
    /// of its own, without reading its requests' contents).
    pub fn names(&self, c: &Caller) -> bool {
        self.allow.iter().any(|a| a.is_for_who(c))
    }
}

type Scope = (Option<Vec<u32>>, Option<Vec<u32>>, Option<Vec<Pattern>>);

/// Parses an entry's `uids`, `groups` (names or gids; a name must exist) and `netns`.
pub(super) fn parse_scope(
    uids: Option<&Spanned<Vec<Spanned<i64>>>>,
    groups: Option<&Spanned<Vec<Spanned<toml::Value>>>>,
    netns: Option<&Spanned<Vec<Spanned<String>>>>,
    at: &dyn Fn(usize, &str) -> Error,
) -> Result<Scope> {
    let uids = match uids {
        None => None,
        Some(list) => {
            if list.get_ref().is_empty() {
                return Err(at(
                    list.span().start,
                    "uids is empty: the entry is for no one",
                ));
            }
            let mut out = Vec::new();
            for u in list.get_ref() {
                let v = u32::try_from(*u.get_ref()).map_err(|_| {
                    at(
                        u.span().start,
                        &format!("uid {} is out of range", u.get_ref()),
                    )
                })?;
                out.push(v);
            }
            Some(out)
        }
    };
    let groups = match groups {
        None => None,
        Some(list) => {
            if list.get_ref().is_empty() {
                return Err(at(
                    list.span().start,
                    "groups is empty: the entry is for no one",
                ));
            }
            let mut out = Vec::new();
            for g in list.get_ref() {
                let gid = match g.get_ref() {
                    toml::Value::Integer(n) => u32::try_from(*n)
                        .map_err(|_| at(g.span().start, &format!("gid {n} is out of range")))?,
                    toml::Value::String(name) => match accounts::group_by_name(name) {
                        Some(gid) => gid,
                        None => {
                            return Err(at(
                                g.span().start,
                                &format!("no group named {name:?} (see /etc/group)"),
                            ));
                        }
                    },
                    _ => return Err(at(g.span().start, "a group is a name or a gid")),
                };
                out.push(gid);
            }
            Some(out)
        }
    };
    let netns = match netns {
        None => None,
        Some(list) => {
            if list.get_ref().is_empty() {
                return Err(at(
                    list.span().start,
                    "netns is empty: leave it out for xtnl's own namespace",
                ));
            }
            Some(
                list.get_ref()
                    .iter()
                    .map(|p| Pattern::new(p.get_ref()).map_err(|m| at(p.span().start, &m)))
                    .collect::<Result<Vec<_>>>()?,
            )
        }
    };
    Ok((uids, groups, netns))
}

/// Users and groups from `/etc/passwd` and `/etc/group`. The binary is linked statically,
/// where glibc cannot load NSS modules, so the files are read directly (as `id` reads them
/// on a host without a directory service).
pub mod accounts {
    fn entries(path: &str) -> Vec<Vec<String>> {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| l.split(':').map(str::to_owned).collect())
            .collect()
    }

    /// `(name, primary gid)` of a uid.
    pub fn user_by_uid(uid: u32) -> Option<(String, u32)> {
        entries("/etc/passwd").into_iter().find_map(|f| {
            if f.len() < 4 || f[2].parse() != Ok(uid) {
                return None;
            }
            Some((f[0].clone(), f[3].parse().ok()?))
        })
    }

    /// The uid of a user name.
    pub fn uid_by_name(name: &str) -> Option<u32> {
        entries("/etc/passwd")
            .into_iter()
            .find_map(|f| (f.len() >= 4 && f[0] == name).then(|| f[2].parse().ok())?)
    }

    /// The gid of a group name.
    pub fn group_by_name(name: &str) -> Option<u32> {
        entries("/etc/group")
            .into_iter()
            .find_map(|f| (f.len() >= 3 && f[0] == name).then(|| f[2].parse().ok())?)
    }

    /// The gids of the groups that list `user` as a member.
    pub fn groups_of(user: &str) -> Vec<u32> {
        entries("/etc/group")
            .into_iter()
            .filter(|f| f.len() >= 4 && f[3].split(',').any(|m| m == user))
            .filter_map(|f| f[2].parse().ok())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const TEXT: &str = r#"
[[allow]]
table = "nat"
chains = ["open-*"]
verbs = ["create"]

[[allow]]
table = "nat"
chains = ["vcld-*"]
verbs = ["create"]
uids = [1001]
groups = [1200]

[[allow]]
table = "nat"
chains = ["vm-*"]
verbs = ["create"]
netns = ["vm-*"]
"#;

    fn caller(uid: u32, gids: &[u32], netns: Option<&str>) -> Caller {
        Caller {
            uid,
            gids: gids.to_vec(),
            netns: netns.map(str::to_owned),
        }
    }

    #[test]
    fn entries_are_for_their_callers_and_namespaces_only() {
        let p = Policy::parse(TEXT, Path::new("/p.toml")).unwrap();
        let lines =
            |c: &Caller| -> Vec<usize> { p.for_caller(c).allow.iter().map(|a| a.line).collect() };
        assert_eq!(lines(&caller(1001, &[], None)), vec![2, 7]);
        assert_eq!(lines(&caller(1002, &[1200], None)), vec![2, 7]);
        assert_eq!(lines(&caller(1002, &[1201], None)), vec![2]);
        // Another namespace: only the entry that names it.
        assert_eq!(lines(&caller(1001, &[], Some("vm-3"))), vec![14]);
        assert_eq!(
            lines(&caller(1001, &[], Some("other"))),
            Vec::<usize>::new()
        );
        assert!(!p.has_entries_for(&caller(5, &[], Some("other"))));
    }

    #[test]
    fn bad_scopes_are_named() {
        for (bad, want) in [
            ("uids = []", "uids is empty"),
            ("uids = [-1]", "out of range"),
            ("groups = [\"no-such-group-xtnl\"]", "no group named"),
            ("groups = [1.5]", "a name or a gid"),
            ("netns = []", "netns is empty"),
        ] {
            let text = format!(
                "[[allow]]\ntable = \"nat\"\nchains = [\"x\"]\nverbs = [\"create\"]\n{bad}\n"
            );
            let e = Policy::parse(&text, Path::new("/p.toml"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want) && e.contains("/p.toml:5:"), "{bad}: {e}");
        }
    }
}
