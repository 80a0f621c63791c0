//! What `iptables-restore -v` prints, as iptables 1.8.9 prints it (both backends): for each
//! table of the file, unless `--noflush`, "Flushing chain" for the table's built-in chains in
//! hook order and for the user chains the kernel holds (sorted), "Deleting chain" for those
//! user chains, then each rule line of the table in the `-v -A` echo format. With
//! `--noflush` iptables prints nothing at all (its shell test `ipt-restore/0014` checks both).

use xtnl::ipt::Flavour;
use xtnl::ipt::parse::Command;
use xtnl::ipt::restore::{Block, Line};
use xtnl::model::Family;

/// A table's built-in chains in hook order (the order iptables lists them).
fn builtins(table: &str) -> &'static [&'static str] {
    match table {
        "filter" | "security" => &["INPUT", "FORWARD", "OUTPUT"],
        "nat" => &["PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"],
        "raw" => &["PREROUTING", "OUTPUT"],
        "mangle" => &["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"],
        _ => &[],
    }
}

/// The text as the given iptables prints it, given the user chains each table holds before the restore (`user_chains`).
pub(super) fn text(
    blocks: &[Block],
    family: Family,
    flavour: Flavour,
    mut user_chains: impl FnMut(&str) -> Vec<String>,
) -> String {
    let mut out = String::new();
    for b in blocks {
        let mut users = user_chains(&b.table);
        users.retain(|c| !builtins(&b.table).contains(&c.as_str()));
        users.sort();
        for c in builtins(&b.table)
            .iter()
            .copied()
            .chain(users.iter().map(String::as_str))
        {
            out.push_str(&format!("Flushing chain `{c}'\n"));
        }
        for c in &users {
            out.push_str(&format!("Deleting chain `{c}'\n"));
        }
        for (_, line) in &b.lines {
            let Line::Command(cmd) = line else { continue };
            for each in cmd.each() {
                if let Command::Append { rule, .. }
                | Command::Insert { rule, .. }
                | Command::Replace { rule, .. }
                | Command::Delete { rule, .. } = each
                {
                    out.push_str(&xtnl::ipt::listing::change_line(rule, family, flavour));
                    out.push('\n');
                }
            }
        }
    }
    out
}
