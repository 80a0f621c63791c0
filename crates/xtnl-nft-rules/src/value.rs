//! The value codec: a key's bytes to the JSON value `nft -j` prints, and back.

use std::net::{Ipv4Addr, Ipv6Addr};

use xtnl_nft_json::{ExprObject, Expression, Target};
use xtnl_wire::expr::Verdict;

use crate::symbols::{is_flags, name_of, value_of};
use crate::{ByteOrder, DataType, RuleError};

/// `NFTNL_UDATA_SET_KEYBYTEORDER` in a set's userdata, if nft wrote it.
pub(crate) fn key_order_from_userdata(udata: Option<&[u8]>) -> Option<ByteOrder> {
    let mut rest = udata?;
    while rest.len() >= 2 {
        let (ty, len) = (rest[0], usize::from(rest[1]));
        let val = rest.get(2..2 + len)?;
        if ty == xtnl_wire::set::udata::SET_KEYBYTEORDER && len == 4 {
            let v = u32::from_ne_bytes([val[0], val[1], val[2], val[3]]);
            return match v {
                1 => Some(ByteOrder::Host),
                2 => Some(ByteOrder::Big),
                _ => None,
            };
        }
        rest = &rest[2 + len..];
    }
    None
}

/// One field of a key: its type, byte order and bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Field {
    pub dtype: DataType,
    pub order: ByteOrder,
    pub len: usize,
}

impl Field {
    pub fn of(dtype: DataType) -> Field {
        Field {
            dtype,
            order: dtype.byte_order(),
            len: dtype.len() as usize,
        }
    }
}

/// The fields of a key of `types` that is `total` bytes long (a single type without a fixed
/// size takes all of it).
pub(crate) fn fields(types: &[DataType], total: usize) -> Result<Vec<Field>, RuleError> {
    if let [t] = types {
        let mut f = Field::of(*t);
        if f.len == 0 || f.len > total {
            f.len = total;
        }
        return Ok(vec![f]);
    }
    let out: Vec<Field> = types.iter().map(|t| Field::of(*t)).collect();
    if let Some(f) = out.iter().find(|f| f.len == 0) {
        return Err(RuleError::unsupported(
            "",
            format!(
                "a concatenation with a field of no fixed size ({})",
                f.dtype.name().unwrap_or("unknown type")
            ),
        ));
    }
    Ok(out)
}

/// Splits a concatenation's bytes by its fields (each padded to 4 bytes).
pub(crate) fn split<'a>(fields: &[Field], bytes: &'a [u8]) -> Result<Vec<&'a [u8]>, RuleError> {
    if let [f] = fields {
        if bytes.len() < f.len {
            return Err(RuleError::invalid(
                "",
                format!("{} bytes for a {}-byte value", bytes.len(), f.len),
            ));
        }
        return Ok(vec![&bytes[..f.len]]);
    }
    let mut out = Vec::with_capacity(fields.len());
    let mut at = 0;
    for f in fields {
        let part = bytes.get(at..at + f.len).ok_or_else(|| {
            RuleError::invalid("", format!("{} bytes for a concatenation", bytes.len()))
        })?;
        out.push(part);
        at += f.len.div_ceil(4) * 4;
    }
    Ok(out)
}

/// A key's bytes (one type, or a concatenation with each field padded to 4 bytes) to the
/// value `nft -j` prints: `"192.0.2.1"`, `22`, `"tcp"`, `{"concat": ["tcp", 8080]}`.
pub fn decode_value(types: &[DataType], bytes: &[u8]) -> Result<Expression, RuleError> {
    let fs = fields(types, bytes.len())?;
    decode_fields(&fs, bytes)
}

pub(crate) fn decode_fields(fs: &[Field], bytes: &[u8]) -> Result<Expression, RuleError> {
    let parts = split(fs, bytes)?;
    if let ([f], [b]) = (fs, parts.as_slice()) {
        return decode_scalar(*f, b);
    }
    let vals = fs
        .iter()
        .zip(parts)
        .map(|(f, b)| decode_scalar(*f, b))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Expression::Object(Box::new(ExprObject::Concat(vals))))
}

/// The number in `bytes` read in `order`; `None` if it has more than 8 bytes.
pub(crate) fn to_int(order: ByteOrder, bytes: &[u8]) -> Option<u64> {
    if bytes.len() > 8 {
        return None;
    }
    let mut v = 0u64;
    match order {
        ByteOrder::Big => bytes.iter().for_each(|b| v = (v << 8) | u64::from(*b)),
        ByteOrder::Host => {
            if cfg!(target_endian = "little") {
                bytes
                    .iter()
                    .rev()
                    .for_each(|b| v = (v << 8) | u64::from(*b))
            } else {
                bytes.iter().for_each(|b| v = (v << 8) | u64::from(*b))
            }
        }
    }
    Some(v)
}

/// `v` as `len` bytes in `order`; `None` if it does not fit.
pub(crate) fn from_int(order: ByteOrder, len: usize, v: u64) -> Option<Vec<u8>> {
    if len < 8 && v >> (len * 8) != 0 {
        return None;
    }
    if len > 8 {
        return None;
    }
    let be = v.to_be_bytes();
    let mut out = be[8 - len..].to_vec();
    if order == ByteOrder::Host && cfg!(target_endian = "little") {
        out.reverse();
    }
    Some(out)
}

fn decode_scalar(f: Field, b: &[u8]) -> Result<Expression, RuleError> {
    let t = f.dtype;
    Ok(match t {
        DataType::Ipv4Addr if b.len() == 4 => {
            Expression::String(Ipv4Addr::new(b[0], b[1], b[2], b[3]).to_string())
        }
        DataType::Ipv6Addr if b.len() == 16 => {
            let mut a = [0u8; 16];
            a.copy_from_slice(b);
            Expression::String(Ipv6Addr::from(a).to_string())
        }
        DataType::EtherAddr | DataType::LlAddr => Expression::String(
            b.iter()
                .map(|x| format!("{x:02x}"))
                .collect::<Vec<_>>()
                .join(":"),
        ),
        DataType::String | DataType::IfName => {
            let end = b.iter().position(|x| *x == 0).unwrap_or(b.len());
            let s = std::str::from_utf8(&b[..end])
                .map_err(|_| RuleError::unsupported("", "a string that is not UTF-8"))?;
            Expression::String(s.to_owned())
        }
        DataType::Boolean => Expression::Bool(b.iter().any(|x| *x != 0)),
        DataType::ClassId if b.len() == 4 => {
            let v = to_int(f.order, b).unwrap_or(0);
            Expression::String(match v {
                0xffff_ffff => "root".into(),
                0 => "none".into(),
                v => format!("{:x}:{:x}", v >> 16, v & 0xffff),
            })
        }
        _ => {
            let v = to_int(f.order, b).ok_or_else(|| {
                RuleError::unsupported(
                    "",
                    format!(
                        "a {}-byte value of type {}",
                        b.len(),
                        t.name().unwrap_or("unknown")
                    ),
                )
            })?;
            decode_int(t, v)
        }
    })
}

/// A number of a type: its name if nft has one, the names of its bits for flag types.
pub(crate) fn decode_int(t: DataType, v: u64) -> Expression {
    if is_flags(t) && v != 0 && v.count_ones() > 1 {
        let mut names = Vec::new();
        for bit in 0..64 {
            let m = 1u64 << bit;
            if v & m != 0 {
                names.push(match name_of(t, m) {
                    Some(n) => Expression::String(n.into()),
                    None => Expression::Number(m),
                });
            }
        }
        return Expression::List(names);
    }
    match name_of(t, v) {
        Some(n) => Expression::String(n.into()),
        None => Expression::Number(v),
    }
}

/// A value as `nft -j` writes it to the key's bytes (the reverse of [`decode_value`]).
pub fn encode_value(types: &[DataType], value: &Expression) -> Result<Vec<u8>, RuleError> {
    let fs: Vec<Field> = types.iter().map(|t| Field::of(*t)).collect();
    encode_fields(&fs, value)
}

pub(crate) fn encode_fields(fs: &[Field], value: &Expression) -> Result<Vec<u8>, RuleError> {
    if let [f] = fs {
        return encode_scalar(*f, value);
    }
    let Expression::Object(o) = value else {
        return Err(RuleError::invalid(
            "",
            format!("{} for a concatenation", show(value)),
        ));
    };
    let ExprObject::Concat(parts) = o.as_ref() else {
        return Err(RuleError::invalid(
            "",
            format!("{} for a concatenation", show(value)),
        ));
    };
    if parts.len() != fs.len() {
        return Err(RuleError::invalid(
            "",
            format!(
                "a concatenation of {} values for a key of {}",
                parts.len(),
                fs.len()
            ),
        ));
    }
    let mut out = Vec::new();
    for (f, p) in fs.iter().zip(parts) {
        let mut b = encode_scalar(*f, p)?;
        b.resize(b.len().div_ceil(4) * 4, 0);
        out.extend(b);
    }
    Ok(out)
}

/// The JSON of a value, for messages.
pub(crate) fn show(e: &Expression) -> String {
    serde_json::to_string(e).unwrap_or_else(|_| format!("{e:?}"))
}

pub(crate) fn encode_scalar(f: Field, value: &Expression) -> Result<Vec<u8>, RuleError> {
    let t = f.dtype;
    let bad = || {
        RuleError::invalid(
            "",
            format!(
                "{} is not a value of type {}",
                show(value),
                t.name().unwrap_or("unknown")
            ),
        )
    };
    match (t, value) {
        (DataType::Ipv4Addr, Expression::String(s)) => {
            let a: Ipv4Addr = s.parse().map_err(|_| bad())?;
            return Ok(a.octets().to_vec());
        }
        (DataType::Ipv6Addr, Expression::String(s)) => {
            let a: Ipv6Addr = s.parse().map_err(|_| bad())?;
            return Ok(a.octets().to_vec());
        }
        (DataType::EtherAddr | DataType::LlAddr, Expression::String(s)) => {
            let b = s
                .split(':')
                .map(|p| u8::from_str_radix(p, 16))
                .collect::<Result<Vec<u8>, _>>()
                .map_err(|_| bad())?;
            if t == DataType::EtherAddr && b.len() != 6 {
                return Err(bad());
            }
            return Ok(b);
        }
        (DataType::String | DataType::IfName, Expression::String(s)) => {
            let len = if f.len == 0 { s.len() + 1 } else { f.len };
            if s.len() >= len || s.as_bytes().contains(&0) {
                return Err(RuleError::invalid(
                    "",
                    format!("{} is longer than {} bytes", show(value), len - 1),
                ));
            }
            let mut b = s.as_bytes().to_vec();
            b.resize(len, 0);
            return Ok(b);
        }
        (DataType::Boolean, Expression::Bool(v)) => return Ok(vec![u8::from(*v)]),
        (
            DataType::Ipv4Addr
            | DataType::Ipv6Addr
            | DataType::EtherAddr
            | DataType::LlAddr
            | DataType::String
            | DataType::IfName,
            _,
        ) => return Err(bad()),
        _ => {}
    }
    let v = encode_int(t, value).ok_or_else(bad)?;
    from_int(f.order, f.len, v).ok_or_else(|| {
        RuleError::invalid(
            "",
            format!(
                "{} does not fit in {} bytes of type {}",
                show(value),
                f.len,
                t.name().unwrap_or("unknown")
            ),
        )
    })
}

/// A number of a type from its JSON: a number, a name, a list of flag names.
pub(crate) fn encode_int(t: DataType, value: &Expression) -> Option<u64> {
    match value {
        Expression::Number(n) => Some(*n),
        Expression::String(s) if t == DataType::ClassId => match s.as_str() {
            "root" => Some(0xffff_ffff),
            "none" => Some(0),
            _ => {
                let (maj, min) = s.split_once(':')?;
                let maj = u64::from_str_radix(maj, 16).ok().filter(|v| *v <= 0xffff)?;
                let min = u64::from_str_radix(min, 16).ok().filter(|v| *v <= 0xffff)?;
                Some((maj << 16) | min)
            }
        },
        Expression::String(s) => value_of(t, s).or_else(|| parse_number(s)),
        Expression::List(items) if is_flags(t) => {
            let mut v = 0;
            for i in items {
                v |= encode_int(t, i)?;
            }
            Some(v)
        }
        Expression::Bool(b) if t == DataType::Boolean => Some(u64::from(*b)),
        _ => None,
    }
}

fn parse_number(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

/// A verdict as `nft -j` prints it in a map's data.
pub(crate) fn verdict_expr(v: &Verdict) -> Result<Expression, RuleError> {
    let o = match v {
        Verdict::Accept => ExprObject::Accept(()),
        Verdict::Drop => ExprObject::Drop(()),
        Verdict::Return => ExprObject::Return(()),
        Verdict::Continue => ExprObject::Continue(()),
        Verdict::Jump(c) => ExprObject::Jump(Target { target: c.clone() }),
        Verdict::Goto(c) => ExprObject::Goto(Target { target: c.clone() }),
        other => {
            return Err(RuleError::unsupported(
                "",
                format!("the verdict {other:?} as map data"),
            ));
        }
    };
    Ok(Expression::Object(Box::new(o)))
}

/// A verdict from a map's data as `nft -j` writes it.
pub(crate) fn expr_verdict(e: &Expression) -> Result<Verdict, RuleError> {
    if let Expression::Object(o) = e {
        match o.as_ref() {
            ExprObject::Accept(()) => return Ok(Verdict::Accept),
            ExprObject::Drop(()) => return Ok(Verdict::Drop),
            ExprObject::Return(()) => return Ok(Verdict::Return),
            ExprObject::Continue(()) => return Ok(Verdict::Continue),
            ExprObject::Jump(t) => return Ok(Verdict::Jump(t.target.clone())),
            ExprObject::Goto(t) => return Ok(Verdict::Goto(t.target.clone())),
            _ => {}
        }
    }
    Err(RuleError::invalid(
        "",
        format!("{} is not a verdict", show(e)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_and_concatenations_round_trip() {
        let cases: Vec<(Vec<DataType>, Vec<u8>, &str)> = vec![
            (
                vec![DataType::Ipv4Addr],
                vec![192, 0, 2, 1],
                r#""192.0.2.1""#,
            ),
            (vec![DataType::InetService], vec![0x1f, 0x90], "8080"),
            (vec![DataType::InetProto], vec![6], r#""tcp""#),
            (
                vec![DataType::Icmp6Type],
                vec![134],
                r#""nd-router-advert""#,
            ),
            (
                vec![DataType::CtState],
                vec![2, 0, 0, 0],
                r#""established""#,
            ),
            (vec![DataType::Mark], vec![0, 1, 0, 0], "256"),
            (
                vec![DataType::InetProto, DataType::InetService],
                vec![6, 0, 0, 0, 0x1f, 0x90, 0, 0],
                r#"{"concat":["tcp",8080]}"#,
            ),
            (
                vec![DataType::Ipv6Addr],
                vec![0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                r#""2001:db8::""#,
            ),
        ];
        for (types, bytes, json) in cases {
            let v = decode_value(&types, &bytes).unwrap();
            assert_eq!(serde_json::to_string(&v).unwrap(), json, "{types:?}");
            assert_eq!(encode_value(&types, &v).unwrap(), bytes, "{json}");
        }
    }

    #[test]
    fn wrong_values_are_refused_with_the_type() {
        let e = encode_value(&[DataType::Ipv4Addr], &Expression::Number(3)).unwrap_err();
        assert!(e.to_string().contains("ipv4_addr"), "{e}");
        let e = encode_value(&[DataType::InetProto], &Expression::Number(300)).unwrap_err();
        assert!(e.to_string().contains("does not fit"), "{e}");
    }
}
