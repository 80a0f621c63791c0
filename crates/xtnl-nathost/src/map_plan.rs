//! Planning the map layout's operations: one read of the elements each operation names
//! (single-element gets, many per round trip), then one commit. Operations of one
//! transaction see the elements earlier ones add or delete.
//!
//! A plan may also start from state cached at a known generation ([`Cache`], kept by a
//! [`super::handle::MapLayout`]): it reads nothing it already knows, adds a forward whose key
//! it does not know with an exclusive create (the kernel refuses a taken key), and carries
//! the cached generation, so that any change since makes the kernel refuse the batch.

use std::collections::HashMap;

use super::{
    FWD_ANY_MAP, FWD_MAP, MapForward, MapOp, POSTROUTING, decode_element, element, element_key,
    layout_ops, layout_present, masquerade_rule, result, table,
};
use crate::error::{Error, Result};
use crate::model::{Family, Rule};
use crate::nathost::spec::ForwardKey;
use crate::nathost::{OperationResult, Outcome, Report};
use crate::nft::set::SetOp;
use crate::nft::{Reader, Session, Transaction};
use crate::wire::set::ElemRepr;

/// An element of one of the layout's maps: `(map, key)`.
pub(super) type Key = (&'static str, Vec<u8>);

/// Elements of the layout as they were at one generation (the layout existed then).
#[derive(Debug, Clone, Default)]
pub(super) struct Cache {
    pub generation: u32,
    /// `Some`: the element; `None`: known to be absent.
    pub elements: HashMap<Key, Option<ElemRepr>>,
    /// Every element of both maps is in `elements` (a key not there is absent).
    pub complete: bool,
}

/// What a plan learnt and changed, to fold into a [`Cache`] once its batch is committed.
pub(super) struct Learnt {
    pub outcomes: Vec<Outcome>,
    /// The generation the plan was pinned to (`None`: it read nothing).
    pub generation: Option<u32>,
    /// Whether the layout exists after the plan's operations.
    pub layout: bool,
    pub elements: HashMap<Key, Option<ElemRepr>>,
    pub complete: bool,
    /// The plan started from a cache.
    pub cached: bool,
}

/// What the plan knows of elements: the kernel's, as changed by earlier operations.
struct View<'c> {
    family: Family,
    /// Whether the layout exists (or this transaction creates it); `None`: not read yet.
    layout: Option<bool>,
    /// State at the generation the plan is pinned to, when it starts from a cache.
    base: Option<&'c Cache>,
    /// `(map, key)` -> the element after the operations planned so far (read by this plan or
    /// changed by it; takes precedence over `base`).
    known: HashMap<Key, Option<ElemRepr>>,
    /// Both maps were listed (teardown without forwards, sweep).
    listed: bool,
    tx: Transaction,
}

impl View<'_> {
    /// What is known of an element without reading: `None` if nothing.
    fn lookup(&self, k: &Key) -> Option<Option<ElemRepr>> {
        if let Some(e) = self.known.get(k) {
            return Some(e.clone());
        }
        if self.listed {
            return Some(None);
        }
        let base = self.base?;
        match base.elements.get(k) {
            Some(e) => Some(e.clone()),
            None if base.complete => Some(None),
            None => None,
        }
    }

    /// The elements of these keys. With `presume_absent` (adds, which the kernel checks with
    /// an exclusive create), a plan starting from a cache does not read a key it does not
    /// know: it is taken as absent, and not recorded as known.
    fn get(
        &mut self,
        r: &mut Reader<'_>,
        keys: &[ForwardKey],
        presume_absent: bool,
    ) -> Result<Vec<Option<ElemRepr>>> {
        let wanted: Vec<Key> = keys.iter().map(element_key).collect();
        let blind = presume_absent && self.base.is_some();
        if self.layout != Some(false) && !blind {
            for map in [FWD_MAP, FWD_ANY_MAP] {
                let missing: Vec<Vec<u8>> = wanted
                    .iter()
                    .filter(|(m, k)| *m == map && self.lookup(&(map, k.clone())).is_none())
                    .map(|(_, k)| k.clone())
                    .collect();
                if missing.is_empty() || self.layout == Some(false) {
                    continue;
                }
                let t = table(self.family);
                let found = if self.layout == Some(true) {
                    r.elements_by_key(&t, map, &missing)?
                } else {
                    // Whether the layout exists is learnt in the same round trip.
                    match r.set_elements_by_key(&t, map, &missing)? {
                        Some(found) => {
                            self.layout = Some(true);
                            found
                        }
                        None => {
                            self.layout = Some(false);
                            vec![None; missing.len()]
                        }
                    }
                };
                for (k, e) in missing.into_iter().zip(found) {
                    self.known.insert((map, k), e);
                }
            }
        }
        Ok(wanted.iter().map(|mk| self.lookup(mk).flatten()).collect())
    }

    /// Every element of both maps, as planned so far.
    fn all(&mut self, r: &mut Reader<'_>) -> Result<Vec<(&'static str, ElemRepr)>> {
        if self.layout.is_none() {
            self.layout = Some(layout_present(r, self.family, false)?);
        }
        let from_base = self.base.filter(|b| b.complete && !self.listed);
        if let Some(base) = from_base {
            for (k, e) in &base.elements {
                self.known.entry(k.clone()).or_insert_with(|| e.clone());
            }
            self.listed = true;
        }
        if self.layout == Some(true) && !self.listed {
            for map in [FWD_MAP, FWD_ANY_MAP] {
                for e in r.elements(&table(self.family), map)? {
                    self.known.entry((map, e.key.clone())).or_insert(Some(e));
                }
            }
            // Keys the plan knew from its cache and the listing lacks are absent.
            if let Some(base) = self.base {
                for k in base.elements.keys() {
                    self.known.entry(k.clone()).or_insert(None);
                }
            }
            self.listed = true;
        }
        let mut out: Vec<(&'static str, ElemRepr)> = self
            .known
            .iter()
            .filter_map(|((m, _), e)| e.clone().map(|e| (*m, e)))
            .collect();
        out.sort_by(|a, b| (a.0, &a.1.key).cmp(&(b.0, &b.1.key)));
        Ok(out)
    }

    /// Creates the layout unless it is known to exist (`full`: check its rules too).
    fn ensure_layout(&mut self, r: &mut Reader<'_>, full: bool) -> Result<bool> {
        if self.layout == Some(true) && !full {
            return Ok(false);
        }
        if self.layout != Some(false) && layout_present(r, self.family, full)? {
            self.layout = Some(true);
            return Ok(false);
        }
        for op in layout_ops(self.family) {
            self.tx.push(op);
        }
        self.layout = Some(true);
        Ok(true)
    }

    /// Whether there is a layout to remove anything from (reads it if not known).
    fn has_layout(&mut self, r: &mut Reader<'_>) -> Result<bool> {
        if self.layout.is_none() {
            self.layout = Some(layout_present(r, self.family, false)?);
        }
        Ok(self.layout == Some(true))
    }

    fn add(&mut self, map: &'static str, e: ElemRepr) {
        self.tx.set_op(SetOp::AddElements {
            table: table(self.family),
            set: map.into(),
            elements: vec![e.clone()],
            exclusive: true,
        });
        self.known.insert((map, e.key.clone()), Some(e));
    }

    fn delete(&mut self, map: &'static str, key: Vec<u8>) {
        self.tx.set_op(SetOp::DeleteElements {
            table: table(self.family),
            set: map.into(),
            keys: vec![key.clone()],
        });
        self.known.insert((map, key), None);
    }
}

fn owner(e: &ElemRepr) -> Option<String> {
    let c = e.comment()?;
    Some(c.split(' ').next().unwrap_or_default().to_owned())
}

fn plan_one(v: &mut View<'_>, r: &mut Reader<'_>, op: &MapOp) -> Result<Outcome> {
    let before = v.tx.len();
    let mut otherwise = Outcome::Unchanged;
    match op {
        MapOp::Setup {
            reservation,
            forwards,
        } => {
            if forwards.is_empty() {
                v.ensure_layout(r, false)?;
            }
            add_forwards(v, r, reservation, forwards)?;
        }
        MapOp::ForwardAdd {
            reservation,
            forward,
        } => add_forwards(v, r, reservation, std::slice::from_ref(forward))?,
        MapOp::ForwardRemove {
            reservation,
            key,
            to,
        } => {
            otherwise = Outcome::Absent;
            if let Some(Some(e)) = v.get(r, std::slice::from_ref(key), false)?.pop()
                && owner(&e).as_deref() == Some(reservation)
            {
                let (map, k) = element_key(key);
                let goes_to = decode_element(map, &e).map(|f| f.forward.to);
                if to.is_none() || goes_to == *to {
                    v.delete(map, k);
                }
            }
        }
        MapOp::Teardown {
            reservation,
            forwards,
        } => {
            otherwise = Outcome::Absent;
            if forwards.is_none() && !v.has_layout(r)? {
                return Ok(Outcome::Absent);
            }
            let doomed: Vec<(&'static str, Vec<u8>)> = match forwards {
                Some(keys) => v
                    .get(r, keys, false)?
                    .into_iter()
                    .zip(keys)
                    .filter(|(e, _)| {
                        e.as_ref().and_then(owner).as_deref() == Some(reservation.as_str())
                    })
                    .map(|(_, k)| element_key(k))
                    .collect(),
                None => v
                    .all(r)?
                    .into_iter()
                    .filter(|(_, e)| owner(e).as_deref() == Some(reservation.as_str()))
                    .map(|(m, e)| (m, e.key))
                    .collect(),
            };
            delete_grouped(v, doomed);
        }
        MapOp::Sweep { prefix, keep } => {
            otherwise = Outcome::Absent;
            if !v.has_layout(r)? {
                return Ok(Outcome::Absent);
            }
            let doomed = v
                .all(r)?
                .into_iter()
                .filter(|(_, e)| {
                    owner(e).is_some_and(|o| o.starts_with(prefix.as_str()) && !keep.contains(&o))
                })
                .map(|(m, e)| (m, e.key))
                .collect();
            delete_grouped(v, doomed);
        }
        MapOp::HostSetup(h) => {
            v.ensure_layout(r, true)?;
            let rule = masquerade_rule(h)?;
            let chain = table(v.family).chain(POSTROUTING);
            let present = if v.tx.len() > before {
                false
            } else {
                r.rules(&chain.table, Some(POSTROUTING))?.iter().any(|l| {
                    Rule {
                        counter: None,
                        ..l.rule.clone()
                    } == rule
                })
            };
            if !present {
                v.tx.append_rule(&chain, rule);
            }
        }
    }
    Ok(if v.tx.len() > before {
        Outcome::Changed
    } else {
        otherwise
    })
}

fn add_forwards(
    v: &mut View<'_>,
    r: &mut Reader<'_>,
    reservation: &str,
    forwards: &[crate::nathost::Forward],
) -> Result<()> {
    let keys: Vec<ForwardKey> = forwards.iter().map(|f| f.key()).collect();
    let current = v.get(r, &keys, true)?;
    // The same round trip said whether the layout exists.
    v.ensure_layout(r, false)?;
    let mut adds: HashMap<&'static str, Vec<ElemRepr>> = HashMap::new();
    for (f, cur) in forwards.iter().zip(current) {
        let (map, e) = element(v.family, reservation, f)?;
        match cur {
            None => adds.entry(map).or_default().push(e),
            Some(c) if owner(&c).as_deref() != Some(reservation) => {
                return Err(Error::InvalidInput(format!(
                    "forward {} belongs to reservation {}; remove it there first",
                    f.key(),
                    owner(&c).unwrap_or_else(|| "(an element without a comment)".into())
                )));
            }
            Some(c) if c.data == e.data && c.userdata == e.userdata => {}
            Some(c) => {
                v.delete(map, c.key.clone());
                v.add(map, e);
            }
        }
    }
    for map in [FWD_MAP, FWD_ANY_MAP] {
        if let Some(elements) = adds.remove(map) {
            for e in &elements {
                v.known.insert((map, e.key.clone()), Some(e.clone()));
            }
            v.tx.set_op(SetOp::AddElements {
                table: table(v.family),
                set: map.into(),
                elements,
                exclusive: true,
            });
        }
    }
    Ok(())
}

fn delete_grouped(v: &mut View<'_>, doomed: Vec<(&'static str, Vec<u8>)>) {
    for map in [FWD_MAP, FWD_ANY_MAP] {
        let keys: Vec<Vec<u8>> = doomed
            .iter()
            .filter(|(m, _)| *m == map)
            .map(|(_, k)| k.clone())
            .collect();
        if keys.is_empty() {
            continue;
        }
        for k in &keys {
            v.known.insert((map, k.clone()), None);
        }
        v.tx.set_op(SetOp::DeleteElements {
            table: table(v.family),
            set: map.into(),
            keys,
        });
    }
}

/// Plans the operations (each seeing the ones before it) into one transaction's operations:
/// for callers that commit them with others (the migration).
pub fn transact_ops(
    r: &mut Reader<'_>,
    family: Family,
    ops: &[MapOp],
) -> Result<(Transaction, Vec<Outcome>)> {
    let (tx, learnt) = plan(r, family, ops, None)?;
    Ok((tx, learnt.outcomes))
}

/// Plans the operations, from `base` (state at the generation it records, to which the
/// plan is pinned) when given, or else from reads.
pub(super) fn plan(
    r: &mut Reader<'_>,
    family: Family,
    ops: &[MapOp],
    base: Option<&Cache>,
) -> Result<(Transaction, Learnt)> {
    if let Some(b) = base {
        r.pin_to(b.generation);
    }
    let mut v = View {
        family,
        layout: base.map(|_| true),
        base,
        known: HashMap::new(),
        listed: false,
        tx: Transaction::new(),
    };
    let mut outcomes = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        outcomes.push(
            plan_one(&mut v, r, op)
                .map_err(|e| e.context(format!("operation {i} ({})", op.kind())))?,
        );
    }
    Ok((
        v.tx,
        Learnt {
            outcomes,
            generation: r.pinned_generation(),
            layout: v.layout == Some(true),
            elements: v.known,
            complete: v.listed,
            cached: base.is_some(),
        },
    ))
}

/// Plans and commits the operations as one atomic transaction (re-planned if the ruleset
/// changes under it).
pub fn transact(
    session: &mut Session,
    family: Family,
    ops: &[MapOp],
) -> Result<(Vec<OperationResult>, u32)> {
    for (i, op) in ops.iter().enumerate() {
        op.validate(family)
            .map_err(|e| e.context(format!("operation {i} ({})", op.kind())))?;
    }
    let c = session.transact(|r| transact_ops(r, family, ops))?;
    Ok((c.value.into_iter().map(result).collect(), c.attempts))
}

/// Runs one operation as its own transaction.
pub fn run_one(session: &mut Session, family: Family, op: MapOp) -> Result<Report> {
    let (mut results, attempts) = transact(session, family, std::slice::from_ref(&op))?;
    let r = results
        .pop()
        .ok_or_else(|| Error::InvalidInput("no operation".into()))?;
    Ok(Report {
        outcome: r.outcome,
        changes: r.changes,
        attempts,
        removed_chains: r.removed_chains,
    })
}

/// Every forward of the layout, with its reservation and counters (lists both maps).
pub fn list_forwards(session: &mut Session, family: Family) -> Result<Vec<MapForward>> {
    session.read(|r| {
        if !layout_present(r, family, false)? {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for map in [FWD_MAP, FWD_ANY_MAP] {
            for e in r.elements(&table(family), map)? {
                if let Some(f) = decode_element(map, &e) {
                    out.push(f);
                }
            }
        }
        Ok(out)
    })
}

/// Applies a transaction of NAT-host operations in the map layout.
pub fn transact_operations(
    session: &mut Session,
    family: Family,
    ops: &[crate::nathost::Operation],
) -> Result<(Vec<OperationResult>, u32)> {
    let map_ops = ops
        .iter()
        .enumerate()
        .map(|(i, o)| {
            MapOp::from_operation(o).map_err(|e| e.context(format!("operation {i} ({})", o.kind())))
        })
        .collect::<Result<Vec<_>>>()?;
    transact(session, family, &map_ops)
}
