//! `iptables-restore` and `iptables-save` formats.
//!
//! The whole file is parsed before anything is sent, so a syntax error (reported with its
//! line) changes nothing. Every block `*table` .. `COMMIT` is then planned against the table
//! as read, and all blocks are committed as one batch: each block is atomic, and so is the
//! file (iptables-restore commits block by block).

use crate::model::ChainPolicy;
use std::fmt::Write;

use super::exec::Planner;
use super::parse::{self, Command};
use super::{listing, tables};
use crate::error::{Error, Result};
use crate::model::Family;
use crate::nft::{Session, TableRef, Transaction};

/// One line of a restore file that changes something, with its line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// `:NAME POLICY [packets:bytes]` (`-` for a user chain).
    Chain {
        name: String,
        policy: Option<ChainPolicy>,
        /// A built-in chain's `[packets:bytes]` under `restore -c` (its policy counters).
        counters: Option<crate::model::Counters>,
    },
    Command(Box<Command>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub table: String,
    pub line: usize,
    pub lines: Vec<(usize, Line)>,
}

fn at(line: usize, msg: impl std::fmt::Display) -> Error {
    Error::InvalidInput(format!("line {line}: {msg}"))
}

/// Parses a whole restore file.
pub fn parse_file(text: &str, family: Family) -> Result<Vec<Block>> {
    parse_file_opts(text, family, false)
}

/// [`parse_file`]; with `counters` (`restore -c`) a rule's `[packets:bytes]` is restored.
pub fn parse_file_opts(text: &str, family: Family, counters: bool) -> Result<Vec<Block>> {
    let mut p = Parser::new(family).with_counters(counters);
    for raw in text.lines() {
        p.line(raw)?;
    }
    p.finish()
}

/// A restore file parsed line by line as it is read, so that a reader can stop at a bound
/// (the policy's `max_ops`, the transaction limit) long before the whole input is held.
#[derive(Debug)]
pub struct Parser {
    family: Family,
    /// `restore -c`: a rule's `[packets:bytes]` is restored.
    counters: bool,
    blocks: Vec<Block>,
    open: Option<Block>,
    /// Lines seen so far (the last line's number).
    last: usize,
    /// Lines that change something (`:CHAIN` declarations and commands): each becomes at
    /// least one operation of the transaction.
    changes: usize,
}

impl Parser {
    pub fn new(family: Family) -> Parser {
        Parser {
            family,
            counters: false,
            blocks: Vec::new(),
            open: None,
            last: 0,
            changes: 0,
        }
    }

    /// With `counters` (`restore -c`), rules keep the `[packets:bytes]` written before them.
    pub fn with_counters(mut self, counters: bool) -> Parser {
        self.counters = counters;
        self
    }

    /// Lines read so far that change something; the transaction holds at least this many
    /// operations.
    pub fn changes(&self) -> usize {
        self.changes
    }

    /// The number of the last line read.
    pub fn line_number(&self) -> usize {
        self.last
    }

    /// Parses the next line (without its newline).
    pub fn line(&mut self, raw: &str) -> Result<()> {
        self.last += 1;
        let n = self.last;
        let family = self.family;
        let counters = self.counters;
        let blocks = &mut self.blocks;
        let open = &mut self.open;
        let line = raw.trim();
        // A rule xtnl's save could not express: restoring without it would lose it.
        if line.starts_with("# handle ") && line.contains("iptables syntax cannot express") {
            return Err(at(
                n,
                "a rule that save could not express in iptables syntax (see the line); \
                 restoring without it would lose it",
            ));
        }
        if line.is_empty() || line.starts_with('#') {
            return Ok(());
        }
        if line.contains('\0') {
            return Err(at(n, "NUL byte"));
        }
        if let Some(t) = line.strip_prefix('*') {
            if let Some(b) = &open {
                return Err(at(
                    n,
                    format!(
                        "COMMIT expected before this table (block *{} opened at line {})",
                        b.table, b.line
                    ),
                ));
            }
            crate::model::validate_name("table", t).map_err(|e| at(n, e))?;
            *open = Some(Block {
                table: t.to_string(),
                line: n,
                lines: Vec::new(),
            });
            return Ok(());
        }
        let Some(block) = open.as_mut() else {
            return Err(at(n, "a rule outside a *table block"));
        };
        if line == "COMMIT" {
            if let Some(b) = open.take() {
                blocks.push(b);
            }
            return Ok(());
        }
        if let Some(decl) = line.strip_prefix(':') {
            let mut f = decl.split_whitespace();
            let name = f.next().ok_or_else(|| at(n, "chain name expected"))?;
            parse::validate_chain_name(name).map_err(|e| match e {
                Error::InvalidInput(m) => at(n, m),
                other => other,
            })?;
            let policy = match f.next() {
                Some("-") => None,
                Some("ACCEPT") => Some(ChainPolicy::Accept),
                Some("DROP") => Some(ChainPolicy::Drop),
                Some(p) => return Err(at(n, format!("invalid policy `{p}'"))),
                None => return Err(at(n, "policy expected")),
            };
            if tables::builtin(&block.table, name).is_none()
                && policy.is_some()
                && tables::is_iptables_table(&block.table)
            {
                return Err(at(
                    n,
                    format!("`{name}' is not a built-in chain: its policy must be `-'"),
                ));
            }
            // `-c`: a built-in chain's policy starts from its `[packets:bytes]`, as with
            // iptables-restore -c (chains without a policy have none).
            let counters = f
                .next()
                .filter(|_| self.counters && policy.is_some())
                .and_then(|c| c.strip_prefix('[')?.strip_suffix(']')?.split_once(':'))
                .and_then(|(p, b)| {
                    Some(crate::model::Counters {
                        packets: p.parse().ok()?,
                        bytes: b.parse().ok()?,
                    })
                });
            block.lines.push((
                n,
                Line::Chain {
                    name: name.to_string(),
                    policy,
                    counters,
                },
            ));
            self.changes += 1;
            return Ok(());
        }
        // An optional `[packets:bytes]` before the rule (iptables-save -c); counters are
        // not restored (iptables-nft-restore drops them too).
        let (rule, line_counters) = match line.strip_prefix('[') {
            Some(rest) => {
                let (c, r) = rest.split_once(']').ok_or_else(|| at(n, "bad counters"))?;
                let parsed = c.split_once(':').and_then(|(p, b)| {
                    Some(crate::model::Counters {
                        packets: p.parse().ok()?,
                        bytes: b.parse().ok()?,
                    })
                });
                (r.trim(), Some(parsed.ok_or_else(|| at(n, "bad counters"))?))
            }
            None => (line, None),
        };
        let mut args = parse::split_words(rule).map_err(|e| match e {
            Error::InvalidInput(m) => at(n, m),
            other => other,
        })?;
        // A `-6` line is ip6tables-restore's only, a `-4` line iptables-restore's only.
        if super::args::family_flag(&args).is_some_and(|f| f != family) {
            return Ok(());
        }
        if args
            .iter()
            .any(|a| a == "-t" || a == "--table" || a.starts_with("--table="))
        {
            return Err(at(n, "the table is given by the *table line, not -t"));
        }
        args.insert(0, block.table.clone());
        args.insert(0, "-t".into());
        let inv = parse::parse(&args, family).map_err(|e| match e {
            Error::InvalidInput(m) => at(n, m),
            other => other,
        })?;
        if !inv.command.mutates() {
            return Err(at(
                n,
                "only commands that change the table belong in a restore file",
            ));
        }
        if matches!(inv.command, Command::Zero(_)) {
            // iptables-restore zeroes counters on a -Z line; xtnl's restore is one
            // transaction, which cannot zero counters, so it refuses the file rather than
            // ignore the line.
            return Err(at(
                n,
                "-Z (zero counters) is not supported in a restore file; run `xtnl -Z` \
                 separately, after the restore",
            ));
        }
        let mut command = inv.command;
        if counters && let Some(c) = line_counters {
            super::exec::set_counters(&mut command, c);
        }
        block.lines.push((n, Line::Command(Box::new(command))));
        self.changes += 1;
        Ok(())
    }

    /// The blocks, once every line was read.
    pub fn finish(self) -> Result<Vec<Block>> {
        if let Some(b) = self.open {
            return Err(at(
                self.last + 1,
                format!(
                    "COMMIT expected (block *{} opened at line {})",
                    b.table, b.line
                ),
            ));
        }
        Ok(self.blocks)
    }
}

/// Applies parsed blocks in one transaction. Returns the number of operations committed.
pub fn apply(
    session: &mut Session,
    blocks: &[Block],
    family: Family,
    noflush: bool,
) -> Result<usize> {
    let mut line_of_op: Vec<usize> = Vec::new();
    let committed = session.transact(|r| {
        let mut planners: Vec<(String, Planner)> = Vec::new();
        let mut lines: Vec<Vec<usize>> = Vec::new();
        for block in blocks {
            let idx = match planners.iter().position(|(t, _)| *t == block.table) {
                Some(i) => i,
                None => {
                    let p = Planner::new(r, &TableRef::new(family, &block.table))
                        .map_err(|e| e.context(format!("line {} failed", block.line)))?;
                    planners.push((block.table.clone(), p));
                    lines.push(Vec::new());
                    planners.len() - 1
                }
            };
            let (_, p) = &mut planners[idx];
            let mark = |p: &Planner, lines: &mut Vec<usize>, n: usize| {
                let count = p.op_count();
                lines.resize(count, n);
            };
            if !noflush {
                p.reset_table(r)?;
                mark(p, &mut lines[idx], block.line);
            }
            p.keep_builtin_policy = noflush;
            let mut declared = Vec::new();
            for (n, line) in &block.lines {
                let result = match line {
                    Line::Chain { name, policy, .. } => {
                        declared.push(name.clone());
                        p.declare_chain(r, name, *policy)
                    }
                    Line::Command(cmd) => p
                        .plan(r, cmd)
                        .map_err(|e| super::exec::iptables_words(e, cmd, family)),
                };
                result.map_err(|e| e.context(format!("line {n} failed")))?;
                mark(p, &mut lines[idx], *n);
            }
            if !noflush {
                p.finish_reset(&declared);
                mark(p, &mut lines[idx], block.line);
            }
        }
        let mut tx = Transaction::new();
        line_of_op.clear();
        for ((_, p), l) in planners.into_iter().zip(lines) {
            line_of_op.extend(l);
            for op in p.into_ops() {
                tx.push(op);
            }
        }
        Ok((tx, ()))
    });
    match committed {
        Ok(c) => Ok(c.ops),
        Err(e) => match e.op_failure().map(|f| f.index) {
            Some(i) if !matches!(e, Error::Context { .. }) && i < line_of_op.len() => {
                let n = line_of_op[i];
                Err(e.context(format!("line {n} failed")))
            }
            _ => Err(e),
        },
    }
}

/// The iptables tables `save` prints, in iptables-nft-save 1.8.9's order (its
/// `enum nft_table_type`: mangle, security, raw, filter, nat).
const SAVE_ORDER: [&str; 5] = ["mangle", "security", "raw", "filter", "nat"];

/// `iptables-save [-t table]`: every iptables table of the family that exists (or the one
/// asked for, shown with its built-ins even when not created yet).
/// The tables `save` prints: the one asked for, or iptables' tables that exist, in
/// iptables-save's order.
pub fn saved_tables(
    session: &mut Session,
    family: Family,
    table: Option<&str>,
) -> Result<Vec<String>> {
    if let Some(t) = table {
        return Ok(vec![t.to_string()]);
    }
    let existing: Vec<String> = session
        .list_tables()?
        .into_iter()
        .filter(|t| t.table.family == family)
        .map(|t| t.table.name)
        .collect();
    Ok(SAVE_ORDER
        .iter()
        .filter(|t| existing.iter().any(|e| e == *t))
        .map(|t| t.to_string())
        .collect())
}

pub fn save(session: &mut Session, family: Family, table: Option<&str>) -> Result<String> {
    let names = saved_tables(session, family, table)?;
    let mut out = String::new();
    let _ = writeln!(out, "# Generated by xtnl {}", env!("CARGO_PKG_VERSION"));
    for name in &names {
        let t = TableRef::new(family, name);
        let _ = writeln!(out, "*{name}");
        out.push_str(&listing::save_table(session, &t)?);
        let _ = writeln!(out, "COMMIT");
    }
    let _ = writeln!(out, "# Completed by xtnl");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_blocks_chains_rules_and_reports_lines() {
        let text = "# c\n*nat\n:PREROUTING ACCEPT [0:0]\n:vcld-1 - [0:0]\n[5:300] -A vcld-1 -p tcp --dport 22 -m comment --comment \"a \\\"b\\\"\" -j DNAT --to-destination 192.0.2.1:22\nCOMMIT\n";
        let b = parse_file(text, Family::Ipv4).unwrap();
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].table, "nat");
        assert_eq!(b[0].lines.len(), 3);
        assert_eq!(b[0].lines[2].0, 5);
        let Line::Command(cmd) = &b[0].lines[2].1 else {
            panic!()
        };
        let Command::Append { rule, .. } = cmd.as_ref() else {
            panic!()
        };
        assert!(
            rule.matches
                .iter()
                .any(|m| matches!(m, crate::ipt::IptMatch::Comment(c) if c == "a \"b\""))
        );
        for (text, needle) in [
            (
                "*filter\n-A INPUT --bogus\nCOMMIT\n",
                "line 2: unknown option",
            ),
            ("*filter\n-A INPUT -j ACCEPT\n", "line 3: COMMIT expected"),
            ("-A INPUT -j ACCEPT\n", "line 1: a rule outside"),
            ("*filter\n-t nat -A INPUT -j ACCEPT\nCOMMIT\n", "line 2"),
            ("*filter\n:FOO DROP [0:0]\nCOMMIT\n", "line 2"),
            ("*filter\n*nat\n", "line 2: COMMIT expected"),
            ("*filter\n-S\nCOMMIT\n", "line 2"),
        ] {
            let err = parse_file(text, Family::Ipv4).unwrap_err();
            assert!(err.to_string().contains(needle), "{text:?}: {err}");
            assert_eq!(err.exit_status(), 2);
        }
    }
}
