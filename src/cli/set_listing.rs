//! Named sets and maps in `xtnl list`: each with its type, flags and element count (the
//! elements of a map of 100,000 forwards are not printed; `xtnl forward list --layout map`
//! lists the NAT-host map's forwards).

use std::io::Write;

use super::io_error;
use xtnl::error::Result;
use xtnl::nft::set::describe_type;
use xtnl::nft::{Session, TableRef};
use xtnl::wire::set::{SetDefRepr, flags};

/// A set of a table and how many elements it holds.
pub struct SetListing {
    pub set: SetDefRepr,
    pub elements: usize,
}

/// The named sets of a table, with their element counts, from one generation.
pub fn read_sets(s: &mut Session, t: &TableRef) -> Result<Vec<SetListing>> {
    s.read(|r| {
        let sets = r.sets(t)?;
        let mut out = Vec::with_capacity(sets.len());
        for set in sets {
            // Newer kernels report the count; older ones are asked for the elements.
            let elements = match set.count {
                Some(n) => n as usize,
                None => r.elements(t, &set.name)?.len(),
            };
            out.push(SetListing { set, elements });
        }
        Ok(out)
    })
}

/// `list --json`: each set's name, kind (`set` or `map`), type in nft's words, flags,
/// element count and comment.
pub fn sets_json(sets: &[SetListing]) -> serde_json::Value {
    sets.iter()
        .map(|l| {
            let s = &l.set;
            let shown = s.flags & !(flags::MAP | flags::ANONYMOUS);
            serde_json::json!({
                "name": s.name,
                "kind": if s.is_map() { "map" } else { "set" },
                "type": describe_type(s),
                "flags": flags::names(shown),
                "elements": l.elements,
                "comment": s.comment(),
            })
        })
        .collect()
}

/// Prints the sets as nft lays out their headers.
pub fn print_sets(out: &mut impl Write, sets: &[SetListing]) -> Result<()> {
    for l in sets {
        let s = &l.set;
        let kind = if s.is_map() { "map" } else { "set" };
        let mut body = format!("type {}", describe_type(s));
        let shown = s.flags & !(flags::MAP | flags::ANONYMOUS);
        if shown != 0 {
            body.push_str(&format!("; flags {}", flags::names(shown).join(",")));
        }
        if let Some(t) = s.timeout_ms {
            body.push_str(&format!("; timeout {t}ms"));
        }
        if let Some(n) = s.size {
            body.push_str(&format!("; size {n}"));
        }
        if !s.exprs.is_empty() {
            let names: Vec<&str> = s.exprs.iter().map(|e| e.name()).collect();
            body.push_str(&format!("; {}", names.join(" ")));
        }
        if let Some(c) = s.comment() {
            body.push_str(&format!("; comment {c:?}"));
        }
        let unknown = if s.unknown.is_empty() {
            String::new()
        } else {
            format!(" (attributes {:?} not shown)", s.unknown)
        };
        writeln!(
            out,
            "\t{kind} {} {{ {body} }} # {} elements{unknown}",
            s.name, l.elements
        )
        .map_err(io_error)?;
    }
    Ok(())
}
