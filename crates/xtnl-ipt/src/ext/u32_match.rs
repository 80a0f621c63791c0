//! `-m u32 [!] --u32 TESTS` (revision 0, IPv4 and IPv6): the payload of
//! [`crate::xt::u32_match`], through nft_compat in iptables-nft. The tests are read as
//! libxt_u32's state machine reads them (`location = value[,value]...` joined by `&&`,
//! locations joined by `&`, `<<`, `>>`, `@`, numbers as `strtoul(s, 0)` reads them, at
//! most ten tests, ten numbers and ten values each) and printed in hex inside double
//! quotes, as iptables prints them.

use super::*;
use crate::xt::u32_match::{U32 as Info, U32Op, U32Test};

pub(crate) struct U32Match;

/// iptables' limit on tests, location numbers and values (`XT_U32_MAXSIZE`).
const MAX: usize = 10;

/// A number at `s[*i..]` as `xtables_strtoui(.., 0, UINT32_MAX)` reads it (leading white
/// space, an optional `+`, then `0x` hex, `0` octal or decimal).
fn number(s: &[u8], i: &mut usize, start: usize) -> Result<u32> {
    let err = || {
        bad(format!(
            "u32: at char {start}: not a number or out of range"
        ))
    };
    let mut k = *i;
    while k < s.len() && s[k].is_ascii_whitespace() {
        k += 1;
    }
    if s.get(k) == Some(&b'+') {
        k += 1;
    }
    let (radix, mut at) = match (s.get(k), s.get(k + 1), s.get(k + 2)) {
        (Some(b'0'), Some(b'x' | b'X'), Some(c)) if c.is_ascii_hexdigit() => (16, k + 2),
        (Some(b'0'), _, _) => (8, k),
        _ => (10, k),
    };
    let begin = at;
    let mut v: u64 = 0;
    while let Some(d) = s.get(at).and_then(|c| char::from(*c).to_digit(radix)) {
        v = v
            .saturating_mul(u64::from(radix))
            .saturating_add(u64::from(d));
        at += 1;
    }
    if at == begin {
        return Err(err());
    }
    let v = u32::try_from(v).map_err(|_| err())?;
    *i = at;
    Ok(v)
}

/// The tests of `--u32 ARG`, as `u32_parse` reads them.
fn parse_tests(arg: &str) -> Result<Vec<U32Test>> {
    let s = arg.as_bytes();
    let mut i = 0;
    let mut tests = Vec::new();
    let mut t = U32Test::default();
    let mut values = false; // state 1: reading values
    loop {
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        let Some(&c) = s.get(i) else {
            if !values {
                return Err(bad("u32: abrupt end of input after location specifier"));
            }
            if t.values.is_empty() {
                return Err(bad("u32: test ended with no value specified"));
            }
            tests.push(t);
            if tests.len() > MAX {
                return Err(bad(format!("u32: at char {i}: too many \"&&\"s")));
            }
            return Ok(tests);
        };
        if !values {
            if c == b'=' {
                if t.location.is_empty() {
                    return Err(bad(format!("u32: at char {i}: location spec missing")));
                }
                i += 1;
                values = true;
                continue;
            }
            let mut op = U32Op::And;
            if !t.location.is_empty() {
                op = match c {
                    b'&' => U32Op::And,
                    b'<' | b'>' => {
                        i += 1;
                        if s.get(i) != Some(&c) {
                            return Err(bad(format!(
                                "u32: at char {i}: a second '{}' was expected",
                                char::from(c)
                            )));
                        }
                        if c == b'<' {
                            U32Op::LeftShift
                        } else {
                            U32Op::RightShift
                        }
                    }
                    b'@' => U32Op::At,
                    _ => return Err(bad(format!("u32: at char {i}: operator expected"))),
                };
                i += 1;
            }
            let at = i;
            t.location.push((op, number(s, &mut i, at)?));
            if t.location.len() > MAX {
                return Err(bad(format!("u32: at char {i}: too many operators")));
            }
        } else if c == b'&' {
            i += 1;
            if s.get(i) != Some(&b'&') {
                return Err(bad(format!("u32: at char {i}: a second '&' was expected")));
            }
            if t.values.is_empty() {
                return Err(bad(format!("u32: at char {i}: value spec missing")));
            }
            tests.push(std::mem::take(&mut t));
            if tests.len() > MAX {
                return Err(bad(format!("u32: at char {i}: too many \"&&\"s")));
            }
            i += 1;
            values = false;
        } else {
            if !t.values.is_empty() {
                if c != b',' {
                    return Err(bad(format!("u32: at char {i}: expected \",\" or \"&&\"")));
                }
                i += 1;
            }
            let at = i;
            let lo = number(s, &mut i, at)?;
            while i < s.len() && s[i].is_ascii_whitespace() {
                i += 1;
            }
            let hi = if s.get(i) == Some(&b':') {
                i += 1;
                let at = i;
                number(s, &mut i, at)?
            } else {
                lo
            };
            t.values.push((lo, hi));
            if t.values.len() > MAX {
                return Err(bad(format!("u32: at char {i}: too many \",\"s")));
            }
        }
    }
}

/// `"TESTS"` as `u32_dump` prints them; `None` for what the parser could not read back.
fn dump(u: &Info) -> Option<String> {
    if u.invert > 1 || u.tests.is_empty() || u.tests.len() > MAX {
        return None;
    }
    let mut out = String::from("\"");
    for (k, t) in u.tests.iter().enumerate() {
        if t.location.is_empty()
            || t.values.is_empty()
            || t.location.len() > MAX
            || t.values.len() > MAX
        {
            return None;
        }
        if k > 0 {
            out.push_str("&&");
        }
        for (j, (op, n)) in t.location.iter().enumerate() {
            if j > 0 {
                out.push_str(match op {
                    U32Op::And => "&",
                    U32Op::LeftShift => "<<",
                    U32Op::RightShift => ">>",
                    U32Op::At => "@",
                    U32Op::Other(_) => return None,
                });
            }
            let _ = write!(out, "0x{n:x}");
        }
        out.push('=');
        for (j, (lo, hi)) in t.values.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            if lo == hi {
                let _ = write!(out, "0x{lo:x}");
            } else {
                let _ = write!(out, "0x{lo:x}:0x{hi:x}");
            }
        }
    }
    out.push('"');
    Some(out)
}

impl Ext for U32Match {
    fn name(&self) -> &'static str {
        "u32"
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("u32", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "u32")?;
        let g = given
            .first()
            .ok_or_else(|| bad("u32: option \"--u32\" must be specified"))?;
        Ok(Info {
            tests: parse_tests(g.arg())?,
            invert: u8::from(g.neg),
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let u = Info::decode(info).ok()?;
        let d = dump(&u)?;
        bang(out, u.invert != 0);
        let _ = write!(out, " --u32 {d}");
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let u = Info::decode(info).ok()?;
        let d = dump(&u)?;
        out.push_str(" u32");
        bang(out, u.invert != 0);
        let _ = write!(out, " {d}");
        Some(())
    }
    canonical_via!(Info);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(s: &str) -> String {
        dump(&Info {
            tests: parse_tests(s).unwrap(),
            invert: 0,
        })
        .unwrap()
    }

    #[test]
    fn tests_read_and_print_as_iptables_does() {
        assert_eq!(round("0x0=0x0&&0x0=0x1"), "\"0x0=0x0&&0x0=0x1\"");
        assert_eq!(
            round(" 6 & 0xFF = 1 , 2:010 && 0>>22&0x3C@12>>16=80"),
            "\"0x6&0xff=0x1,0x2:0x8&&0x0>>0x16&0x3c@0xc>>0x10=0x50\""
        );
        for b in [
            "",
            "0",
            "=1",
            "0=",
            "0=1&",
            "0<1=1",
            "0=1;",
            "0x=1",
            "0=4294967296",
            "0&&1=1",
            "0=1,",
            "0=1&&",
        ] {
            assert!(parse_tests(b).is_err(), "{b:?}");
        }
        let ten = ["0=1"; 10].join("&&");
        assert!(parse_tests(&ten).is_ok());
        assert!(parse_tests(&format!("{ten}&&0=1")).is_err());
        let nums = ["1"; 11].join("&");
        assert!(parse_tests(&format!("{nums}=1")).is_err());
    }

    #[test]
    fn payload_is_byte_exact_and_reads_back() {
        let u = Info {
            tests: parse_tests("0x0=0x0&&0x4@0x8=0x1:0x2").unwrap(),
            invert: 1,
        };
        let b = u.encode();
        assert_eq!(b.len(), 1984);
        assert_eq!(&b[180..184], &4u32.to_ne_bytes());
        assert_eq!(b[180 + 8 + 4], 3, "@ is XT_U32_AT");
        assert_eq!((b[180 + 176], b[180 + 177]), (2, 1));
        assert_eq!((b[1980], b[1981]), (2, 1));
        assert_eq!(Info::decode(&b).unwrap(), u);
    }
}
