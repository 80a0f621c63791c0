//! Sets and maps of a document: the `NEWSET` of a set or map as nft makes it (types, flags,
//! the userdata nft writes), and the sets a document's rules update (which nft makes
//! dynamic).

use std::collections::HashSet;

use xtnl_nft_json as j;
use xtnl_nft_rules::DataType;

use crate::error::{Error, Result};
use crate::model::Family;
use crate::wire::set::{SetDefRepr, SetPolicy, flags, udata};

fn refuse(what: &str, why: &str) -> Error {
    Error::InvalidInput(format!("{what}: {why}"))
}

/// The sets the document's rules add elements to or update from the packet path: nft
/// (1.0.6, measured) gives such a set the `dynamic` flag (`NFT_SET_EVAL`) when the same
/// document makes it, whether or not its JSON said so (nft's own JSON of a dynamic set leaves
/// the flag out).
pub(super) fn dynamic_sets(doc: &j::Document) -> HashSet<(j::Family, String, String)> {
    let mut out = HashSet::new();
    for item in &doc.nftables {
        let (j::Item::Add(j::Object::Rule(r))
        | j::Item::Object(j::Object::Rule(r))
        | j::Item::Create(j::Object::Rule(r))
        | j::Item::Insert(j::Object::Rule(r))
        | j::Item::Replace(j::Object::Rule(r))) = item
        else {
            continue;
        };
        for st in r.expr.iter().flatten() {
            let name = match st {
                j::Statement::Set(s) => &s.set,
                j::Statement::Map(m) => &m.map,
                _ => continue,
            };
            if let Some(n) = name.strip_prefix('@') {
                out.insert((r.family, r.table.clone(), n.to_owned()));
            }
        }
    }
    out
}

fn type_list(t: &j::SetType, desc: &str) -> Result<Vec<DataType>> {
    let names: Vec<&str> = match t {
        j::SetType::Name(n) => n.split(" . ").collect(),
        j::SetType::Concat(v) => v.iter().map(String::as_str).collect(),
        j::SetType::Typeof { .. } => {
            return Err(refuse(
                desc,
                "a set declared with typeof is not supported by xtnl's nft front yet",
            ));
        }
    };
    names
        .into_iter()
        .map(|n| {
            DataType::from_name(n).ok_or_else(|| refuse(desc, &format!("unknown datatype {n:?}")))
        })
        .collect()
}

/// A `NEWSET` from a set or map of the document, with the userdata nft writes (key and data
/// byte order, comment), so that nft lists it as its own.
pub(super) fn set_def(s: &j::Set, family: Family, name: &str, desc: &str) -> Result<SetDefRepr> {
    if s.gc_interval.is_some() || s.auto_merge == Some(true) {
        return Err(refuse(
            desc,
            "gc-interval and auto-merge are not supported by xtnl's nft front yet",
        ));
    }
    // A counter on every element is the one element statement supported.
    let mut exprs = Vec::new();
    for st in s.stmt.iter().flatten() {
        match st {
            j::Statement::Counter(None) => exprs.push(crate::wire::expr::Expr::Counter(
                crate::wire::expr::Counter::default(),
            )),
            other => {
                return Err(refuse(
                    desc,
                    &format!(
                        "element statement {} is not supported (counter is)",
                        serde_json::to_string(other).unwrap_or_default()
                    ),
                ));
            }
        }
    }
    let key = type_list(
        s.key
            .as_ref()
            .ok_or_else(|| refuse(desc, "a set needs a type"))?,
        desc,
    )?;
    let key_len =
        DataType::key_len(&key).ok_or_else(|| refuse(desc, "the key type has no fixed size"))?;
    let mut fl = 0;
    if let Some(f) = &s.flags {
        let list = match f {
            j::OneOrMany::One(one) => vec![one.clone()],
            j::OneOrMany::Many(v) => v.clone(),
        };
        for f in list {
            fl |= match f.as_str() {
                "constant" => flags::CONSTANT,
                "interval" => flags::INTERVAL,
                "timeout" => flags::TIMEOUT,
                "dynamic" => flags::EVAL,
                other => return Err(refuse(desc, &format!("unknown set flag {other:?}"))),
            };
        }
    }
    if s.timeout.is_some() {
        fl |= flags::TIMEOUT;
    }
    let mut u = Vec::new();
    // nft's byte order of one type; a concatenation has none (0), as nft writes it.
    let order = |t: &[DataType]| match t {
        [one] if one.byte_order() == xtnl_nft_rules::ByteOrder::Big => udata::BYTEORDER_BIG,
        [_] => udata::BYTEORDER_HOST,
        _ => 0,
    };
    udata::push(&mut u, udata::SET_KEYBYTEORDER, &order(&key).to_ne_bytes());
    let (mut data_type, mut data_len) = (None, None);
    if let Some(m) = &s.map {
        fl |= flags::MAP;
        if matches!(m, j::SetType::Name(n) if n == "verdict") {
            data_type = Some(crate::wire::set::DATA_VERDICT);
            data_len = Some(0);
        } else {
            let data = type_list(m, desc)?;
            data_type = Some(DataType::pack(&data));
            data_len = Some(
                DataType::key_len(&data)
                    .ok_or_else(|| refuse(desc, "the data type has no fixed size"))?,
            );
            udata::push(
                &mut u,
                udata::SET_DATABYTEORDER,
                &order(&data).to_ne_bytes(),
            );
        }
    }
    if let Some(c) = &s.comment {
        udata::push_string(&mut u, udata::SET_COMMENT, c)
            .ok_or_else(|| refuse(desc, "the comment is longer than 254 bytes"))?;
    }
    // nft marks a concatenation of ranges (the kernel's pipapo set) with NFT_SET_CONCAT.
    if key.len() > 1 && fl & flags::INTERVAL != 0 {
        fl |= flags::CONCAT;
    }
    let concat = if key.len() > 1 && fl & flags::INTERVAL != 0 {
        key.iter().map(|t| t.bits().div_ceil(8)).collect()
    } else {
        Vec::new()
    };
    Ok(SetDefRepr {
        family: family.nfproto(),
        table: s.table.clone(),
        name: name.to_owned(),
        flags: fl,
        key_type: DataType::pack(&key),
        key_len,
        data_type,
        data_len,
        policy: match s.policy.as_deref() {
            None | Some("performance") => None,
            Some("memory") => Some(SetPolicy::Memory),
            Some(other) => return Err(refuse(desc, &format!("unknown set policy {other:?}"))),
        },
        size: s
            .size
            .map(|n| u32::try_from(n).map_err(|_| refuse(desc, "size is too large")))
            .transpose()?,
        concat,
        timeout_ms: s.timeout.map(|t| t.saturating_mul(1000)),
        userdata: Some(u),
        exprs,
        ..Default::default()
    })
}
