//! Named stateful objects (counter, quota, limit, ct helper) between nft's JSON and the
//! kernel's `NEWOBJ` representation, as nft 1.0.6 prints and reads them.

use xtnl_nft_json as j;

use crate::error::{Error, Result};
use crate::model::Family;
use crate::nft::TableRef;
use crate::wire::object::{ObjData, ObjRepr};
use crate::wire::set::udata;

/// `NFTNL_UDATA_OBJ_COMMENT`.
const OBJ_COMMENT: u8 = 0;

fn refuse(what: &str, why: &str) -> Error {
    Error::InvalidInput(format!("{what}: {why}"))
}

/// nft's unit of a limit's period, in seconds.
fn per_name(seconds: u64) -> Option<&'static str> {
    Some(match seconds {
        1 => "second",
        60 => "minute",
        3600 => "hour",
        86400 => "day",
        604_800 => "week",
        _ => return None,
    })
}

fn per_seconds(name: &str) -> Option<u64> {
    [1, 60, 3600, 86400, 604_800]
        .into_iter()
        .find(|s| per_name(*s) == Some(name))
}

/// A byte rate as nft prints it: the largest of bytes, kbytes, mbytes that divides it.
fn byte_rate(mut v: u64) -> (u64, &'static str) {
    let mut unit = "bytes";
    for next in ["kbytes", "mbytes"] {
        if v != 0 && v % 1024 == 0 {
            v /= 1024;
            unit = next;
        } else {
            break;
        }
    }
    (v, unit)
}

fn byte_factor(unit: Option<&str>, what: &str) -> Result<u64> {
    Ok(match unit {
        None | Some("bytes") => 1,
        Some("kbytes") => 1024,
        Some("mbytes") => 1024 * 1024,
        Some(other) => return Err(refuse(what, &format!("unknown byte unit {other:?}"))),
    })
}

fn l3_name(nfproto: u16) -> String {
    match nfproto {
        2 => "ip".into(),
        10 => "ip6".into(),
        1 => "inet".into(),
        n => n.to_string(),
    }
}

fn l4_json(p: u8) -> j::Expression {
    match p {
        6 => j::Expression::string("tcp"),
        17 => j::Expression::string("udp"),
        n => j::Expression::Number(u64::from(n)),
    }
}

/// The object as `nft -j list` prints it.
pub(super) fn obj_item(table: &TableRef, fam: j::Family, o: &ObjRepr) -> Result<j::Item> {
    let what = format!("object {table} {}", o.name);
    let comment = o
        .userdata
        .as_deref()
        .and_then(|u| udata::string(u, OBJ_COMMENT));
    let name = Some(o.name.clone());
    let t = table.name.clone();
    let obj = match &o.data {
        Some(ObjData::Counter { packets, bytes }) => j::Object::Counter(j::Counter {
            family: fam,
            name,
            table: t,
            handle: o.handle,
            comment,
            packets: Some(*packets),
            bytes: Some(*bytes),
        }),
        Some(ObjData::Quota {
            bytes,
            consumed,
            flags,
        }) => j::Object::Quota(j::Quota {
            family: fam,
            name,
            table: t,
            handle: o.handle,
            comment,
            bytes: Some(*bytes),
            used: Some(*consumed),
            inv: Some(flags & 1 != 0),
        }),
        Some(ObjData::Limit {
            rate,
            unit,
            burst,
            kind,
            flags,
        }) => {
            let per = per_name(*unit)
                .ok_or_else(|| refuse(&what, &format!("a limit per {unit} s has no nft unit")))?;
            let (rate, rate_unit, burst, burst_unit) = if *kind == 1 {
                let (r, ru) = byte_rate(*rate);
                let (b, bu) = byte_rate(u64::from(*burst));
                (r, Some(ru.to_string()), b, (b != 0).then(|| bu.to_string()))
            } else {
                (*rate, None, u64::from(*burst), None)
            };
            j::Object::Limit(j::Limit {
                family: fam,
                name,
                table: t,
                handle: o.handle,
                comment,
                rate: Some(rate),
                rate_unit,
                per: Some(per.into()),
                burst: (burst != 0).then_some(burst),
                burst_unit,
                unit: None,
                inv: (flags & 1 != 0).then_some(true),
            })
        }
        Some(ObjData::CtHelper {
            name: helper,
            l3proto,
            l4proto,
        }) => {
            let protocol = match l4_json(*l4proto) {
                j::Expression::String(s) => s,
                _ => {
                    return Err(refuse(
                        &what,
                        "a ct helper of a protocol other than tcp and udp cannot be listed yet",
                    ));
                }
            };
            j::Object::CtHelper(j::CtHelper {
                family: fam,
                name,
                table: t,
                handle: o.handle,
                kind: Some(helper.clone()),
                protocol: Some(protocol),
                l3proto: Some(l3_name(*l3proto)),
                comment,
            })
        }
        _ => {
            return Err(refuse(
                &what,
                &format!(
                    "object type {} cannot be listed by xtnl's nft front yet (counter, quota, \
                     limit and ct helper can)",
                    o.kind
                ),
            ));
        }
    };
    Ok(j::Item::Object(obj))
}

/// The `NEWOBJ` (with data) or `DELOBJ` (`data: false`) of a JSON object command.
pub(super) fn obj_repr(
    family: Family,
    obj: &j::Object,
    data: bool,
    what: &str,
) -> Result<Option<(TableRef, ObjRepr)>> {
    let (table, name, comment, d) = match obj {
        j::Object::Counter(c) => (
            &c.table,
            &c.name,
            &c.comment,
            ObjData::Counter {
                packets: c.packets.unwrap_or(0),
                bytes: c.bytes.unwrap_or(0),
            },
        ),
        j::Object::Quota(q) => (
            &q.table,
            &q.name,
            &q.comment,
            ObjData::Quota {
                bytes: q.bytes.unwrap_or(0),
                consumed: q.used.unwrap_or(0),
                flags: u32::from(q.inv == Some(true)),
            },
        ),
        j::Object::Limit(l) => {
            let bytes = l.rate_unit.is_some() || l.unit.as_deref() == Some("bytes");
            let per = l.per.as_deref().unwrap_or("second");
            let unit = per_seconds(per)
                .ok_or_else(|| refuse(what, &format!("unknown limit period {per:?}")))?;
            let rate = l.rate.unwrap_or(0) * byte_factor(l.rate_unit.as_deref(), what)?;
            let burst = l.burst.unwrap_or(if bytes { 0 } else { 5 })
                * byte_factor(l.burst_unit.as_deref(), what)?;
            (
                &l.table,
                &l.name,
                &l.comment,
                ObjData::Limit {
                    rate,
                    unit,
                    burst: u32::try_from(burst)
                        .map_err(|_| refuse(what, "the burst is too large"))?,
                    kind: u32::from(bytes),
                    flags: u32::from(l.inv == Some(true)),
                },
            )
        }
        j::Object::CtHelper(h) => {
            let l4proto = match h.protocol.as_deref() {
                Some("tcp") => 6,
                Some("udp") => 17,
                other => {
                    return Err(refuse(
                        what,
                        &format!("ct helper protocol {other:?} (tcp or udp)"),
                    ));
                }
            };
            let l3proto = match h.l3proto.as_deref() {
                None => family.nfproto().into(),
                Some("ip") => 2,
                Some("ip6") => 10,
                Some("inet") => 1,
                Some(other) => return Err(refuse(what, &format!("ct helper l3proto {other:?}"))),
            };
            (
                &h.table,
                &h.name,
                &h.comment,
                ObjData::CtHelper {
                    name: h
                        .kind
                        .clone()
                        .ok_or_else(|| refuse(what, "a ct helper needs its type"))?,
                    l3proto,
                    l4proto,
                },
            )
        }
        _ => return Ok(None),
    };
    let name = name
        .clone()
        .ok_or_else(|| refuse(what, "an object by handle is not supported; name it"))?;
    let mut userdata = None;
    if let Some(c) = comment {
        let mut u = Vec::new();
        udata::push_string(&mut u, OBJ_COMMENT, c)
            .ok_or_else(|| refuse(what, "the comment is longer than 254 bytes"))?;
        userdata = Some(u);
    }
    let table = TableRef::new(family, table.clone());
    Ok(Some((
        table.clone(),
        ObjRepr {
            family: family.nfproto(),
            table: table.name,
            name,
            handle: None,
            kind: d.kind(),
            data: data.then_some(d),
            userdata: if data { userdata } else { None },
        },
    )))
}

#[cfg(test)]
mod tests {
    #[test]
    fn byte_rates_print_as_nft_prints_them() {
        assert_eq!(super::byte_rate(104_857_600), (100, "mbytes"));
        assert_eq!(super::byte_rate(1536), (1536, "bytes"));
        assert_eq!(super::byte_rate(2048), (2, "kbytes"));
    }
}
