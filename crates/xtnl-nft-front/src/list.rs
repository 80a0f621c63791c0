//! The kernel's ruleset into nft's JSON objects, in the order `nft -j list` (1.0.6) prints
//! them: per table, the table, its named objects, its sets and maps, its chains, then the
//! rules of every chain.

use std::collections::HashMap;

use xtnl_nft_json as j;
use xtnl_nft_rules::{DataType, SetView, decode_elements, decode_rule};

use crate::error::{Error, Result};
use crate::model::Family;
use crate::nft::{Reader, TableRef};
use crate::wire::nftables::{ChainRepr, TableRepr, nfproto, udata as rule_udata};
use crate::wire::set::{SetDefRepr, SetPolicy, flags, udata};

/// What `nft -j list` is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// `list ruleset [FAMILY]`.
    Ruleset(Option<Family>),
    /// `list tables [FAMILY]`.
    Tables(Option<Family>),
    /// `list table FAMILY NAME`.
    Table(TableRef),
    /// `list chains [FAMILY]`.
    Chains(Option<Family>),
    /// `list chain FAMILY TABLE NAME`.
    Chain(TableRef, String),
    /// `list sets [FAMILY]`.
    Sets(Option<Family>),
    /// `list maps [FAMILY]`.
    Maps(Option<Family>),
    /// `list set FAMILY TABLE NAME` (or `list map`).
    Set(TableRef, String),
}

/// nft's name of a family.
fn family_json(f: Family) -> j::Family {
    match f {
        Family::Ipv4 => j::Family::Ip,
        Family::Ipv6 => j::Family::Ip6,
        Family::Inet => j::Family::Inet,
    }
}

fn family_name(nfproto: u8) -> String {
    match nfproto {
        nfproto::ARP => "arp".into(),
        nfproto::BRIDGE => "bridge".into(),
        nfproto::NETDEV => "netdev".into(),
        n => format!("family {n}"),
    }
}

/// Reads `what` at one generation (the caller brackets the reads: `Session::read`).
pub fn read(r: &mut Reader<'_>, what: &Listing) -> Result<j::Document> {
    let mut items = vec![j::Item::Metainfo(j::Metainfo {
        version: Some(super::NFT_VERSION.into()),
        release_name: Some(super::NFT_RELEASE_NAME.into()),
        json_schema_version: Some(super::JSON_SCHEMA_VERSION),
    })];
    let filter = match what {
        Listing::Ruleset(f)
        | Listing::Tables(f)
        | Listing::Chains(f)
        | Listing::Sets(f)
        | Listing::Maps(f) => *f,
        Listing::Table(t) | Listing::Chain(t, _) | Listing::Set(t, _) => Some(t.family),
    };
    let mut found = false;
    for t in r.table_reprs(filter.map(Family::nfproto))? {
        let Some(family) = Family::from_nfproto(t.family) else {
            return Err(Error::InvalidInput(format!(
                "table {} {}: xtnl's nft front lists tables of the ip, ip6 and inet families \
                 only",
                family_name(t.family),
                t.name
            )));
        };
        let table = TableRef::new(family, t.name.clone());
        let wanted = match what {
            Listing::Table(w) | Listing::Chain(w, _) | Listing::Set(w, _) => *w == table,
            _ => true,
        };
        if !wanted {
            continue;
        }
        found = true;
        let mut out = TableOut::default();
        match what {
            Listing::Tables(_) => items.push(table_item(&t, family)),
            Listing::Ruleset(_) | Listing::Table(_) => {
                items.push(table_item(&t, family));
                read_table(r, &table, &mut out, None, true)?;
                items.extend(out.objects);
                items.extend(out.sets);
                items.extend(out.chains);
                items.extend(out.rules);
            }
            Listing::Chains(_) => {
                read_chains(r, &table, &mut out, None, false, &HashMap::new())?;
                items.extend(out.chains);
            }
            Listing::Chain(_, name) => {
                let views = set_views(r, &table)?;
                read_chains(r, &table, &mut out, Some(name), true, &views)?;
                if out.chains.is_empty() {
                    return Err(Error::InvalidInput(format!(
                        "No such file or directory: chain {table} {name}"
                    )));
                }
                items.extend(out.chains);
                items.extend(out.rules);
            }
            Listing::Sets(_) | Listing::Maps(_) | Listing::Set(..) => {
                let maps = matches!(what, Listing::Maps(_));
                let one = match what {
                    Listing::Set(_, n) => Some(n.as_str()),
                    _ => None,
                };
                for def in r.sets(&table)? {
                    if one.is_some_and(|n| n != def.name) || (one.is_none() && def.is_map() != maps)
                    {
                        continue;
                    }
                    out.sets.push(set_item(r, &table, &def)?);
                }
                if one.is_some() && out.sets.is_empty() {
                    return Err(Error::InvalidInput(format!(
                        "No such file or directory: set {table} {}",
                        one.unwrap_or_default()
                    )));
                }
                items.extend(out.sets);
            }
        }
    }
    if !found && let Listing::Table(t) | Listing::Chain(t, _) | Listing::Set(t, _) = what {
        return Err(Error::InvalidInput(format!(
            "No such file or directory: table {t}"
        )));
    }
    Ok(j::Document::new(items))
}

#[derive(Default)]
struct TableOut {
    objects: Vec<j::Item>,
    sets: Vec<j::Item>,
    chains: Vec<j::Item>,
    rules: Vec<j::Item>,
}

fn table_item(t: &TableRepr, family: Family) -> j::Item {
    let flags = t.flags.unwrap_or(0);
    let mut names = Vec::new();
    if flags & 1 != 0 {
        names.push("dormant".to_string());
    }
    j::Item::Object(j::Object::Table(j::Table {
        handle: t.handle,
        flags: (!names.is_empty()).then_some(j::OneOrMany::Many(names)),
        ..j::Table::new(family_json(family), &t.name)
    }))
}

fn read_table(
    r: &mut Reader<'_>,
    table: &TableRef,
    out: &mut TableOut,
    chain: Option<&str>,
    rules: bool,
) -> Result<()> {
    let views = set_views(r, table)?;
    for o in r.object_reprs(table.family.nfproto(), &table.name)? {
        out.objects.push(super::objects::obj_item(
            table,
            family_json(table.family),
            &o,
        )?);
    }
    for def in r.sets(table)? {
        out.sets.push(set_item(r, table, &def)?);
    }
    read_chains(r, table, out, chain, rules, &views)
}

/// Every set of the table as the rule codec sees it; anonymous ones with their elements.
fn set_views(r: &mut Reader<'_>, table: &TableRef) -> Result<HashMap<String, SetView>> {
    let mut views = HashMap::new();
    for def in r.all_sets(table)? {
        let elements = if def.flags & flags::ANONYMOUS != 0 {
            r.elements(table, &def.name)?
        } else {
            Vec::new()
        };
        views.insert(def.name.clone(), SetView::from_def(&def, elements));
    }
    Ok(views)
}

fn read_chains(
    r: &mut Reader<'_>,
    table: &TableRef,
    out: &mut TableOut,
    only: Option<&str>,
    rules: bool,
    views: &HashMap<String, SetView>,
) -> Result<()> {
    let family = table.family.nfproto();
    for c in r.chain_reprs(family, &table.name)? {
        if only.is_some_and(|n| n != c.name) {
            continue;
        }
        out.chains.push(chain_item(table, &c)?);
    }
    if !rules {
        return Ok(());
    }
    let raw = r.raw_rules(table, only)?;
    for rule in raw {
        let at = format!("rule {} {} handle {}", table, rule.chain.name, rule.handle);
        let expr = decode_rule(family, &rule.exprs, views).map_err(|e| {
            Error::InvalidInput(format!("{at}: cannot be listed in nft's JSON: {e}"))
        })?;
        let comment = rule.userdata.as_deref().and_then(rule_udata::comment);
        out.rules.push(j::Item::Object(j::Object::Rule(j::Rule {
            handle: Some(rule.handle),
            comment,
            ..j::Rule::new(
                family_json(table.family),
                &table.name,
                &rule.chain.name,
                expr,
            )
        })));
    }
    Ok(())
}

fn hook_name(n: u32) -> Option<&'static str> {
    Some(match n {
        0 => "prerouting",
        1 => "input",
        2 => "forward",
        3 => "output",
        4 => "postrouting",
        5 => "ingress",
        _ => return None,
    })
}

fn chain_item(table: &TableRef, c: &ChainRepr) -> Result<j::Item> {
    let mut chain = j::Chain {
        handle: c.handle,
        ..j::Chain::new(family_json(table.family), &table.name, &c.name)
    };
    if let Some(h) = &c.hook {
        let hook = hook_name(h.hooknum).ok_or_else(|| {
            Error::InvalidInput(format!(
                "chain {table} {}: hook number {} has no name in family {}",
                c.name, h.hooknum, table.family
            ))
        })?;
        chain.kind = Some(c.chain_type.clone().unwrap_or_else(|| "filter".into()));
        chain.hook = Some(hook.into());
        chain.prio = Some(h.priority);
        chain.policy = Some(match c.policy {
            Some(0) => "drop".into(),
            _ => "accept".into(),
        });
        chain.dev = h.device.clone().map(j::OneOrMany::One);
    }
    Ok(j::Item::Object(j::Object::Chain(chain)))
}

fn type_names(types: &[DataType], what: &str) -> Result<Vec<String>> {
    types
        .iter()
        .map(|t| {
            t.name().map(str::to_owned).ok_or_else(|| {
                Error::InvalidInput(format!("{what}: datatype number {} has no name", t.id()))
            })
        })
        .collect()
}

fn set_item(r: &mut Reader<'_>, table: &TableRef, def: &SetDefRepr) -> Result<j::Item> {
    let what = format!("set {table} {}", def.name);
    // nft 1.0.6's JSON prints a set declared with typeof by its types too.
    let u = def.userdata.as_deref().unwrap_or_default();
    // A counter on every element is the one element statement listed (as nft: stateless).
    let counters = def
        .exprs
        .iter()
        .all(|e| matches!(e, crate::wire::expr::Expr::Counter(_)));
    if !counters || def.obj_type.is_some() {
        return Err(Error::InvalidInput(format!(
            "{what}: sets with element statements other than counter, and object maps, cannot \
             be listed by xtnl's nft front yet"
        )));
    }
    let elements = r.elements(table, &def.name)?;
    let view = SetView::from_def(def, Vec::new());
    let key = type_names(&view.key, &what)?;
    let key = match key.len() {
        1 => j::SetType::Name(key.into_iter().next().unwrap_or_default()),
        _ => j::SetType::Concat(key),
    };
    let map = match view.data {
        None => None,
        Some(DataType::Verdict) => Some(j::SetType::Name("verdict".into())),
        Some(d) => {
            // nft 1.0.6 prints a concatenated data type as one string.
            let names = type_names(&DataType::unpack(d.id()), &what)?;
            Some(j::SetType::Name(names.join(" . ")))
        }
    };
    let constant = def.flags & flags::CONSTANT != 0;
    let mut fl = Vec::new();
    // nft 1.0.6's JSON names these three only (measured: a `dynamic` set lists without it;
    // newer nft adds "dynamic").
    for (bit, name) in [
        (flags::CONSTANT, "constant"),
        (flags::INTERVAL, "interval"),
        (flags::TIMEOUT, "timeout"),
    ] {
        if def.flags & bit != 0 {
            fl.push(name.to_string());
        }
    }
    let elem = if elements.is_empty() {
        None
    } else {
        Some(decode_elements(&view, &elements).map_err(|e| {
            Error::InvalidInput(format!("{what}: its elements cannot be listed: {e}"))
        })?)
    };
    let set = j::Set {
        family: family_json(table.family),
        name: Some(def.name.clone()),
        table: table.name.clone(),
        key: Some(key),
        handle: def.handle,
        map,
        policy: (!constant && def.policy == Some(SetPolicy::Memory)).then(|| "memory".into()),
        size: if constant {
            None
        } else {
            def.size.map(u64::from)
        },
        flags: (!fl.is_empty()).then_some(j::OneOrMany::Many(fl)),
        timeout: def.timeout_ms.filter(|t| *t != 0).map(|t| t / 1000),
        gc_interval: def
            .gc_interval_ms
            .filter(|g| *g != 0)
            .map(|g| u64::from(g) / 1000),
        comment: def.comment(),
        auto_merge: udata::find(u, 2)
            .map(|v| v.first().is_some_and(|b| *b != 0))
            .filter(|b| *b),
        stmt: (!def.exprs.is_empty()).then(|| {
            def.exprs
                .iter()
                .map(|_| j::Statement::Counter(None))
                .collect()
        }),
        elem,
    };
    Ok(j::Item::Object(if def.is_map() {
        j::Object::Map(set)
    } else {
        j::Object::Set(set)
    }))
}
