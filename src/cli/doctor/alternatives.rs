//! `xtnl doctor`'s look at the `iptables`/`ip6tables` alternatives, read from dpkg's own
//! files (`/etc/alternatives/NAME`, `/var/lib/dpkg/alternatives/NAME`): no program is run.

use std::path::Path;

use super::{Level, Report};

/// One alternative of dpkg's database: a candidate path and its priority.
#[derive(Debug, PartialEq, Eq)]
struct Candidate {
    path: String,
    priority: i64,
}

/// `/var/lib/dpkg/alternatives/NAME`: the mode (`auto`/`manual`) and the candidates. The
/// format: mode, the link, (slave name, slave link) pairs up to an empty line, then for each
/// candidate its path, its priority and one line per slave.
fn parse_alternatives(text: &str) -> Option<(String, Vec<Candidate>)> {
    let mut lines = text.lines();
    let mode = lines.next()?.to_owned();
    lines.next()?;
    let mut slaves = 0;
    loop {
        let l = lines.next()?;
        if l.is_empty() {
            break;
        }
        lines.next()?;
        slaves += 1;
    }
    let mut out = Vec::new();
    while let Some(path) = lines.next() {
        if path.is_empty() {
            break;
        }
        let priority = lines.next()?.trim().parse().ok()?;
        for _ in 0..slaves {
            lines.next()?;
        }
        out.push(Candidate {
            path: path.to_owned(),
            priority,
        });
    }
    Some((mode, out))
}

/// The `iptables`/`ip6tables` alternative: where it points, its candidates, and whether
/// xtnl is one of them (and would win).
pub(super) fn check(r: &mut Report, name: &str) {
    let link = Path::new("/etc/alternatives").join(name);
    let current = std::fs::read_link(&link).ok();
    let db = std::fs::read_to_string(Path::new("/var/lib/dpkg/alternatives").join(name)).ok();
    let Some((mode, candidates)) = db.as_deref().and_then(parse_alternatives) else {
        r.add(
            Level::Note,
            "alternatives",
            format!(
                "{name}: no alternatives registered{}",
                current
                    .map(|c| format!(" ({} -> {})", link.display(), c.display()))
                    .unwrap_or_default()
            ),
            None,
        );
        return;
    };
    let list = candidates
        .iter()
        .map(|c| format!("{} ({})", c.path, c.priority))
        .collect::<Vec<_>>()
        .join(", ");
    let current_s = current
        .as_ref()
        .map(|c| c.display().to_string())
        .unwrap_or_else(|| "nothing".into());
    let what = format!("{name} -> {current_s} ({mode} mode); candidates: {list}");
    let xtnl = candidates.iter().find(|c| c.path.contains("xtnl"));
    let best_other = candidates
        .iter()
        .filter(|c| !c.path.contains("xtnl"))
        .map(|c| c.priority)
        .max();
    let current_is_xtnl = current_s.contains("xtnl");
    match xtnl {
        Some(x) if best_other.is_some_and(|b| x.priority >= b) => r.add(
            Level::Note,
            "alternatives",
            what,
            Some(format!(
                "xtnl's priority {} is not below the others': in auto mode it would replace \
                 them silently; the package registers it below both",
                x.priority
            )),
        ),
        Some(_) if current_is_xtnl => r.add(
            Level::Note,
            "alternatives",
            what,
            Some(format!(
                "`{name}` runs xtnl; `update-alternatives --auto {name}` goes back to the \
                 highest priority"
            )),
        ),
        Some(_) => r.add(
            Level::Ok,
            "alternatives",
            what,
            Some(format!(
                "opt in with `update-alternatives --set {name} {}`",
                xtnl.map(|x| x.path.as_str()).unwrap_or_default()
            )),
        ),
        None => r.add(Level::Ok, "alternatives", what, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_dpkg_alternatives_with_slaves() {
        let text = "auto\n/usr/sbin/iptables\niptables-restore\n/usr/sbin/iptables-restore\n\
                    iptables-save\n/usr/sbin/iptables-save\n\n/usr/sbin/iptables-legacy\n10\n\
                    /usr/sbin/iptables-legacy-restore\n/usr/sbin/iptables-legacy-save\n\
                    /usr/sbin/iptables-nft\n20\n/usr/sbin/iptables-nft-restore\n\
                    /usr/sbin/iptables-nft-save\n\n";
        let (mode, c) = parse_alternatives(text).unwrap();
        assert_eq!(mode, "auto");
        assert_eq!(
            c,
            vec![
                Candidate {
                    path: "/usr/sbin/iptables-legacy".into(),
                    priority: 10
                },
                Candidate {
                    path: "/usr/sbin/iptables-nft".into(),
                    priority: 20
                }
            ]
        );
        // Truncated or malformed: no answer rather than a wrong one.
        assert!(parse_alternatives("auto\n/usr/sbin/iptables\n\n/x\nten\n").is_none());
    }
}
