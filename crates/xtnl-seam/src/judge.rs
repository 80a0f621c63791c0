//! What the policy judges and the audit records of a change, derived from what is
//! backend-neutral: the interpreter's [`Edit`]s, each resolved against the table view it was
//! planned on (before it is applied to it), and the NAT-host operations' [`Change`]s,
//! resolved against the tables the plan read. Both backends' plans are made of these, so
//! the same command, restore block, JSON `apply` or NAT-host operation is judged the same
//! way whichever backend carries it (see docs/seam.md, "One judgement").
//!
//! Each entry is one change as a backend commits it (one nf_tables operation, one edit of
//! an x_tables table), with the [`Touch`]es it makes (two for a replacement or a rename)
//! and its description in the words the audit records of nf_tables use (`flush chain ip
//! nat vcld-1`, `insert rule ip nat PREROUTING: -t nat -I PREROUTING -j vcld-1`). A rule
//! deleted or replaced is judged by its real target, read from the view: the table (or
//! generation) the commit is applied to, so a commit refused because the table changed is
//! planned, derived and judged again.

use super::{Change, Edit, IptTable, RuleRef};
use crate::error::Result;
use crate::ipt::IptRule;
use crate::model::{ChainPolicy, Family};
use crate::policy::{OldRule, Planned, Touch, touches_of};

/// One change as the policy judges it and the audit records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// What it touches (two for a replacement or a rename, none for a change that touches
    /// nothing a policy names).
    pub touches: Vec<Touch>,
    /// Its description (audit records, denial messages).
    pub text: String,
    /// Changes after this one that are counted only: for an auditor alone, the changes past
    /// what an audit record shows are not kept one by one but counted on the first of them
    /// (which has an empty text and touches nothing, as they do). 0 for every other change.
    pub more: usize,
}

impl Judged {
    /// How many changes `changes` stand for (each one and its [`Judged::more`]).
    pub fn count(changes: &[Judged]) -> usize {
        changes.iter().map(|j| 1 + j.more).sum()
    }
}

/// Derives the [`Judged`] changes of the edits of one table, in order. The interpreter
/// hands it every edit before applying it to the view ([`IptTable::take_judge`]), so that
/// the rule a delete or a replacement removes is read as the view holds it.
#[derive(Debug, Clone)]
pub struct Judge {
    family: Family,
    table: String,
    /// The user chains the view held when a restore block's reset began (`None`: no reset).
    before_reset: Option<Vec<String>>,
    /// What was derived so far.
    pub judged: Vec<Judged>,
    /// The length of the texts so far: past what an audit record shows
    /// ([`crate::policy::audit::MAX_OPS_TEXT`]), rules are no longer printed into them.
    text_len: usize,
    /// Whether the changes keep what they touch: only a policy reads it (an auditor alone
    /// reads the texts and the count), and at cluster scale it is a third of a restore's
    /// memory (five strings per rule).
    keep_touches: bool,
    /// For a NAT-host plan (as nf_tables carries it): the tables ensured so far, by the
    /// first chain created in each (`None`: the interpreter's table, which exists).
    ensured: Option<Vec<String>>,
}

fn policy_word(p: ChainPolicy) -> &'static str {
    match p {
        ChainPolicy::Accept => "ACCEPT",
        ChainPolicy::Drop => "DROP",
    }
}

/// A rule's text after `-t TABLE VERB CHAIN` (its matches and target, iptables syntax).
fn spec(chain: &str, rule: &IptRule) -> String {
    let line = crate::ipt::print::append_line(chain, rule, false);
    line.strip_prefix(&format!("-A {chain}"))
        .unwrap_or(&line)
        .to_owned()
}

impl Judge {
    /// A judge of the edits of `table`.
    pub fn new(family: Family, table: &str) -> Judge {
        Judge {
            family,
            table: table.to_owned(),
            before_reset: None,
            judged: Vec::new(),
            text_len: 0,
            keep_touches: true,
            ensured: None,
        }
    }

    /// What `change` of this table touches ([`touches_of`], the one derivation).
    fn touches(&self, change: Planned<'_>) -> Vec<Touch> {
        touches_of(self.family, &self.table, &change)
    }

    fn push(&mut self, touches: Vec<Touch>, text: String) {
        // For an auditor alone, a change past what a record shows is not kept: the record
        // counts it only ([`crate::policy::audit`] stops at the first empty text). At
        // 80,000 rules those small strings, strewn among the rules, kept every page of
        // the heap from being handed back while an x_tables table is laid out, and an
        // entry each (48 bytes) was 4-6 MB of an x_tables restore's peak.
        let past = !self.keep_touches && self.text_len > crate::policy::audit::MAX_OPS_TEXT;
        self.text_len += text.len() + 2;
        if past {
            match self.judged.last_mut() {
                Some(last) if last.text.is_empty() => last.more += 1,
                _ => self.judged.push(Judged {
                    touches: Vec::new(),
                    text: String::new(),
                    more: 0,
                }),
            }
            return;
        }
        self.judged.push(Judged {
            touches,
            text,
            more: 0,
        });
    }

    fn chain_text(&self, what: &str, chain: &str) -> String {
        format!("{what} chain {} {} {chain}", self.family, self.table)
    }

    fn rule_text(&self, what: &str, chain: &str, flag: &str, rule: &IptRule) -> String {
        // An audit record stops at the first change that does not fit (and a denial names a
        // change without its rule): a restore of 10,000 rules does not print them all.
        if self.text_len > crate::policy::audit::MAX_OPS_TEXT {
            return format!("{what} rule {} {} {chain}", self.family, self.table);
        }
        format!(
            "{what} rule {} {} {chain}: -t {} {flag} {chain}{}",
            self.family,
            self.table,
            self.table,
            spec(chain, rule)
        )
    }

    fn policy(&mut self, chain: &str, policy: ChainPolicy) {
        let text = format!(
            "{}: -t {} -P {chain} {}",
            self.chain_text("add", chain),
            self.table,
            policy_word(policy)
        );
        let t = self.touches(Planned::Policy(chain));
        self.push(t, text);
    }

    /// The judge for an auditor alone (no policy): the changes keep their texts (and so
    /// their count) but not what they touch, which nothing reads then.
    pub fn texts_only(mut self) -> Judge {
        self.keep_touches = false;
        self
    }

    /// Derives what `edit` touches from `view`, as it stands before the edit is applied.
    pub fn note<T: IptTable + ?Sized>(&mut self, view: &mut T, edit: &Edit) -> Result<()> {
        let from = self.judged.len();
        let r = self.judge(&mut TableView(view), edit);
        if !self.keep_touches {
            for j in self.judged.iter_mut().skip(from) {
                j.touches = Vec::new();
            }
        }
        r
    }

    /// The one judgement of an edit, for every backend: the interpreter's edits of a table
    /// view (by rule number, through [`Judge::note`]) and a NAT-host plan's changes (by
    /// rule id, through [`of_changes`]) both come here and through [`touches_of`].
    fn judge(&mut self, view: &mut dyn View, edit: &Edit) -> Result<()> {
        match edit {
            Edit::Append { chain, rule } => {
                let t = self.touches(Planned::AddRule {
                    chain,
                    jump_to: jump_of(rule),
                });
                let text = self.rule_text("add", chain, "-A", rule);
                self.push(t, text);
            }
            Edit::Insert { chain, index, rule } => {
                // Past the last rule an insert is an append (as nf_tables carries it).
                let append = *index > 1 && *index > view.rule_count(chain)?;
                let t = self.touches(Planned::AddRule {
                    chain,
                    jump_to: jump_of(rule),
                });
                let text = if append {
                    self.rule_text("add", chain, "-A", rule)
                } else {
                    self.rule_text("insert", chain, "-I", rule)
                };
                self.push(t, text);
            }
            Edit::Replace { chain, at, rule } => {
                let (_, old) = self.removed(view, edit, chain, RemovedAt::of(at))?;
                let t = self.touches(Planned::ReplaceRule {
                    chain,
                    old,
                    jump_to: jump_of(rule),
                });
                let text = self.rule_text("replace", chain, "-R", rule);
                self.push(t, text);
            }
            Edit::Delete { chain, at } => self.delete(view, edit, chain, RemovedAt::of(at))?,
            Edit::DeleteGuessedJump { chain, id, .. } => {
                self.delete(view, edit, chain, RemovedAt::Id(*id))?;
            }
            Edit::CreateChain(chain) => {
                // A chain the block's reset removed and its declaration brings back was
                // there before and is there after, empty: a flush (as nf_tables carries it).
                let back = self
                    .before_reset
                    .as_ref()
                    .is_some_and(|b| b.contains(chain));
                if back {
                    let t = self.touches(Planned::FlushChain(chain));
                    let text = self.chain_text("flush", chain);
                    self.push(t, text);
                } else {
                    self.create_chain(chain);
                }
            }
            Edit::DeleteChain(chain) => {
                let t = self.touches(Planned::DeleteChain(chain));
                let text = self.chain_text("delete", chain);
                self.push(t, text);
            }
            Edit::Flush(chain) => {
                let t = self.touches(Planned::FlushChain(chain));
                let text = self.chain_text("flush", chain);
                self.push(t, text);
            }
            Edit::FlushAll | Edit::Reset => {
                if matches!(edit, Edit::Reset) {
                    self.before_reset = Some(view.user_chains()?);
                }
                let t = self.touches(Planned::FlushTable);
                let text = format!("flush table {} {}", self.family, self.table);
                self.push(t, text);
            }
            Edit::Zero(chain) => {
                let j = zero(self.family, &self.table, chain.as_deref());
                self.push(j.touches, j.text);
            }
            Edit::Policy { chain, policy } => self.policy(chain, *policy),
            Edit::DeclareBuiltin {
                chain,
                policy: Some(p),
                ..
            } => self.policy(chain, *p),
            // `:BUILTIN -` changes no policy on x_tables (see `Edit::DeclareBuiltin`).
            Edit::DeclareBuiltin { policy: None, .. } => {}
            Edit::Rename { from, to } => {
                // The jumps to the chain now jump to its new name.
                let mut jumping = Vec::new();
                for c in view.chain_order()? {
                    for i in 1..=view.rule_count(&c)? {
                        let rule = view.rule_at(&c, i)?;
                        if rule.as_ref().and_then(IptRule::jump_target) == Some(from.as_str()) {
                            jumping.push((c.clone(), false));
                        }
                    }
                }
                jumping.sort();
                let t = self.touches(Planned::Rename {
                    from,
                    to,
                    jumping: &jumping,
                });
                let text = format!("rename chain {} {} {from} to {to}", self.family, self.table);
                self.push(t, text);
            }
            Edit::FinishReset { declared } => {
                let stale: Vec<String> = self
                    .before_reset
                    .take()
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|c| !declared.contains(c))
                    .collect();
                for chain in stale {
                    let t = self.touches(Planned::DeleteChain(&chain));
                    let text = self.chain_text("delete", &chain);
                    self.push(t, text);
                }
            }
        }
        Ok(())
    }

    /// A chain created. In a NAT-host plan (as nf_tables carries it) the first chain created
    /// in a table ensures the table first (`add table`). A chain with a built-in's name is a
    /// base chain (judged as `policy`): only a NAT-host plan creates one (the interpreter's
    /// tables hold their built-ins; `:INPUT ACCEPT` declares one, [`Edit::DeclareBuiltin`]).
    fn create_chain(&mut self, chain: &str) {
        if let Some(ensured) = &mut self.ensured
            && !ensured.contains(&self.table)
        {
            ensured.push(self.table.clone());
            let t = self.touches(Planned::EnsureTable);
            let text = format!("add table {} {}", self.family, self.table);
            self.push(t, text);
        }
        let base = crate::ipt::tables::builtin(&self.table, chain).is_some();
        let mut text = self.chain_text("create", chain);
        if base {
            text.push_str(&format!(": -t {} -P {chain} ACCEPT", self.table));
        }
        let t = self.touches(Planned::CreateChain { chain, base });
        self.push(t, text);
    }

    /// A rule deleted, judged by the rule the view holds there.
    fn delete(
        &mut self,
        view: &mut dyn View,
        edit: &Edit,
        chain: &str,
        at: RemovedAt,
    ) -> Result<()> {
        let (r, old) = self.removed(view, edit, chain, at)?;
        let t = self.touches(Planned::DeleteRule { chain, old });
        let text = match &r {
            Some(r) => self.rule_text("delete", chain, "-D", r),
            None => format!("delete rule {} {} {chain}", self.family, self.table),
        };
        self.push(t, text);
        Ok(())
    }

    /// The rule a delete or a replacement removes, as the view holds it, and how the policy
    /// knows it: by its real target; a rule id the plan's view does not hold is absent (the
    /// commit fails on it anyway). A view that reads no ids refuses an edit by id.
    fn removed(
        &self,
        view: &mut dyn View,
        edit: &Edit,
        chain: &str,
        at: RemovedAt,
    ) -> Result<(Option<IptRule>, OldRule)> {
        Ok(match at {
            RemovedAt::Number(index) => {
                let r = view.rule_at(chain, index)?;
                let old = OldRule::Jumps(r.as_ref().and_then(jump_of));
                (r, old)
            }
            RemovedAt::Id(id) => {
                let r = view
                    .rule_by_id(&self.table, chain, id)
                    .ok_or_else(|| edit.not_by_number())?;
                let old = match &r {
                    Some(r) => OldRule::Jumps(jump_of(r)),
                    None => OldRule::Absent,
                };
                (r, old)
            }
        })
    }
}

/// Where the rule a delete or a replacement removes is.
#[derive(Clone, Copy)]
enum RemovedAt {
    Number(usize),
    Id(u64),
}

impl RemovedAt {
    fn of(at: &RuleRef) -> RemovedAt {
        match at {
            RuleRef::Number(n) => RemovedAt::Number(*n),
            RuleRef::Id { id, .. } => RemovedAt::Id(*id),
        }
    }
}

/// What the judgement reads of the tables an edit is planned on, before it is applied.
trait View {
    fn rule_count(&mut self, chain: &str) -> Result<usize>;
    fn rule_at(&mut self, chain: &str, index: usize) -> Result<Option<IptRule>>;
    /// The rule `id` of `table` `chain` (`Some(None)`: not there); `None` for a view that
    /// reads no ids (an interpreter's table addresses rules by number).
    fn rule_by_id(&mut self, table: &str, chain: &str, id: u64) -> Option<Option<IptRule>>;
    fn user_chains(&mut self) -> Result<Vec<String>>;
    fn chain_order(&mut self) -> Result<Vec<String>>;
}

/// The interpreter's view of one table.
struct TableView<'a, T: ?Sized>(&'a mut T);

impl<T: IptTable + ?Sized> View for TableView<'_, T> {
    fn rule_count(&mut self, chain: &str) -> Result<usize> {
        self.0.rule_count(chain)
    }
    fn rule_at(&mut self, chain: &str, index: usize) -> Result<Option<IptRule>> {
        self.0.rule_at(chain, index)
    }
    fn rule_by_id(&mut self, _: &str, _: &str, _: u64) -> Option<Option<IptRule>> {
        None
    }
    fn user_chains(&mut self) -> Result<Vec<String>> {
        self.0.user_chains()
    }
    fn chain_order(&mut self) -> Result<Vec<String>> {
        self.0.chain_order()
    }
}

/// A NAT-host plan's view: the rules of the tables it read, by id. Its changes
/// ([`Change::plannable`]) read nothing else; asked for more, it refuses.
struct PlanView<F>(F);

impl<F: FnMut(&str, &str, u64) -> Option<IptRule>> View for PlanView<F> {
    fn rule_count(&mut self, _: &str) -> Result<usize> {
        Err(plan_reads_no("rule counts"))
    }
    fn rule_at(&mut self, _: &str, _: usize) -> Result<Option<IptRule>> {
        Err(plan_reads_no("rules by number"))
    }
    fn rule_by_id(&mut self, table: &str, chain: &str, id: u64) -> Option<Option<IptRule>> {
        Some((self.0)(table, chain, id))
    }
    fn user_chains(&mut self) -> Result<Vec<String>> {
        Err(plan_reads_no("chain lists"))
    }
    fn chain_order(&mut self) -> Result<Vec<String>> {
        Err(plan_reads_no("chain lists"))
    }
}

fn plan_reads_no(what: &str) -> crate::error::Error {
    crate::error::Error::InvalidInput(format!(
        "a NAT-host plan's changes read no {what} (not a change a NAT-host plan commits)"
    ))
}

/// The chain a rule jumps or goes to.
fn jump_of(rule: &IptRule) -> Option<String> {
    rule.jump_target().map(str::to_owned)
}

/// Zeroing counters (`-Z`, `-L -Z`, `-Z CHAIN N` on x_tables) of a table or one chain.
pub fn zero(family: Family, table: &str, chain: Option<&str>) -> Judged {
    let text = match chain {
        Some(c) => format!("zero counters {family} {table} {c}"),
        None => format!("zero counters {family} {table}"),
    };
    Judged {
        touches: touches_of(family, table, &Planned::Zero(chain)),
        text,
        more: 0,
    }
}

/// What a NAT-host plan's changes touch, in order, as nf_tables carries them: the first
/// chain created in a table ensures the table first (`add table`); a chain created with a
/// built-in's name is a base chain (judged as `policy`). `old` gives the rule a change
/// deletes or replaces (by table, chain and id) as the plan's view holds it, for its real
/// target; a rule it does not find is judged as absent (the commit fails on it anyway).
/// Refuses changes a NAT-host plan does not commit ([`Change::plannable`]). Each change is
/// judged by the same function as the interpreter's edits ([`Judge::note`]).
pub fn of_changes(
    family: Family,
    changes: &[Change],
    old: impl FnMut(&str, &str, u64) -> Option<IptRule>,
) -> Result<Vec<Judged>> {
    super::ruleset::plannable(changes)?;
    let mut judge = Judge {
        ensured: Some(Vec::new()),
        ..Judge::new(family, "")
    };
    judge.judged.reserve(changes.len() + 1);
    let mut view = PlanView(old);
    for c in changes {
        if judge.table != c.table {
            judge.table.clone_from(&c.table);
        }
        judge.judge(&mut view, &c.edit)?;
    }
    Ok(judge.judged)
}
