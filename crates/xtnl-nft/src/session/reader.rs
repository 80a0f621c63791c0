//! [`Reader`]: the reads of a transaction's plan, pinned to one generation.

use super::*;

/// Reads the ruleset while a transaction is planned. The first read fetches the generation
/// id, which the commit then carries: if anything changed after it, the kernel refuses the
/// batch and the plan runs again on fresh state.
pub struct Reader<'s> {
    pub(crate) sock: &'s mut Conn,
    pub(crate) stats: &'s mut SessionStats,
    pub(crate) generation: Option<u32>,
}

impl Reader<'_> {
    pub(crate) fn pin(&mut self) -> Result<()> {
        if self.generation.is_none() {
            self.generation = Some(get_generation(self.sock)?);
        }
        Ok(())
    }
    /// The generation the plan's reads are based on.
    pub fn generation(&mut self) -> Result<u32> {
        self.pin()?;
        Ok(self.generation.unwrap_or_default())
    }
    /// Every table, read at the plan's generation.
    pub fn tables(&mut self) -> Result<Vec<Table>> {
        self.pin()?;
        dump_tables(self.sock, &mut self.stats.dump_restarts)
    }
    /// The chains of `table`, read at the plan's generation.
    pub fn chains(&mut self, table: &TableRef) -> Result<Vec<Chain>> {
        self.pin()?;
        dump_chains(self.sock, &mut self.stats.dump_restarts, table)
    }
    /// One chain, by name: a single-object request, not a dump of the table's chains.
    pub fn chain(&mut self, chain: &ChainRef) -> Result<Option<Chain>> {
        self.pin()?;
        get_chain(self.sock, chain)
    }
    /// Whether the table exists: a single-object request.
    pub fn table_exists(&mut self, table: &TableRef) -> Result<bool> {
        self.pin()?;
        get_table_exists(self.sock, table)
    }
    /// Rules of one chain, or of the whole table (`chain: None`).
    pub fn rules(&mut self, table: &TableRef, chain: Option<&str>) -> Result<Vec<ListedRule>> {
        self.pin()?;
        dump_rules(self.sock, &mut self.stats.dump_restarts, table, chain)
    }
    /// Every table of `family` (`None`: every family) as the kernel reports it (flags and
    /// handle included), in the kernel's order.
    pub fn table_reprs(
        &mut self,
        family: Option<u8>,
    ) -> Result<Vec<crate::wire::nftables::TableRepr>> {
        self.pin()?;
        dump_all(
            self.sock,
            &mut self.stats.dump_restarts,
            msg::GETTABLE,
            family.unwrap_or(nfproto::UNSPEC),
            &|_| {},
            |fam, attrs| Ok(Some(TableRepr::parse(fam, attrs)?)),
        )
    }
    /// The chains of the table `name` of `family` as the kernel reports them (hook, device,
    /// priority, type, policy and handle), in the kernel's order.
    pub fn chain_reprs(&mut self, family: u8, name: &str) -> Result<Vec<ChainRepr>> {
        self.pin()?;
        let owned = name.to_owned();
        dump_all(
            self.sock,
            &mut self.stats.dump_restarts,
            msg::GETCHAIN,
            family,
            &|w| {
                w.strz(crate::wire::nftables::NFTA_CHAIN_TABLE, &owned);
            },
            |fam, attrs| {
                let c = ChainRepr::parse(fam, attrs)?;
                Ok((c.table == name).then_some(c))
            },
        )
    }
    /// The named stateful objects (counters, quotas, limits, ct helpers...) of the table
    /// `name` of `family`, in the kernel's order.
    pub fn object_reprs(
        &mut self,
        family: u8,
        name: &str,
    ) -> Result<Vec<crate::wire::object::ObjRepr>> {
        self.pin()?;
        let owned = name.to_owned();
        dump_all(
            self.sock,
            &mut self.stats.dump_restarts,
            crate::wire::object::GETOBJ,
            family,
            &|w| {
                w.strz(crate::wire::object::attr::TABLE, &owned);
            },
            |fam, attrs| {
                let o = crate::wire::object::ObjRepr::parse(fam, attrs)?;
                Ok((o.table == name).then_some(o))
            },
        )
    }
    /// Rules of a table (or one chain), undecoded.
    pub fn raw_rules(&mut self, table: &TableRef, chain: Option<&str>) -> Result<Vec<RawRule>> {
        self.pin()?;
        dump_rule_reprs(
            self.sock,
            &mut self.stats.dump_restarts,
            table,
            chain,
            RawRule::from_repr,
        )
    }
    /// [`Reader::raw_rules`], each rule handed to `each` as soon as it is whole, in the
    /// kernel's order (a listing decodes thousands of rules without holding them all
    /// undecoded as well).
    pub fn each_raw_rule(
        &mut self,
        table: &TableRef,
        chain: Option<&str>,
        each: impl FnMut(RawRule),
    ) -> Result<()> {
        self.pin()?;
        let each = std::cell::RefCell::new(each);
        // A `Vec<()>` holds nothing.
        dump_rule_reprs(
            self.sock,
            &mut self.stats.dump_restarts,
            table,
            chain,
            |r, sets| RawRule::from_repr(r, sets).map(|r| (each.borrow_mut())(r)),
        )
        .map(drop)
    }
    /// Where `iptables -I CHAIN n` puts a rule: before the n-th rule (1-based), or at the
    /// end when n is one past the last.
    pub fn position_of_index(&mut self, chain: &ChainRef, n: usize) -> Result<RulePosition> {
        if n == 0 {
            return Err(Error::InvalidInput("rule positions start at 1".into()));
        }
        if n == 1 {
            // Still read, so that a missing chain is reported and the genid is pinned.
            self.chain_must_exist(chain)?;
            return Ok(RulePosition::Head);
        }
        self.chain_must_exist(chain)?;
        let rules = self.rules(&chain.table, Some(&chain.name))?;
        match rules.get(n - 1) {
            Some(r) => Ok(RulePosition::Before(r.handle)),
            None if n == rules.len() + 1 => Ok(RulePosition::Append),
            None => Err(Error::InvalidInput(format!(
                "index of insertion too big: chain {} has {} rules, cannot insert at {n}",
                chain.name,
                rules.len()
            ))),
        }
    }
    /// The handle of the n-th rule (1-based) of a chain.
    pub fn handle_of_index(&mut self, chain: &ChainRef, n: usize) -> Result<u64> {
        self.chain_must_exist(chain)?;
        let rules = self.rules(&chain.table, Some(&chain.name))?;
        n.checked_sub(1)
            .and_then(|i| rules.get(i))
            .map(|r| r.handle)
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "index of rule {n} out of range: chain {} has {} rules",
                    chain.name,
                    rules.len()
                ))
            })
    }
    /// Chains by name and the rules of one chain, in one round trip (that also pins the
    /// generation when nothing was read yet): what an operation on a few known chains needs,
    /// without a dump of the table. A missing chain is `None`; the rules of a missing chain
    /// are empty.
    pub fn chains_and_rules(
        &mut self,
        chains: &[&ChainRef],
        rules_of: Option<&ChainRef>,
    ) -> Result<(Vec<Option<Chain>>, Vec<RawRule>)> {
        let pin = self.generation.is_none();
        let no_attrs = |_: &mut crate::wire::attr::AttrWriter<'_>| {};
        let chain_attrs: Vec<_> = chains
            .iter()
            .map(|c| {
                move |w: &mut crate::wire::attr::AttrWriter<'_>| {
                    w.strz(crate::wire::nftables::NFTA_CHAIN_TABLE, &c.table.name);
                    w.strz(crate::wire::nftables::NFTA_CHAIN_NAME, &c.name);
                }
            })
            .collect();
        let mut gets = Vec::with_capacity(chains.len() + 1);
        if pin {
            gets.push(Request {
                msg: msg::GETGEN,
                family: nfproto::UNSPEC,
                attrs: &no_attrs,
                what: "read generation id",
            });
        }
        for (c, attrs) in chains.iter().zip(&chain_attrs) {
            gets.push(Request {
                msg: msg::GETCHAIN,
                family: c.table.family.nfproto(),
                attrs,
                what: "get chain",
            });
        }
        let rule_attrs = |w: &mut crate::wire::attr::AttrWriter<'_>| {
            if let Some(c) = rules_of {
                w.strz(crate::wire::nftables::NFTA_RULE_TABLE, &c.table.name);
                w.strz(crate::wire::nftables::NFTA_RULE_CHAIN, &c.name);
            }
        };
        let dump = rules_of.map(|c| Request {
            msg: msg::GETRULE,
            family: c.table.family.nfproto(),
            attrs: &rule_attrs,
            what: "list rules",
        });
        let mut reprs = Vec::new();
        let mut parse_error = None;
        let answers = self.sock.pipelined(&gets, dump, |_, payload| {
            let parsed =
                split_nfgenmsg(payload).and_then(|(fam, attrs)| RuleRepr::parse(fam, attrs));
            match parsed {
                Ok(r) => reprs.push(r),
                Err(e) => {
                    parse_error.get_or_insert(e);
                }
            }
            Ok(())
        })?;
        if let Some(e) = parse_error {
            return Err(e.into());
        }
        let mut replies = answers.replies.into_iter();
        if pin {
            let payload = replies.next().unwrap_or_else(|| {
                Err(Error::Netlink {
                    context: "read generation id",
                    source: std::io::Error::other("no answer"),
                })
            })?;
            let (_, attrs) = split_nfgenmsg(&payload)?;
            self.generation = Some(GenRepr::parse(attrs)?.id);
        }
        let mut found = Vec::with_capacity(chains.len());
        for reply in replies {
            found.push(match absent(reply)? {
                Some(payload) => {
                    let (fam, attrs) = split_nfgenmsg(&payload)?;
                    Chain::from_repr(ChainRepr::parse(fam, attrs)?)
                }
                None => None,
            });
        }
        let rules = match (rules_of, answers.dump) {
            (Some(c), Some(Ok(()))) => {
                reprs.retain(|r| r.table == c.table.name && r.chain == c.name);
                with_set_elements(
                    self.sock,
                    &mut self.stats.dump_restarts,
                    &c.table,
                    reprs,
                    RawRule::from_repr,
                )?
            }
            (Some(c), _) => {
                // A commit interrupted the dump: read the chain again the usual way.
                self.stats.dump_restarts += 1;
                self.raw_rules(&c.table, Some(&c.name))?
            }
            (None, _) => Vec::new(),
        };
        Ok((found, rules))
    }
    /// One rule, by handle: a single-object request. `None` when the chain holds no rule
    /// with that handle.
    pub fn rule(&mut self, chain: &ChainRef, handle: u64) -> Result<Option<RawRule>> {
        self.pin()?;
        let reply = absent(self.sock.request_with(
            msg::GETRULE,
            chain.table.family.nfproto(),
            |w| {
                w.strz(crate::wire::nftables::NFTA_RULE_TABLE, &chain.table.name);
                w.strz(crate::wire::nftables::NFTA_RULE_CHAIN, &chain.name);
                w.u64_be(crate::wire::nftables::NFTA_RULE_HANDLE, handle);
            },
            "get rule",
        ))?;
        let Some(payload) = reply else {
            return Ok(None);
        };
        let (fam, attrs) = split_nfgenmsg(&payload)?;
        let repr = RuleRepr::parse(fam, attrs)?;
        let mut rules = with_set_elements(
            self.sock,
            &mut self.stats.dump_restarts,
            &chain.table,
            vec![repr],
            RawRule::from_repr,
        )?;
        Ok(rules.pop())
    }
    fn chain_must_exist(&mut self, chain: &ChainRef) -> Result<()> {
        if self.chain(chain)?.is_none() {
            return Err(Error::NotFound(crate::OpFailure {
                index: 0,
                op: format!("list chain {chain}"),
                errno: libc::ENOENT,
                ext_ack: None,
            }));
        }
        Ok(())
    }
}
