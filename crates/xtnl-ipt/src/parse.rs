//! iptables' command line: global options, exactly one command, and a rule spec of `-s -d -i
//! -o -p`, `-m` modules with their options (tcp/udp load implicitly after `-p`), and a
//! target with its options. Errors name the offending option; nothing is sent for them.
//!
//! [`parse`] reads the options with one function per option family (`parse/options.rs`),
//! then builds and checks the command (`parse/command.rs`); values of options are read in
//! `parse/values.rs`, the target in `parse/target.rs`; extensions live in `ipt::ext`, one
//! file each.

#![deny(missing_docs)]

use crate::model::ChainPolicy;
use std::net::IpAddr;
use std::time::Duration;

mod command;
mod options;
mod target;
pub(crate) use target::NAT_PORTS_NEED_PROTO;
#[cfg(feature = "extensions")]
pub(crate) use target::nat_ports_proto;
#[cfg(test)]
mod tests;
mod values;

use options::Parser;
use target::{ext_match, ext_target_of, is_known_target, is_typed_target, parse_target};
pub(crate) use values::{log_level, parse_nat_range, parse_ports, parse_to_ports};
use values::{parse_nets, parse_port_list};

use super::protocols;
use super::rule::{
    CtStates, IptMatch, IptRule, IptTarget, LogOpts, Multiport, MultiportDir, NatRange, Neg,
    PortsMatch, RejectWith,
};
use crate::error::{Error, Result};
use crate::lock::WaitPolicy;
use crate::model::{Family, Interface, IpNet, L4Proto, PortRange, validate_name};

/// One iptables invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// `ip` or `ip6` (`-4`/`-6`, or the program's name).
    pub family: Family,
    /// `-t`, default `filter`.
    pub table: String,
    /// What to do.
    pub command: Command,
    /// `-w [secs]`; without `-w` the bounded default ([`WaitPolicy::default_for_command`]);
    /// `-w 0` fails at once.
    pub wait: WaitPolicy,
    /// `-W usecs`: the lock poll interval.
    pub wait_interval: Option<Duration>,
    /// `-n`: addresses and ports as numbers.
    pub numeric: bool,
    /// `-v`: counters and interfaces in listings; changed rules printed.
    pub verbose: bool,
    /// `-x`: exact counters, not rounded to K/M/G.
    pub exact: bool,
    /// `--line-numbers`: listings number the rules.
    pub line_numbers: bool,
    /// `-L -Z`: zero the counters after listing them.
    pub zero_after_list: bool,
    /// `-S CHAIN N`, `-L CHAIN N`, `-Z CHAIN N`: the one rule the command is about.
    pub rule_number: Option<usize>,
}

/// An iptables command, with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `-A CHAIN rule`: add at the end.
    Append {
        /// The chain.
        chain: String,
        /// The rule.
        rule: IptRule,
    },
    /// `-I CHAIN [N] rule`: add at position `index` (1 is the head).
    Insert {
        /// The chain.
        chain: String,
        /// The position, from 1.
        index: usize,
        /// The rule.
        rule: IptRule,
    },
    /// `-D CHAIN rule`: delete the first rule equal to `rule`.
    Delete {
        /// The chain.
        chain: String,
        /// The rule.
        rule: IptRule,
    },
    /// `-D CHAIN N`: delete the rule at a position.
    DeleteIndex {
        /// The chain.
        chain: String,
        /// The position, from 1.
        index: usize,
    },
    /// `-R CHAIN N rule`: replace the rule at a position.
    Replace {
        /// The chain.
        chain: String,
        /// The position, from 1.
        index: usize,
        /// The new rule.
        rule: IptRule,
    },
    /// `-C CHAIN rule`: whether such a rule exists (exit status 1 if not).
    Check {
        /// The chain.
        chain: String,
        /// The rule.
        rule: IptRule,
    },
    /// `-N CHAIN`: create a user chain.
    NewChain(String),
    /// `-X [CHAIN]`: delete a user chain, or every empty unreferenced one.
    DeleteChain(Option<String>),
    /// `-F [CHAIN]`: delete the rules of a chain, or of every chain.
    Flush(Option<String>),
    /// `-Z [CHAIN]`: zero the counters of a chain, or of every chain.
    Zero(Option<String>),
    /// `-P CHAIN POLICY`: set a built-in chain's policy.
    Policy {
        /// The built-in chain.
        chain: String,
        /// The policy.
        policy: ChainPolicy,
    },
    /// `-E OLD NEW`: rename a user chain.
    Rename {
        /// The chain's name.
        from: String,
        /// Its new name.
        to: String,
    },
    /// `-S [CHAIN]`: the rules as commands.
    ListRules(Option<String>),
    /// `-L [CHAIN]`: the rules as a table.
    List(Option<String>),
    /// `-A`, `-I`, `-D` or `-C` of a rule given several addresses (`-s a,b -d c`): one
    /// command per source and destination pair, sources outer, in iptables' order, carried
    /// out in one transaction (iptables' `add_entry`/`delete_entry`/`check_entry` loops).
    Expanded(Vec<Command>),
}

impl Command {
    /// Whether it changes the ruleset (and so takes the xtables lock).
    pub fn mutates(&self) -> bool {
        match self {
            Command::Expanded(each) => each.iter().any(Command::mutates),
            _ => !matches!(
                self,
                Command::ListRules(_) | Command::List(_) | Command::Check { .. }
            ),
        }
    }

    /// Whether it is a `-C` (of one rule or of each of several addresses).
    pub fn is_check(&self) -> bool {
        match self {
            Command::Check { .. } => true,
            Command::Expanded(each) => each.iter().all(Command::is_check),
            _ => false,
        }
    }

    /// The command itself, or each of an [`Command::Expanded`] one.
    pub fn each(&self) -> &[Command] {
        match self {
            Command::Expanded(each) => each,
            one => std::slice::from_ref(one),
        }
    }

    /// Gives the rule a command adds the counters it starts from (`restore -c`, `-c P B`).
    pub fn set_counters(&mut self, c: crate::model::Counters) {
        if let Command::Expanded(each) = self {
            each.iter_mut().for_each(|cmd| cmd.set_counters(c));
        }
        if let Command::Append { rule, .. }
        | Command::Insert { rule, .. }
        | Command::Replace { rule, .. } = self
        {
            rule.counters = Some(c);
        }
    }
}

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidInput(msg.into())
}

/// Which command letter a long or short option names, for "multiple commands" errors.
fn command_letter(opt: &str) -> Option<char> {
    // A short option by its letter: a match of `opt` against the strings below compares it
    // with each one of its length (13 calls of `memcmp` for every `-d`, `-p`, `-m`, `-j`).
    if let [b'-', c] = opt.as_bytes() {
        return b"AIDRCNXFZPESL".contains(c).then_some(char::from(*c));
    }
    Some(match opt {
        "-A" | "--append" => 'A',
        "-I" | "--insert" => 'I',
        "-D" | "--delete" => 'D',
        "-R" | "--replace" => 'R',
        "-C" | "--check" => 'C',
        "-N" | "--new-chain" => 'N',
        "-X" | "--delete-chain" => 'X',
        "-F" | "--flush" => 'F',
        "-Z" | "--zero" => 'Z',
        "-P" | "--policy" => 'P',
        "-E" | "--rename-chain" => 'E',
        "-S" | "--list-rules" => 'S',
        "-L" | "--list" => 'L',
        _ => return None,
    })
}

/// Parses one iptables command line (without the program name). `default_family` is IPv6
/// when invoked as `ip6tables`/`xtnl6`.
pub fn parse(argv: &[String], default_family: Family) -> Result<Invocation> {
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    parse_words(&words, default_family)
}

/// [`parse`] of borrowed words (a restore's line, split into one buffer kept for the next
/// line: no allocation a word).
pub fn parse_words(argv: &[&str], default_family: Family) -> Result<Invocation> {
    parse_words_waiting(argv, default_family, WaitPolicy::default_for_command)
}

/// [`parse_words`] with the default lock wait (no `-w`) given by `default_wait`: a restore
/// asks `$XTNL_LOCK_WAIT` once, not once a line.
pub(crate) fn parse_words_waiting(
    argv: &[&str],
    default_family: Family,
    default_wait: impl FnOnce() -> Result<WaitPolicy>,
) -> Result<Invocation> {
    let (unbundled, words);
    let argv = if super::args::needs_unbundling(argv) {
        unbundled = super::args::unbundle(argv);
        words = unbundled.iter().map(String::as_str).collect::<Vec<_>>();
        &words
    } else {
        argv
    };
    let mut p = Parser::new(argv, default_family, default_wait()?);
    p.read_options()?;
    p.finish()
}

/// Splits a command line the way iptables-restore splits a rule line (and a shell would for
/// these): whitespace separates words, double quotes group, and inside quotes a backslash
/// takes the next character literally.
pub fn split_words(line: &str) -> Result<Vec<String>> {
    let (mut buf, mut ends) = (String::new(), Vec::new());
    split_words_into(line, &mut buf, &mut ends)?;
    let mut start = 0;
    Ok(ends
        .iter()
        .map(|&end| {
            let word = buf[start..end].to_owned();
            start = end;
            word
        })
        .collect())
}

/// [`split_words`] into `buf`, the words one after the other, and `ends`, where each word
/// ends in `buf` (the first starts at 0): both cleared first, and kept by a caller for the
/// next line, so that splitting a line allocates nothing once they are large enough.
pub fn split_words_into(line: &str, buf: &mut String, ends: &mut Vec<usize>) -> Result<()> {
    buf.clear();
    ends.clear();
    let (cur, out) = (buf, ends);
    let (mut quoted, mut any) = (false, false);
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // A run of characters copied as they are, a slice at a time: ASCII, not a quote,
        // not a backslash inside quotes, not a blank outside them (char::is_whitespace's
        // ASCII blanks; the others are not ASCII and go one at a time below).
        let start = i;
        while let Some(&b) = bytes.get(i) {
            let blank = matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ');
            if !b.is_ascii() || b == b'"' || (quoted && b == b'\\') || (!quoted && blank) {
                break;
            }
            i += 1;
        }
        if i > start {
            cur.push_str(&line[start..i]);
            any = true;
            continue;
        }
        let Some(c) = line[i..].chars().next() else {
            break;
        };
        i += c.len_utf8();
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            '\\' if quoted => match line[i..].chars().next() {
                Some(e) => {
                    cur.push(e);
                    i += e.len_utf8();
                }
                None => return Err(bad("a backslash ends the line")),
            },
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(cur.len());
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if quoted {
        return Err(bad("unterminated quote"));
    }
    if any {
        out.push(cur.len());
    }
    Ok(())
}

fn unknown_option(opt: &str) -> Error {
    if !crate::ext::ENABLED {
        // It may be an option of a registry module (`--syn`, `--random`): say what is missing.
        return bad(format!(
            "unknown option \"{opt}\" (this build of xtnl has no extension registry: \
             the cargo feature `extensions` is off)"
        ));
    }
    bad(format!("unknown option \"{opt}\""))
}

/// A chain named on iptables' command line: iptables' bounds and words ([`crate::limits`]).
pub(crate) fn validate_chain_name(c: &str) -> Result<()> {
    crate::limits::check_iptables_chain_name(crate::limits::NameDialect::Iptables, c)
}
