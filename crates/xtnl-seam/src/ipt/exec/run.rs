//! Runs one iptables invocation on nf_tables: listings, `-Z CHAIN N`, and every change as
//! one transaction planned by a [`Planner`].

use super::*;

/// Runs one iptables invocation on nf_tables (the one dispatch,
/// [`crate::seam::dispatch::execute`]); returns what to print on standard output.
pub fn execute(session: &mut Session, inv: &Invocation) -> Result<String> {
    crate::seam::dispatch::execute(session, inv)
}

/// Every change as one transaction planned by a [`Planner`] (`-Z` resets the counters
/// after it).
fn change(session: &mut Session, inv: &Invocation) -> Result<String> {
    let table = TableRef::new(inv.family, &inv.table);
    let committed = session
        .transact(|r| plan_change(r, inv))
        .map_err(|e| crate::seam::dispatch::change_words(e, inv))?;
    let (zero, lines) = committed.value;
    if let Some(chain) = zero {
        session.reset_counters(&table, chain.as_deref())?;
    }
    let mut out = String::new();
    if inv.verbose {
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
    }
    Ok(out)
}

/// `-Z CHAIN N` as iptables-nft 1.8.9 does it: rule N is replaced by itself with zero
/// counters; a missing chain is "Bad rule" (status 1), a number past the last rule changes
/// nothing and succeeds.
fn zero_rule(session: &mut Session, inv: &Invocation, chain: &str, n: usize) -> Result<String> {
    let table = &TableRef::new(inv.family, &inv.table);
    let bad_rule = || {
        messages::refused(
            inv.family,
            Msg::BadRule,
            format!("zero rule {n} of chain {chain}"),
        )
    };
    let chains = listing::chains(session, table, Some(chain)).map_err(|_| bad_rule())?;
    let Some(rule) = chains
        .first()
        .and_then(|c| c.rules.get(n - 1))
        .map(|(_, r)| r.clone())
    else {
        return Ok(String::new());
    };
    let mut rule = rule;
    rule.counters = Some(crate::model::Counters::default());
    let replace = Invocation {
        command: Command::Replace {
            chain: chain.to_string(),
            index: n,
            rule,
        },
        verbose: false,
        rule_number: None,
        ..inv.clone()
    };
    // What `-Z CHAIN N` means is zeroing one rule's counters: when the replacement is the
    // rule itself (its expressions and userdata as the kernel holds them, counter values
    // aside), it is judged and recorded as that, the policy's `zero`, as on x_tables. A dry
    // plan finds out; the commit plans again and holds to it in the generation it commits
    // to. A rule that would not come back as itself (what iptables syntax cannot say) is
    // judged as the replacement it is.
    let dry = session
        .transact(|r| {
            let tx = plan_change(r, &replace)?.0;
            Ok((Transaction::new(), r.replaces_rule_by_itself(table, &tx)?))
        })
        .map_err(|e| crate::seam::dispatch::change_words(e, &replace))?;
    if !dry.value {
        return change(session, &replace);
    }
    // The commit plans again and holds to it: the session refuses it (a generation
    // conflict) unless it is still the rule replaced by itself.
    session
        .zero_by_replacing(table, chain, |r| Ok((plan_change(r, &replace)?.0, ())))
        .map_err(|e| crate::seam::dispatch::change_words(e, &replace))?;
    Ok(String::new())
}

/// The transaction of a change and what it prints (`-Z`'s chain, the `-v` lines).
type Planned = (Transaction, (Option<Option<String>>, Vec<String>));

/// Plans one change of `inv` from `r` as one transaction.
fn plan_change(r: &mut Reader<'_>, inv: &Invocation) -> Result<Planned> {
    let table = TableRef::new(inv.family, &inv.table);
    let mut p = Planner::new(r, &table)?;
    p.verbose = inv.verbose;
    p.plan(r, &inv.command)?;
    let mut tx = Transaction::new();
    let out = (p.zero.clone(), std::mem::take(&mut p.verbose_lines));
    if !inv.command.is_check() {
        for op in p.into_ops() {
            tx.push(op);
        }
    }
    Ok((tx, out))
}

impl crate::seam::ListTables for Session {
    fn listings(
        &mut self,
        family: Family,
        table: &str,
        chain: Option<&str>,
    ) -> Result<Vec<listing::ChainListing>> {
        listing::chains(self, &TableRef::new(family, table), chain)
            .map_err(|e| messages::kernel_words(e, family, false))
    }

    fn saved_tables(&mut self, family: Family, table: Option<&str>) -> Result<Vec<String>> {
        crate::ipt::restore::saved_tables(self, family, table)
    }
}

/// nf_tables as a whole backend: iptables' commands planned into one transaction each, a
/// restore file into one batch.
impl crate::seam::Backend for Session {
    fn flavour(&self) -> crate::ipt::Flavour {
        crate::ipt::Flavour::Nft
    }

    fn serves(&self, _family: Family) -> bool {
        true
    }

    fn execute(&mut self, inv: &Invocation) -> Result<String> {
        crate::seam::dispatch::execute(self, inv)
    }

    fn restore(
        &mut self,
        blocks: &[crate::ipt::restore_file::Block],
        family: Family,
        noflush: bool,
    ) -> Result<usize> {
        crate::ipt::restore::apply(self, blocks, family, noflush)
    }

    fn restore_owned(
        &mut self,
        blocks: Vec<crate::ipt::restore_file::Block>,
        reparse: &mut dyn FnMut() -> Result<Vec<crate::ipt::restore_file::Block>>,
        family: Family,
        noflush: bool,
    ) -> Result<usize> {
        crate::ipt::restore::apply_owned(self, blocks, reparse, family, noflush)
    }

    fn chain_names(&mut self, family: Family, table: &str) -> Result<Vec<String>> {
        let existing = crate::ipt::restore::saved_tables(self, family, None)?;
        if !existing.iter().any(|e| e == table) {
            return Ok(Vec::new());
        }
        let chains = listing::chains(self, &TableRef::new(family, table), None)?;
        Ok(chains.into_iter().map(|c| c.name).collect())
    }
}

/// nf_tables' side of the one dispatch.
impl crate::seam::dispatch::IptCommands for Session {
    fn flavour(&self) -> crate::ipt::Flavour {
        crate::ipt::Flavour::Nft
    }

    fn read_listing(
        &mut self,
        family: Family,
        table: &str,
        only: Option<&str>,
    ) -> Result<Vec<listing::ChainListing>> {
        listing::read(self, &TableRef::new(family, table), only)
    }

    /// The listing, then `-Z` as its own transaction (with `-v`, its `Zeroing chain`
    /// lines).
    fn list_and_zero(&mut self, inv: &Invocation, chain: Option<&str>) -> Result<String> {
        let list = Invocation {
            zero_after_list: false,
            ..inv.clone()
        };
        let mut text = crate::seam::dispatch::list(self, &list)?;
        let zero = Invocation {
            command: Command::Zero(chain.map(str::to_string)),
            zero_after_list: false,
            ..inv.clone()
        };
        // `-L CHAIN N -Z`: rule N's counters only.
        text.push_str(&crate::seam::dispatch::execute(self, &zero)?);
        Ok(text)
    }

    fn zero_rule(&mut self, inv: &Invocation, chain: &str, n: usize) -> Result<String> {
        zero_rule(self, inv, chain, n)
    }

    fn change(&mut self, inv: &Invocation) -> Result<String> {
        change(self, inv)
    }
}
