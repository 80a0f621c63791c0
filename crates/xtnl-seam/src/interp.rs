//! The one interpreter of iptables commands: checks in iptables' order, refusals in its
//! words, and the edits a command makes, over any backend's [`IptTable`].

use super::{Edit, Flavour, IptTable, RuleRef};
use crate::error::{Error, Result};
use crate::ipt::listing::change_line;
use crate::ipt::messages::{self, Msg};
use crate::ipt::parse::Command;
use crate::ipt::restore_file::{Block, Line};
use crate::ipt::{IptRule, IptTarget};
use crate::model::{ChainPolicy, Counters, Family};

/// Applies one edit to the backend's view and records it; a view that judges its edits
/// ([`IptTable::take_judge`]) derives what it touches first, from the view as it stands.
fn edit<T: IptTable>(
    t: &mut T,
    edits: &mut Vec<Edit>,
    e: Edit,
    encoded: Option<T::Encoded>,
) -> Result<()> {
    if let Some(mut j) = t.take_judge() {
        let noted = j.note(t, &e);
        t.put_judge(j);
        noted?;
    }
    t.apply(&e, encoded)?;
    edits.push(e);
    Ok(())
}

/// What `-v` prints of a rule added or deleted; made only under `-v` (rendering every rule
/// of a restore of 80,000 was a good part of its time and memory, for nothing).
fn say_rule<T: IptTable>(t: &mut T, rule: &IptRule, family: Family, flavour: Flavour) {
    if t.verbose() {
        t.say(change_line(rule, family, flavour));
    }
}

fn require<T: IptTable>(t: &mut T, chain: &str) -> Result<()> {
    if t.exists(chain)? {
        Ok(())
    } else {
        Err(messages::not_found(
            t.family(),
            format!("chain {chain} in table {}", t.label()),
        ))
    }
}

/// iptables checks a jump's target chain before anything else: status 2.
fn check_jump<T: IptTable>(t: &mut T, rule: &IptRule) -> Result<()> {
    if let Some(target) = rule.jump_target()
        && (t.builtin(target) || !t.exists(target)?)
    {
        return Err(Error::InvalidInput(format!(
            "Chain '{target}' does not exist"
        )));
    }
    Ok(())
}

/// The message for a `-D`/`-C` that finds no equal rule. iptables-nft says "Bad rule";
/// iptables-legacy 1.8.9 words it by the target: a verdict (or none) gives "Bad rule", a
/// chain or a target extension "No chain/target/match".
fn no_equal_rule(flavour: Flavour, rule: &IptRule) -> Msg {
    let verdict = matches!(
        rule.target,
        None | Some(IptTarget::Accept | IptTarget::Drop | IptTarget::Return)
    );
    match flavour {
        Flavour::Legacy if !verdict => Msg::NoChain,
        _ => Msg::BadRule,
    }
}

/// Interprets one command against the table: checks it, applies its edits to the view and
/// returns them (none for `-C`). Listings are not changes and are refused here.
pub fn interpret<T: IptTable>(t: &mut T, cmd: &Command) -> Result<Vec<Edit>> {
    let family = t.family();
    let flavour = t.flavour();
    // Room for the one edit of most commands (a first push would make room for four).
    let mut edits = Vec::with_capacity(1);
    match cmd {
        Command::Expanded(each) => {
            for c in each {
                edits.extend(interpret(t, c)?);
            }
        }
        Command::Append { chain, rule } => {
            require(t, chain)?;
            check_jump(t, rule)?;
            let encoded = t.encode(rule)?;
            say_rule(t, rule, family, flavour);
            let e = Edit::Append {
                chain: chain.clone(),
                rule: rule.clone(),
            };
            edit(t, &mut edits, e, Some(encoded))?;
        }
        Command::Insert { chain, index, rule } => {
            require(t, chain)?;
            check_jump(t, rule)?;
            let encoded = t.encode(rule)?;
            // The head needs no read of the chain.
            if *index != 1 {
                let len = t.rule_count(chain)?;
                if *index == 0 || *index > len + 1 {
                    return Err(messages::refused(
                        family,
                        Msg::InsertTooBig,
                        format!("insert at {index} in {chain} of {len} rules"),
                    ));
                }
            }
            let e = Edit::Insert {
                chain: chain.clone(),
                index: *index,
                rule: rule.clone(),
            };
            edit(t, &mut edits, e, Some(encoded))?;
            say_rule(t, rule, family, flavour);
        }
        Command::Delete { chain, rule } | Command::Check { chain, rule } => {
            check_jump(t, rule)?;
            // A missing chain: both iptables say "Bad rule", whatever the target (fail2ban's
            // `-C f2b-X -j RETURN` before the chain exists).
            if !t.exists(chain)? {
                return Err(messages::refused(
                    family,
                    Msg::BadRule,
                    format!("no chain {chain} in table {}", t.label()),
                ));
            }
            let Some(index) = t.find(chain, rule)? else {
                return Err(messages::refused(
                    family,
                    no_equal_rule(t.flavour(), rule),
                    format!("no rule in {chain} equals the given one"),
                ));
            };
            if let Command::Delete { .. } = cmd {
                let e = Edit::Delete {
                    chain: chain.clone(),
                    at: RuleRef::Number(index),
                };
                edit(t, &mut edits, e, None)?;
            }
            // `-v -C` echoes the rule it found.
            say_rule(t, rule, family, flavour);
        }
        Command::DeleteIndex { chain, index } | Command::Replace { chain, index, .. } => {
            require(t, chain)?;
            let new = match cmd {
                Command::Replace { rule, .. } => {
                    check_jump(t, rule)?;
                    Some((rule, t.encode(rule)?))
                }
                _ => None,
            };
            let len = t.rule_count(chain)?;
            if *index == 0 || *index > len {
                let msg = if new.is_some() {
                    Msg::ReplaceTooBig
                } else {
                    Msg::DeleteTooBig
                };
                return Err(messages::refused(
                    family,
                    msg,
                    format!("rule {index} of {len} in {chain}"),
                ));
            }
            match new {
                Some((rule, encoded)) => {
                    let e = Edit::Replace {
                        chain: chain.clone(),
                        at: RuleRef::Number(*index),
                        rule: rule.clone(),
                    };
                    edit(t, &mut edits, e, Some(encoded))?;
                    say_rule(t, rule, family, flavour);
                }
                None => {
                    // iptables-legacy -v prints the rule it deleted; iptables-nft nothing.
                    let old = match t.flavour() {
                        Flavour::Legacy => t.rule_at(chain, *index)?,
                        Flavour::Nft => None,
                    };
                    let e = Edit::Delete {
                        chain: chain.clone(),
                        at: RuleRef::Number(*index),
                    };
                    edit(t, &mut edits, e, None)?;
                    if let Some(old) = old {
                        say_rule(t, &old, family, flavour);
                    }
                }
            }
        }
        Command::NewChain(chain) => {
            if t.exists(chain)? {
                return Err(messages::exists(
                    family,
                    Msg::ChainExists,
                    format!("create chain {chain}"),
                ));
            }
            edit(t, &mut edits, Edit::CreateChain(chain.clone()), None)?;
        }
        Command::DeleteChain(Some(chain)) if flavour == Flavour::Nft && t.builtin(chain) => {
            delete_builtin(t, chain, &mut edits)?;
        }
        Command::DeleteChain(Some(chain)) => {
            require(t, chain)?;
            if t.is_base(chain)? {
                return Err(match t.flavour() {
                    Flavour::Nft => {
                        messages::refused(family, Msg::CantDeleteBuiltin, format!("chain {chain}"))
                    }
                    // libiptc refuses with EINVAL, which iptables-legacy prints as it
                    // prints any kernel EINVAL.
                    Flavour::Legacy => Error::Rejected(messages::failure(
                        libc::EINVAL,
                        format!("delete built-in chain {chain}"),
                    ))
                    .context(Msg::InvalidArgument.text(family)),
                });
            }
            // iptables-legacy checks references before emptiness.
            let references = t.references(chain)?;
            let rules = t.rule_count(chain)?;
            check_deletable(t, chain, references > 0, rules)?;
            t.say(format!("Deleting chain `{chain}'"));
            edit(t, &mut edits, Edit::DeleteChain(chain.clone()), None)?;
        }
        Command::DeleteChain(None) => {
            // Every user chain, in order: one still jumped to, or with rules, stops it
            // before anything is deleted.
            // iptables-legacy tries every chain and reports the last refusal
            // (`for_each_chain`'s `ret &= fn(...)`, errno of the last failure), committing
            // nothing; iptables-nft's batch fails at the first.
            let users = t.user_chains()?;
            let mut refused = None;
            for name in &users {
                let jumped = t.jumped_to(name)?;
                let rules = if jumped { 0 } else { t.rule_count(name)? };
                if let Err(e) = check_deletable(t, name, jumped, rules) {
                    if flavour == Flavour::Nft {
                        return Err(e);
                    }
                    refused = Some(e);
                }
            }
            if let Some(e) = refused {
                return Err(e);
            }
            for name in users {
                t.say(format!("Deleting chain `{name}'"));
                edit(t, &mut edits, Edit::DeleteChain(name), None)?;
            }
            // iptables-nft 1.8.9 also deletes, silently, every built-in chain that is empty
            // with policy ACCEPT (`nft_may_delete_chain`): what `nft list ruleset` shows
            // after `iptables -F; iptables -X` is only what still does something.
            if flavour == Flavour::Nft {
                for name in t.chain_order()? {
                    if t.builtin(&name)
                        && t.policy(&name)? == Some(ChainPolicy::Accept)
                        && t.rule_count(&name)? == 0
                    {
                        edit(t, &mut edits, Edit::DeleteChain(name), None)?;
                    }
                }
                t.forget_builtins();
            }
        }
        Command::Flush(Some(chain)) => {
            require(t, chain)?;
            t.say(format!("Flushing chain `{chain}'"));
            // iptables-nft 1.8.9 makes a built-in chain it flushes (and its table)
            if t.flavour() == Flavour::Nft && t.builtin(chain) && !t.counted(chain)? {
                let e = Edit::DeclareBuiltin {
                    chain: chain.clone(),
                    policy: None,
                    counters: None,
                };
                edit(t, &mut edits, e, None)?;
            }
            edit(t, &mut edits, Edit::Flush(chain.clone()), None)?;
        }
        Command::Flush(None) => {
            if t.verbose() {
                for name in t.chain_order()? {
                    t.say(format!("Flushing chain `{name}'"));
                    // iptables-nft 1.8.9 flushes chain by chain under -v, after making the
                    // table and every built-in chain it lacks (policy ACCEPT): a later
                    // `-v -Z` names them (iptables/0002-verbose-output)
                    if t.flavour() == Flavour::Nft && t.builtin(&name) && !t.counted(&name)? {
                        let e = Edit::DeclareBuiltin {
                            chain: name,
                            policy: None,
                            counters: None,
                        };
                        edit(t, &mut edits, e, None)?;
                    }
                }
            }
            edit(t, &mut edits, Edit::FlushAll, None)?;
        }
        Command::Zero(chain) => {
            if let Some(c) = chain {
                require(t, c)?;
                // iptables-nft 1.8.9 zeroes only chains its cache read from the kernel: a
                // built-in chain not made yet is "No chain/target/match by that name." under
                // iptables' names (xtnl's own name answers as if it existed, as before)
                if t.flavour() == Flavour::Nft
                    && messages::as_iptables()
                    && t.builtin(c)
                    && !t.counted(c)?
                {
                    return Err(messages::not_found(
                        family,
                        format!("chain {c} in table {}", t.label()),
                    ));
                }
            }
            if t.verbose() {
                for name in t.chain_order()? {
                    if chain.as_ref().is_none_or(|c| *c == name) && t.counted(&name)? {
                        t.say(format!("Zeroing chain `{name}'"));
                    }
                }
            }
            edit(t, &mut edits, Edit::Zero(chain.clone()), None)?;
        }
        Command::Policy { chain, policy } => {
            if !t.builtin(chain) {
                return Err(messages::refused(
                    family,
                    Msg::BadBuiltin,
                    format!("chain {chain}"),
                ));
            }
            let e = Edit::Policy {
                chain: chain.clone(),
                policy: *policy,
            };
            edit(t, &mut edits, e, None)?;
        }
        Command::Rename { from, to } => {
            // iptables checks the new name first: `-E missing existing` is "File exists."
            let clashes = matches!(to.as_str(), "ACCEPT" | "DROP" | "RETURN" | "QUEUE");
            if clashes || t.exists(to)? {
                return Err(messages::exists(
                    family,
                    Msg::FileExists,
                    format!("rename chain {from} to {to}"),
                ));
            }
            require(t, from)?;
            if t.is_base(from)? {
                return Err(match t.flavour() {
                    Flavour::Nft => {
                        messages::refused(family, Msg::CantRenameBuiltin, format!("chain {from}"))
                    }
                    // libiptc looks up only user chains to rename.
                    Flavour::Legacy => {
                        messages::not_found(family, format!("chain {from} in table {}", t.label()))
                    }
                });
            }
            let e = Edit::Rename {
                from: from.clone(),
                to: to.clone(),
            };
            edit(t, &mut edits, e, None)?;
        }
        Command::ListRules(_) | Command::List(_) => {
            return Err(Error::InvalidInput("listing is not a change".into()));
        }
    }
    Ok(edits)
}

/// `-X BUILTIN` as iptables-nft 1.8.9 does it: a built-in chain in the kernel that is empty
/// with policy ACCEPT is deleted (it comes back with the next rule); one with another policy
/// is refused ("Directory not empty.", status 1), one with rules is what the kernel refuses
/// (`CHAIN_DEL failed (Device or resource busy)`, status 4, see the drop-in report), and
/// one not in the kernel does not exist.
fn delete_builtin<T: IptTable>(t: &mut T, chain: &str, edits: &mut Vec<Edit>) -> Result<()> {
    let family = t.family();
    if !t.exists(chain)? || !t.counted(chain)? {
        return Err(messages::not_found(
            family,
            format!("chain {chain} in table {}", t.label()),
        ));
    }
    match t.policy(chain)? {
        Some(ChainPolicy::Accept) => {}
        Some(_) => {
            return Err(messages::refused(
                family,
                Msg::NotEmpty,
                format!("built-in chain {chain} has a policy other than ACCEPT"),
            ));
        }
        // A view that does not say (the in-memory backend): not deleted.
        None => {
            return Err(messages::refused(
                family,
                Msg::CantDeleteBuiltin,
                format!("chain {chain}"),
            ));
        }
    }
    if t.rule_count(chain)? > 0 {
        return Err(messages::in_use(
            family,
            Msg::CantDeleteBuiltin,
            format!("delete chain {chain}"),
            libc::EBUSY,
        ));
    }
    edit(t, edits, Edit::DeleteChain(chain.to_string()), None)
}

fn check_deletable<T: IptTable>(t: &T, chain: &str, referenced: bool, rules: usize) -> Result<()> {
    let family = t.family();
    if referenced {
        return Err(messages::in_use(
            family,
            Msg::TooManyLinks,
            format!("delete chain {chain}"),
            libc::EMLINK,
        ));
    }
    if rules > 0 {
        return Err(messages::in_use(
            family,
            Msg::NotEmpty,
            format!("delete chain {chain}"),
            libc::ENOTEMPTY,
        ));
    }
    Ok(())
}

/// `iptables-restore`'s `:CHAIN POLICY [p:b]` line: a built-in chain gets the policy (each
/// backend as its restore does: see [`Edit::DeclareBuiltin`]); a user chain is created, or
/// flushed if it exists.
pub fn declare_chain<T: IptTable>(
    t: &mut T,
    chain: &str,
    policy: Option<ChainPolicy>,
    counters: Option<Counters>,
) -> Result<Vec<Edit>> {
    let mut edits = Vec::new();
    if t.builtin(chain) {
        let e = Edit::DeclareBuiltin {
            chain: chain.to_string(),
            policy,
            counters,
        };
        edit(t, &mut edits, e, None)?;
    } else if policy.is_some() {
        return Err(messages::refused(
            t.family(),
            Msg::BadBuiltin,
            format!("policy for user chain {chain}"),
        ));
    } else if t.exists(chain)? {
        edit(t, &mut edits, Edit::Flush(chain.to_string()), None)?;
    } else {
        edit(t, &mut edits, Edit::CreateChain(chain.to_string()), None)?;
    }
    Ok(edits)
}

/// One line of a restore block: a chain declaration, or a command (its kernel refusals in
/// iptables' words).
pub fn restore_line<T: IptTable>(t: &mut T, line: &Line) -> Result<Vec<Edit>> {
    match line {
        Line::Chain {
            name,
            policy,
            counters,
        } => declare_chain(t, name, *policy, *counters),
        Line::Command(cmd) => interpret(t, cmd).map_err(|e| {
            messages::kernel_words(e, t.family(), matches!(**cmd, Command::DeleteChain(_)))
        }),
    }
}

/// A whole restore block on one table: without `--noflush` the table is reset first and
/// the user chains not declared again go at the end (each backend as its restore does it).
/// A failing line is named (`line N failed`).
pub fn restore_block<T: IptTable>(t: &mut T, block: &Block, noflush: bool) -> Result<Vec<Edit>> {
    let mut edits = Vec::new();
    restore_block_with(t, block, noflush, |_, _, done| edits.extend(done))?;
    Ok(edits)
}

/// [`restore_block`], the one restore loop of every backend: each step's edits (the reset,
/// each line, the end of the reset) go to `keep` with the view they were applied to and the
/// number of the line they come from (the block's `*table` line for the reset and its
/// end), instead of being collected: a backend that applies them as they come need not hold
/// a copy of every rule, and one that names a kernel refusal by its line (nf_tables' batch)
/// marks what each line planned.
pub fn restore_block_with<T: IptTable>(
    t: &mut T,
    block: &Block,
    noflush: bool,
    keep: impl FnMut(&mut T, usize, Vec<Edit>),
) -> Result<()> {
    let lines = block.lines.iter().map(|(n, l)| (*n, l));
    restore_lines_with(t, block.line, lines, noflush, keep)
}

/// [`restore_block_with`] over a block's lines given one at a time, borrowed or owned
/// (`table_line` is the line of its `*table`): a caller that owns the parsed block hands
/// its lines over, and each is freed once it is planned instead of living until the end
/// of the restore (a parsed line is some 6 times its text).
pub fn restore_lines_with<T: IptTable, L: std::borrow::Borrow<Line>>(
    t: &mut T,
    table_line: usize,
    lines: impl IntoIterator<Item = (usize, L)>,
    noflush: bool,
    mut keep: impl FnMut(&mut T, usize, Vec<Edit>),
) -> Result<()> {
    let mut edits = Vec::new();
    if !noflush {
        edit(t, &mut edits, Edit::Reset, None)?;
        keep(t, table_line, std::mem::take(&mut edits));
    }
    let mut declared = Vec::new();
    for (n, line) in lines {
        let line = line.borrow();
        if let Line::Chain { name, .. } = line {
            declared.push(name.clone());
        }
        let done = restore_line(t, line).map_err(|e| e.context(format!("line {n} failed")))?;
        keep(t, n, done);
    }
    if !noflush {
        edit(t, &mut edits, Edit::FinishReset { declared }, None)?;
        keep(t, table_line, edits);
    }
    Ok(())
}
