//! The policy file: TOML parsing with line numbers, and the ownership checks of a delegated run.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::{Allow, Pattern, Policy, Verb};
use crate::error::{Error, Result};
use crate::limits::MAX_POLICY_BYTES;
use crate::model::Family;

/// Where the policy lives; the only place a delegated run reads it from.
pub const DEFAULT_POLICY_PATH: &str = "/etc/xtnl/policy.toml";

/// Selects another policy file (ignored in a delegated run).
pub const POLICY_PATH_ENV: &str = "XTNL_POLICY";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRepr {
    max_ops: Option<Spanned<i64>>,
    #[serde(default)]
    allow: Vec<Spanned<AllowRepr>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AllowRepr {
    family: Option<Spanned<String>>,
    table: Spanned<String>,
    #[serde(default)]
    chains: Vec<Spanned<String>>,
    verbs: Spanned<Vec<Spanned<String>>>,
    jump_to: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    sets: Vec<Spanned<String>>,
    /// Who the entry is for (see [`super::Caller`]); absent: everyone.
    uids: Option<Spanned<Vec<Spanned<i64>>>>,
    groups: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    /// Which network namespaces the entry is for; absent: the service's own only.
    netns: Option<Spanned<Vec<Spanned<String>>>>,
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let col = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    (line, col)
}

pub(super) fn parse(text: &str, path: &Path) -> Result<Policy> {
    let at = |offset: usize, msg: &str| {
        let (line, col) = line_col(text, offset);
        Error::PolicyInvalid(format!("policy {}:{line}:{col}: {msg}", path.display()))
    };
    let repr: FileRepr = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        at(offset, e.message().trim_end())
    })?;
    let max_ops = match repr.max_ops {
        None => None,
        Some(m) => {
            let n = *m.get_ref();
            if n < 1 || n as u64 > crate::limits::MAX_TRANSACTION_OPS as u64 {
                return Err(at(
                    m.span().start,
                    &format!(
                        "max_ops must be 1 to {}, not {n}",
                        crate::limits::MAX_TRANSACTION_OPS
                    ),
                ));
            }
            Some((n as usize, line_col(text, m.span().start).0))
        }
    };
    let mut allow = Vec::with_capacity(repr.allow.len());
    for entry in repr.allow {
        let line = header_line(text, entry.span().start);
        let a = entry.into_inner();
        let family = match &a.family {
            None => None,
            Some(f) => Some(match f.get_ref().as_str() {
                "ip" => Family::Ipv4,
                "ip6" => Family::Ipv6,
                "inet" => Family::Inet,
                other => {
                    return Err(at(
                        f.span().start,
                        &format!("unknown family {other:?} (ip, ip6 or inet)"),
                    ));
                }
            }),
        };
        let table = a.table.get_ref().clone();
        if let Err(e) = crate::model::validate_name("table", &table) {
            return Err(at(a.table.span().start, &e.to_string()));
        }
        let pattern =
            |p: &Spanned<String>| Pattern::new(p.get_ref()).map_err(|m| at(p.span().start, &m));
        let chains = a.chains.iter().map(pattern).collect::<Result<Vec<_>>>()?;
        let mut verbs = Vec::new();
        for v in a.verbs.get_ref() {
            let verb = Verb::parse(v.get_ref()).ok_or_else(|| {
                let known: Vec<&str> = Verb::ALL.iter().map(|v| v.as_str()).collect();
                at(
                    v.span().start,
                    &format!(
                        "unknown verb {:?} (one of {})",
                        v.get_ref(),
                        known.join(", ")
                    ),
                )
            })?;
            verbs.push(verb);
        }
        if verbs.is_empty() {
            return Err(at(
                a.verbs.span().start,
                "verbs is empty: the entry allows nothing",
            ));
        }
        let sets = a.sets.iter().map(pattern).collect::<Result<Vec<_>>>()?;
        if sets.is_empty() && verbs.iter().any(|v| v.is_set_verb()) {
            return Err(at(
                a.verbs.span().start,
                "set verbs need `sets = [...]` (patterns such as \"fwd*\")",
            ));
        }
        if chains.is_empty() && verbs.iter().any(|v| !v.is_table_verb() && !v.is_set_verb()) {
            return Err(at(
                a.verbs.span().start,
                "chain verbs need `chains = [...]` (patterns such as \"vcld-*\")",
            ));
        }
        let jump_to = match &a.jump_to {
            None => None,
            Some(j) => {
                if !verbs.iter().any(|v| v.is_rule_verb()) {
                    return Err(at(
                        j.span().start,
                        "jump_to applies to add-rule and delete-rule, which verbs lacks",
                    ));
                }
                if j.get_ref().is_empty() {
                    return Err(at(j.span().start, "jump_to is empty: no rule could match"));
                }
                Some(
                    j.get_ref()
                        .iter()
                        .map(pattern)
                        .collect::<Result<Vec<_>>>()?,
                )
            }
        };
        let (uids, groups, netns) = super::caller::parse_scope(
            a.uids.as_ref(),
            a.groups.as_ref(),
            a.netns.as_ref(),
            &|offset, msg| at(offset, msg),
        )?;
        allow.push(Allow {
            line,
            family,
            table,
            chains,
            verbs,
            jump_to,
            sets,
            uids,
            groups,
            netns,
        });
    }
    Ok(Policy {
        path: path.to_owned(),
        max_ops,
        allow,
    })
}

/// The line of the `[[allow]]` header an entry's span belongs to: the span may start at the
/// header or at the entry's first key, so the nearest header at or before it is taken.
fn header_line(text: &str, offset: usize) -> usize {
    let (line, _) = line_col(text, offset);
    let lines: Vec<&str> = text.split('\n').collect();
    (1..=line)
        .rev()
        .find(|&n| {
            lines
                .get(n - 1)
                .is_some_and(|l| l.trim_start().starts_with("[["))
        })
        .unwrap_or(line)
}

fn read_bounded(mut f: File, path: &Path) -> Result<String> {
    let mut bytes = Vec::new();
    f.by_ref()
        .take(MAX_POLICY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unusable(path, &format!("cannot read it: {e}")))?;
    if bytes.len() as u64 > MAX_POLICY_BYTES {
        return Err(unusable(
            path,
            &format!("it is larger than {MAX_POLICY_BYTES} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        unusable(
            path,
            &format!("it is not UTF-8 (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

fn unusable(path: &Path, why: &str) -> Error {
    Error::PolicyInvalid(format!("policy {}: {why}", path.display()))
}

/// Reads and parses a policy file, with no ownership checks (a run that is not delegated).
pub fn load_file(path: &Path) -> Result<Policy> {
    let f = File::open(path).map_err(|e| unusable(path, &format!("cannot open it: {e}")))?;
    let text = read_bounded(f, path)?;
    Policy::parse(&text, path)
}

/// Reads a policy file the way a delegated run must: the file must be a regular file, not a
/// symbolic link, owned by root and not writable by group or others, and so must every
/// directory above it (after resolving links in the directories), as sudo requires of
/// sudoers; otherwise someone other than root could have written the rules.
pub fn load_secure(path: &Path) -> Result<Policy> {
    // O_NOFOLLOW: a symbolic link in the last component is refused (ELOOP) rather than
    // followed; the checks below then hold for the very file that is read (fstat).
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                unusable(
                    path,
                    "it is a symbolic link; a delegated run reads only a regular file",
                )
            } else {
                unusable(path, &format!("cannot open it: {e}"))
            }
        })?;
    let meta = f
        .metadata()
        .map_err(|e| unusable(path, &format!("cannot stat it: {e}")))?;
    if !meta.file_type().is_file() {
        return Err(unusable(path, "it is not a regular file"));
    }
    check_owner(path, &meta, "the file")?;
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir: PathBuf = parent
        .canonicalize()
        .map_err(|e| unusable(path, &format!("cannot resolve its directory: {e}")))?;
    for d in dir.ancestors() {
        let m = std::fs::metadata(d)
            .map_err(|e| unusable(path, &format!("cannot stat {}: {e}", d.display())))?;
        check_owner(path, &m, &format!("directory {}", d.display()))?;
    }
    let text = read_bounded(f, path)?;
    Policy::parse(&text, path)
}

fn check_owner(path: &Path, m: &std::fs::Metadata, what: &str) -> Result<()> {
    if m.uid() != 0 {
        return Err(unusable(
            path,
            &format!(
                "{what} is owned by uid {}, not root; a delegated run trusts only root's policy",
                m.uid()
            ),
        ));
    }
    if m.mode() & 0o022 != 0 {
        return Err(unusable(
            path,
            &format!(
                "{what} is writable by group or others (mode {:o}); a delegated run trusts \
                 only a policy that only root can change",
                m.mode() & 0o7777
            ),
        ));
    }
    Ok(())
}
