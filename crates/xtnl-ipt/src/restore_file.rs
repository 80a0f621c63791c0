//! The `iptables-restore` file format: `*table` blocks of `:CHAIN POLICY [counters]` lines
//! and commands up to `COMMIT`, parsed whole (with line numbers for errors) before anything
//! is applied. Syntax only: both backends apply the blocks (the library's
//! `xtnl::ipt::restore::apply` for nf_tables).

#![deny(missing_docs)]

use crate::model::ChainPolicy;

use super::parse::{self, Command};
use super::tables;
use crate::error::{Error, Result};
use crate::model::Family;

/// One line of a restore file that changes something, with its line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// `:NAME POLICY [packets:bytes]` (`-` for a user chain).
    Chain {
        /// The chain's name.
        name: String,
        /// A built-in chain's policy; `None` for a user chain (`-`).
        policy: Option<ChainPolicy>,
        /// A built-in chain's `[packets:bytes]` under `restore -c` (its policy counters).
        counters: Option<crate::model::Counters>,
    },
    /// A command line (`-A ...`, `-N ...`), parsed.
    Command(Box<Command>),
}

/// One table's part of a restore file: `*table` to `COMMIT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The table.
    pub table: String,
    /// The line of its `*table`.
    pub line: usize,
    /// Its lines, each with its line number.
    pub lines: Vec<(usize, Line)>,
    /// The line of its `COMMIT` (iptables-legacy-restore names it when the kernel refuses
    /// the table the block makes: `iptables-restore: line N failed`).
    pub commit_line: usize,
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
    /// The words of the line being parsed, one after the other, and where each ends: kept
    /// for the next line, so that a line's words cost no allocation each.
    words: String,
    ends: Vec<usize>,
    /// The lock wait a line's parse defaults to, read from the environment once.
    wait: Option<crate::lock::WaitPolicy>,
}

impl Parser {
    /// A parser for a restore file of `family`.
    pub fn new(family: Family) -> Parser {
        Parser {
            family,
            counters: false,
            blocks: Vec::new(),
            open: None,
            last: 0,
            changes: 0,
            words: String::new(),
            ends: Vec::new(),
            wait: None,
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

    /// The last line parsed into the open block, taken out of it: a reader that applies
    /// each line as it comes takes it after every [`Parser::line`] and never holds the
    /// block whole (the block then ends without lines).
    pub fn pop_line(&mut self) -> Option<(usize, Line)> {
        self.open.as_mut()?.lines.pop()
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
                commit_line: 0,
            });
            return Ok(());
        }
        let Some(block) = open.as_mut() else {
            return Err(at(n, "a rule outside a *table block"));
        };
        if line == "COMMIT" {
            if let Some(mut b) = open.take() {
                b.commit_line = n;
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
            // iptables-restore -c (user chains have none). Both iptables refuse a built-in
            // chain with a policy and without valid counters; for `:BUILTIN -`
            // iptables-nft-restore reads them too, iptables-legacy-restore ignores them.
            let builtin = tables::builtin(&block.table, name).is_some();
            let counters = f
                .next()
                .filter(|_| self.counters && builtin)
                .and_then(|c| c.strip_prefix('[')?.strip_suffix(']')?.split_once(':'))
                .and_then(|(p, b)| {
                    Some(crate::model::Counters {
                        packets: p.parse().ok()?,
                        bytes: b.parse().ok()?,
                    })
                });
            if self.counters && builtin && policy.is_some() && counters.is_none() {
                return Err(at(n, format!("invalid policy counters for chain '{name}'")));
            }
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
        let (buf, ends) = (&mut self.words, &mut self.ends);
        parse::split_words_into(rule, buf, ends).map_err(|e| match e {
            Error::InvalidInput(m) => at(n, m),
            other => other,
        })?;
        // `-t TABLE` and the line's words, borrowed from the buffer.
        let mut args: Vec<&str> = Vec::with_capacity(ends.len() + 2);
        args.extend(["-t", block.table.as_str()]);
        let mut start = 0;
        args.extend(ends.iter().map(|&end| {
            let word = &buf[start..end];
            start = end;
            word
        }));
        let words = &args[2..];
        // A `-6` line is ip6tables-restore's only, a `-4` line iptables-restore's only.
        if super::args::family_flag(words).is_some_and(|f| f != family) {
            return Ok(());
        }
        if words
            .iter()
            .any(|a| *a == "-t" || *a == "--table" || a.starts_with("--table="))
        {
            return Err(at(n, "the table is given by the *table line, not -t"));
        }
        let cached = &mut self.wait;
        let default_wait = || match *cached {
            Some(w) => Ok(w),
            None => crate::lock::WaitPolicy::default_for_command().inspect(|w| *cached = Some(*w)),
        };
        let inv = parse::parse_words_waiting(&args, family, default_wait).map_err(|e| match e {
            Error::InvalidInput(m) => at(n, m),
            other => other,
        })?;
        if !inv.command.mutates() {
            return Err(at(
                n,
                "only commands that change the table belong in a restore file",
            ));
        }
        // `-Z` zeroes counters where the block stands (both backends, in the block's
        // transaction); `-Z CHAIN N` is not carried by a restore line yet.
        if matches!(inv.command, Command::Zero(_)) && inv.rule_number.is_some() {
            return Err(at(
                n,
                "-Z CHAIN N (one rule's counters) is not supported in a restore file; run \
                 `iptables -Z CHAIN N` separately",
            ));
        }
        let mut command = inv.command;
        if counters && let Some(c) = line_counters {
            command.set_counters(c);
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
