//! A set's elements: the kernel's (interval sets as start and end elements) to what `nft -j`
//! prints in `"elem"` (prefixes, ranges, `[KEY, DATA]` for maps), and back.

use xtnl_nft_json::{CounterStmt, CounterValues, Elem, ExprObject, Expression, Prefix};
use xtnl_wire::expr::{Counter, Expr};
use xtnl_wire::set::{ElemData, ElemRepr, elem_flags};

use crate::value::{
    Field, decode_fields, encode_fields, expr_verdict, fields, show, split, verdict_expr,
};
use crate::{ByteOrder, DataType, RuleError, SetView};

/// The key's fields of a set.
pub(crate) fn key_fields(set: &SetView) -> Result<Vec<Field>, RuleError> {
    let mut fs = fields(&set.key, set.key_len as usize)?;
    if let [f] = fs.as_mut_slice() {
        f.order = set.key_order;
    }
    Ok(fs)
}

/// The bytes of a field compared as numbers: big-endian.
fn sort_key(fs: &[Field], key: &[u8]) -> Vec<u8> {
    let Ok(parts) = split(fs, key) else {
        return key.to_vec();
    };
    let mut out = Vec::with_capacity(key.len());
    for (f, p) in fs.iter().zip(parts) {
        let mut p = p.to_vec();
        if f.order == ByteOrder::Host && cfg!(target_endian = "little") {
            p.reverse();
        }
        out.extend(p);
    }
    out
}

/// Big-endian bytes minus one (`None` at zero).
fn dec(b: &[u8]) -> Option<Vec<u8>> {
    let mut out = b.to_vec();
    for x in out.iter_mut().rev() {
        if *x == 0 {
            *x = 0xff;
        } else {
            *x -= 1;
            return Some(out);
        }
    }
    None
}

/// Big-endian bytes plus one (`None` past the maximum).
fn inc(b: &[u8]) -> Option<Vec<u8>> {
    let mut out = b.to_vec();
    for x in out.iter_mut().rev() {
        if *x == 0xff {
            *x = 0;
        } else {
            *x += 1;
            return Some(out);
        }
    }
    None
}

/// The prefix length if `[lo, hi]` (big-endian) is exactly one prefix.
fn prefix_len(lo: &[u8], hi: &[u8]) -> Option<u32> {
    let bits = lo.len() * 8;
    let mut n = 0;
    // Leading equal bits, then all 0 in lo and all 1 in hi.
    while n < bits && bit(lo, n) == bit(hi, n) {
        n += 1;
    }
    (n..bits)
        .all(|i| !bit(lo, i) && bit(hi, i))
        .then_some(n as u32)
}

fn bit(b: &[u8], i: usize) -> bool {
    b[i / 8] & (0x80 >> (i % 8)) != 0
}

/// Converts big-endian bytes to the field's order.
fn to_order(f: Field, mut b: Vec<u8>) -> Vec<u8> {
    if f.order == ByteOrder::Host && cfg!(target_endian = "little") {
        b.reverse();
    }
    b
}

/// A range `[lo, hi]` (big-endian bytes) of one field as nft prints it: a value, a prefix (for
/// addresses) or `{"range": [lo, hi]}`.
pub(crate) fn range_expr(f: Field, lo: &[u8], hi: &[u8]) -> Result<Expression, RuleError> {
    if lo.len() != hi.len() {
        return Err(RuleError::invalid(
            "",
            format!("a range from {} bytes to {} bytes", lo.len(), hi.len()),
        ));
    }
    let lo_v = decode_fields(&[f], &to_order(f, lo.to_vec()))?;
    if lo == hi {
        return Ok(lo_v);
    }
    if matches!(f.dtype, DataType::Ipv4Addr | DataType::Ipv6Addr) {
        if let Some(len) = prefix_len(lo, hi) {
            return Ok(Expression::Object(Box::new(ExprObject::Prefix(Prefix {
                addr: lo_v,
                len: u64::from(len),
            }))));
        }
    }
    let hi_v = decode_fields(&[f], &to_order(f, hi.to_vec()))?;
    Ok(Expression::Object(Box::new(ExprObject::Range(vec![
        lo_v, hi_v,
    ]))))
}

/// A set's elements as the kernel holds them to what `nft -j` prints in the set's `"elem"`
/// (intervals merged into prefixes and ranges; a map's elements as `[KEY, DATA]`), sorted as
/// nft sorts them (a concatenation with intervals: in the kernel's order, as nft prints it).
pub fn decode_elements(set: &SetView, elems: &[ElemRepr]) -> Result<Vec<Expression>, RuleError> {
    let fs = key_fields(set)?;
    let mut sorted: Vec<(Vec<u8>, &ElemRepr)> =
        elems.iter().map(|e| (sort_key(&fs, &e.key), e)).collect();
    let single = fs.len() == 1;
    // nft 1.0.6 (measured) sorts the elements, except those of a concatenation with
    // intervals (the kernel's pipapo set), which it prints in the kernel's order.
    if !set.is_interval() || single {
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
    }
    let mut out = Vec::new();
    if set.is_interval() && single && sorted.iter().all(|(_, e)| e.key_end.is_none()) {
        let f = fs[0];
        let mut i = 0;
        while i < sorted.len() {
            let (lo, e) = &sorted[i];
            i += 1;
            if e.flags & elem_flags::INTERVAL_END != 0 {
                continue;
            }
            let hi = match sorted.get(i) {
                Some((end, next)) if next.flags & elem_flags::INTERVAL_END != 0 => {
                    i += 1;
                    dec(end).ok_or_else(|| RuleError::invalid("", "an interval ending at 0"))?
                }
                _ => vec![0xff; lo.len()],
            };
            let key = range_expr(f, lo, &hi)?;
            out.push(with_data(set, e, key)?);
        }
        return Ok(out);
    }
    for (i, (_, e)) in sorted.iter().enumerate() {
        let key = match &e.key_end {
            Some(end) => {
                let (los, his) = (split(&fs, &e.key)?, split(&fs, end)?);
                let mut parts = Vec::new();
                for ((f, lo), hi) in fs.iter().zip(los).zip(his) {
                    let lo = to_order(*f, lo.to_vec());
                    let hi = to_order(*f, hi.to_vec());
                    parts.push(range_expr(*f, &lo, &hi)?);
                }
                if single {
                    parts.remove(0)
                } else {
                    Expression::Object(Box::new(ExprObject::Concat(parts)))
                }
            }
            None => decode_fields(&fs, &e.key).map_err(|err| err.within(&format!("elem[{i}]")))?,
        };
        out.push(with_data(set, e, key)?);
    }
    Ok(out)
}

/// The element's printed form: its key with its properties, and a map's data.
fn with_data(set: &SetView, e: &ElemRepr, key: Expression) -> Result<Expression, RuleError> {
    let mut key = key;
    let counter = e.counter();
    let comment = e.comment();
    if e.timeout_ms.is_some() || e.expiration_ms.is_some() || comment.is_some() || counter.is_some()
    {
        key = Expression::Object(Box::new(ExprObject::Elem(Elem {
            val: key,
            timeout: e.timeout_ms.map(|t| t / 1000),
            expires: e.expiration_ms.map(|t| t / 1000),
            comment,
            counter: counter.map(|(packets, bytes)| {
                CounterStmt::Anonymous(CounterValues {
                    packets: Some(packets),
                    bytes: Some(bytes),
                })
            }),
        })));
    }
    if !set.is_map() {
        return Ok(key);
    }
    let data = match &e.data {
        Some(ElemData::Verdict(v)) => verdict_expr(v)?,
        Some(ElemData::Value(b)) => {
            let len = if set.data_len == 0 {
                b.len()
            } else {
                set.data_len as usize
            };
            decode_fields(&data_fields(set, len)?, b)?
        }
        None => {
            return Err(RuleError::invalid(
                "",
                format!("an element of map {} without data", set.name),
            ));
        }
    };
    Ok(Expression::List(vec![key, data]))
}

/// The fields of a map's data: one type, or a concatenation (its types packed as in a key).
fn data_fields(set: &SetView, len: usize) -> Result<Vec<Field>, RuleError> {
    let dt = set.data.unwrap_or(DataType::Integer);
    if dt.id() < (1 << crate::CONCAT_TYPE_BITS) {
        fields(&[dt], len)
    } else {
        fields(&DataType::unpack(dt.id()), len)
    }
}

/// The inclusive bounds (big-endian) of one field's value as `nft -j` writes it.
pub(crate) fn bounds(f: Field, v: &Expression) -> Result<(Vec<u8>, Vec<u8>), RuleError> {
    let be = |e: &Expression| -> Result<Vec<u8>, RuleError> {
        let b = encode_fields(&[f], e)?;
        Ok(to_order(f, b))
    };
    if let Expression::Object(o) = v {
        match o.as_ref() {
            ExprObject::Range(r) if r.len() == 2 => return Ok((be(&r[0])?, be(&r[1])?)),
            ExprObject::Prefix(p) => {
                let lo = be(&p.addr)?;
                let bits = lo.len() * 8;
                if p.len as usize > bits {
                    return Err(RuleError::invalid(
                        "",
                        format!("prefix length {} of a {bits}-bit address", p.len),
                    ));
                }
                let (mut lo, mut hi) = (lo.clone(), lo);
                for i in p.len as usize..bits {
                    lo[i / 8] &= !(0x80 >> (i % 8));
                    hi[i / 8] |= 0x80 >> (i % 8);
                }
                return Ok((lo, hi));
            }
            _ => {}
        }
    }
    let b = be(v)?;
    Ok((b.clone(), b))
}

/// A set's elements as `nft -j` writes them to the kernel's elements (an interval set's
/// ranges as start and end elements, as nft sends them).
pub fn encode_elements(set: &SetView, elems: &[Expression]) -> Result<Vec<ElemRepr>, RuleError> {
    let fs = key_fields(set)?;
    let mut out = Vec::new();
    let mut ranges = Vec::new();
    for (i, e) in elems.iter().enumerate() {
        let at = format!("elem[{i}]");
        let (key, data) = if set.is_map() {
            match e {
                Expression::List(kd) if kd.len() == 2 => (&kd[0], Some(&kd[1])),
                _ => {
                    return Err(RuleError::invalid(
                        at,
                        format!("{} is not a [key, data] pair", show(e)),
                    ));
                }
            }
        } else {
            (e, None)
        };
        let mut elem = ElemRepr::default();
        let key = match key {
            Expression::Object(o) => match o.as_ref() {
                ExprObject::Elem(el) => {
                    elem.timeout_ms = el.timeout.map(|t| t * 1000);
                    if let Some(c) = &el.comment {
                        elem = elem.with_comment(c).ok_or_else(|| {
                            RuleError::invalid(at.clone(), "a comment over 254 bytes")
                        })?;
                    }
                    if let Some(CounterStmt::Anonymous(c)) = &el.counter {
                        elem.exprs.push(Expr::Counter(Counter {
                            packets: c.packets.unwrap_or(0),
                            bytes: c.bytes.unwrap_or(0),
                        }));
                    }
                    &el.val
                }
                _ => key,
            },
            _ => key,
        };
        if let Some(d) = data {
            elem.data = Some(if set.data == Some(DataType::Verdict) {
                ElemData::Verdict(expr_verdict(d).map_err(|e| e.within(&at))?)
            } else {
                let fs = data_fields(set, set.data_len as usize).map_err(|e| e.within(&at))?;
                ElemData::Value(encode_fields(&fs, d).map_err(|e| e.within(&at))?)
            });
        }
        if set.is_interval() {
            let parts: Vec<&Expression> = match key {
                Expression::Object(o) if fs.len() > 1 => match o.as_ref() {
                    ExprObject::Concat(p) if p.len() == fs.len() => p.iter().collect(),
                    _ => {
                        return Err(RuleError::invalid(
                            at,
                            format!("{} for a concatenation", show(key)),
                        ));
                    }
                },
                _ => vec![key],
            };
            let (mut lo, mut hi) = (Vec::new(), Vec::new());
            for (f, p) in fs.iter().zip(parts) {
                let (l, h) = bounds(*f, p).map_err(|e| e.within(&at))?;
                let pad = f.len.div_ceil(4) * 4 - f.len;
                lo.extend(to_order(*f, l));
                hi.extend(to_order(*f, h));
                if fs.len() > 1 {
                    lo.extend(std::iter::repeat_n(0, pad));
                    hi.extend(std::iter::repeat_n(0, pad));
                }
            }
            if fs.len() > 1 {
                elem.key = lo;
                elem.key_end = Some(hi);
                out.push(elem);
            } else {
                ranges.push((
                    to_order(fs[0], lo.clone()),
                    to_order(fs[0], hi.clone()),
                    elem,
                ));
            }
        } else {
            elem.key = encode_fields(&fs, key).map_err(|e| e.within(&at))?;
            out.push(elem);
        }
    }
    if ranges.is_empty() {
        return Ok(out);
    }
    // One field with intervals: start elements, and an end element one past each range
    // (none for a range that reaches the maximum); nft adds an end element at 0 when the
    // first range does not start there.
    let f = fs[0];
    ranges.sort_by(|a, b| a.0.cmp(&b.0));
    for w in ranges.windows(2) {
        if w[1].0 <= w[0].1 {
            return Err(RuleError::invalid(
                "",
                format!(
                    "overlapping intervals in set {}: {} and {}",
                    set.name,
                    show(&range_expr(f, &w[0].0, &w[0].1)?),
                    show(&range_expr(f, &w[1].0, &w[1].1)?)
                ),
            ));
        }
    }
    if ranges[0].0.iter().any(|b| *b != 0) {
        out.push(ElemRepr {
            key: vec![0; f.len],
            flags: elem_flags::INTERVAL_END,
            ..Default::default()
        });
    }
    for (lo, hi, mut elem) in ranges {
        elem.key = to_order(f, lo);
        out.push(elem);
        if let Some(end) = inc(&hi) {
            out.push(ElemRepr {
                key: to_order(f, end),
                flags: elem_flags::INTERVAL_END,
                ..Default::default()
            });
        }
    }
    Ok(out)
}
