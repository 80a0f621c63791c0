//! What iptables' getopt accepts before the parser sees it: bundled short options (`-nL`,
//! `-nvL`, `-vnxL`, `-w2`, `-tnat`), and the rule number after `-S CHAIN` / `-L CHAIN`.
//!
//! iptables parses its command line with `getopt_long`, so `-nvL` is `-n -v -L`, and a short
//! option that takes a value takes the rest of the word when there is a rest (`-w5`,
//! `-W100000`, `-tnat`, `-LINPUT`). [`unbundle`] rewrites such words into separate words,
//! leaving every option value untouched, so that the parser only ever sees one option per
//! word.

#![deny(missing_docs)]

/// How a short option of iptables 1.8.9 takes its value (its getopt string).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Takes {
    Nothing,
    /// Optional: only the rest of the same word (`-w5`), or a following word the parser
    /// chooses to take itself.
    Optional,
    Required,
}

fn short(c: char) -> Option<Takes> {
    Some(match c {
        'n' | 'v' | 'x' | '4' | '6' | 'f' | 'V' | 'b' => Takes::Nothing,
        'L' | 'S' | 'F' | 'Z' | 'X' | 'h' | 'w' | 'W' => Takes::Optional,
        'A' | 'C' | 'D' | 'R' | 'I' | 'N' | 'E' | 'P' | 'M' | 'o' | 'p' | 's' | 'd' | 'j' | 'g'
        | 'i' | 't' | 'm' | 'c' => Takes::Required,
        _ => return None,
    })
}

/// Long options that take no value: the word after them is an option again. Every other
/// long option (those of the modules included) is taken to have a value, which is never
/// rewritten.
fn long_without_value(opt: &str) -> bool {
    matches!(
        opt,
        "--numeric"
            | "--verbose"
            | "--exact"
            | "--line-numbers"
            | "--ipv4"
            | "--ipv6"
            | "--fragment"
            | "--syn"
            | "--list"
            | "--list-rules"
            | "--flush"
            | "--zero"
            | "--delete-chain"
            | "--help"
            | "--version"
            | "--wait"
            | "--wait-interval"
            | "--noflush"
            | "--counters"
            | "--test"
            | "--rcheck"
            | "--random"
            | "--random-fully"
            | "--persistent"
            | "--log-tcp-sequence"
            | "--log-tcp-options"
            | "--log-ip-options"
            | "--log-uid"
            | "--log-macdecode"
    )
}

/// Rewrites bundled short options into one option per word, as getopt reads them; option
/// values (the word after an option that takes one) are kept as they are.
pub fn unbundle<S: AsRef<str>>(argv: &[S]) -> Vec<String> {
    words(argv).into_iter().map(|(w, _)| w).collect()
}

/// The family a line is restricted to by `-4`/`--ipv4` or `-6`/`--ipv6` given as options
/// (not as another option's value): iptables-restore ignores a `-6` line, ip6tables-restore
/// a `-4` line.
pub fn family_flag<S: AsRef<str>>(argv: &[S]) -> Option<crate::model::Family> {
    // Every `-4`/`-6` option, bundled or not, is in a word that starts with '-' and holds
    // the digit: without one, nothing to unbundle (a restore asks this of every line).
    if !argv.iter().any(|a| {
        let a = a.as_ref();
        a.starts_with('-') && a.contains(['4', '6'])
    }) {
        return None;
    }
    words(argv)
        .into_iter()
        .rev()
        .find_map(|(w, option)| match (option, w.as_str()) {
            (true, "-4" | "--ipv4") => Some(crate::model::Family::Ipv4),
            (true, "-6" | "--ipv6") => Some(crate::model::Family::Ipv6),
            _ => None,
        })
}

/// [`unbundle`], borrowing `argv` when no word is a bundle getopt would split (a restore's
/// every line, usually): the same words without a copy of each.
pub fn unbundled(argv: &[String]) -> std::borrow::Cow<'_, [String]> {
    if needs_unbundling(argv) {
        std::borrow::Cow::Owned(unbundle(argv))
    } else {
        std::borrow::Cow::Borrowed(argv)
    }
}

/// Whether some word of `argv` is a bundle getopt would split ([`unbundle`] would change
/// the words); a restore's every line, usually, is not.
pub fn needs_unbundling<S: AsRef<str>>(argv: &[S]) -> bool {
    let mut value_next = false;
    for a in argv {
        let a = a.as_ref();
        if std::mem::take(&mut value_next) || a == "!" || a == "-" {
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            value_next = !long.is_empty() && !long.contains('=') && !long_without_value(a);
            continue;
        }
        let Some(body) = a.strip_prefix('-') else {
            continue;
        };
        let mut chars = body.chars();
        match (chars.next().and_then(short), chars.next()) {
            (None, _) => {}
            (Some(t), None) => value_next = t == Takes::Required,
            (Some(_), Some(_)) => return true,
        }
    }
    false
}

/// [`unbundle`]'s words, each marked whether it is an option (true) or a value/positional.
fn words<S: AsRef<str>>(argv: &[S]) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::with_capacity(argv.len());
    let mut value_next = false;
    for a in argv {
        let a = a.as_ref();
        if std::mem::take(&mut value_next) || a == "!" || a == "-" {
            out.push((a.to_owned(), false));
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            value_next = !long.is_empty() && !long.contains('=') && !long_without_value(a);
            out.push((a.to_owned(), true));
            continue;
        }
        let Some(body) = a.strip_prefix('-') else {
            out.push((a.to_owned(), false));
            continue;
        };
        let chars: Vec<char> = body.chars().collect();
        let known = chars.first().and_then(|&c| short(c));
        match known {
            None => out.push((a.to_owned(), true)),
            Some(_) if chars.len() == 1 => {
                value_next = short(chars[0]) == Some(Takes::Required);
                out.push((a.to_owned(), true));
            }
            Some(_) => {
                // Expand only what getopt would: letters up to the first one that takes a
                // value, which takes the rest of the word. A word with an unknown letter
                // before that point is left alone (the parser names it as unknown).
                let mut words = Vec::new();
                let mut ok = true;
                for (i, &c) in chars.iter().enumerate() {
                    match short(c) {
                        None => {
                            ok = false;
                            break;
                        }
                        Some(Takes::Nothing) => words.push((format!("-{c}"), true)),
                        Some(t) => {
                            words.push((format!("-{c}"), true));
                            let rest: String = chars[i + 1..].iter().collect();
                            if rest.is_empty() {
                                value_next = t == Takes::Required;
                            } else {
                                words.push((rest, false));
                            }
                            break;
                        }
                    }
                }
                if ok {
                    out.extend(words);
                } else {
                    value_next = false;
                    out.push((a.to_owned(), true));
                }
            }
        }
    }
    out
}

/// The `n`th (1-based) rule of a `-S CHAIN` listing: the `-A` lines, and xtnl's `#` lines
/// for rules iptables syntax cannot show, which count as rules too. Past the last rule it is
/// empty, as with iptables.
pub fn nth_rule_of_list_rules(text: &str, n: usize) -> String {
    nth(
        text.lines()
            .filter(|l| !l.starts_with("-P ") && !l.starts_with("-N ")),
        n,
    )
}

/// The `n`th (1-based) rule of a `-L CHAIN` listing: its line without the chain and column
/// headers.
pub fn nth_rule_of_list(text: &str, n: usize) -> String {
    nth(
        text.lines()
            .skip_while(|l| !l.starts_with("Chain "))
            .skip(2)
            .take_while(|l| !l.is_empty()),
        n,
    )
}

fn nth<'a>(mut lines: impl Iterator<Item = &'a str>, n: usize) -> String {
    match lines.nth(n.saturating_sub(1)) {
        Some(l) if n >= 1 => format!("{l}\n"),
        _ => String::new(),
    }
}

/// `-c PACKETS BYTES` (`--set-counters`): the counters a new rule starts from.
pub fn set_counters(packets: &str, bytes: Option<&str>) -> crate::Result<crate::model::Counters> {
    let bad =
        || crate::Error::InvalidInput("-c requires packet and byte counter (two numbers)".into());
    Ok(crate::model::Counters {
        packets: packets.parse().map_err(|_| bad())?,
        bytes: bytes.ok_or_else(bad)?.parse().map_err(|_| bad())?,
    })
}

/// iptables refuses a target option given twice (xtables' option parser: "can only be used
/// once"); `earlier` are the target's options before this one.
pub fn once(target: &str, opt: &str, earlier: &[(String, String)]) -> crate::Result<()> {
    if earlier.iter().any(|(o, _)| o == opt) {
        return Err(used_twice(target, opt));
    }
    Ok(())
}

/// iptables' words for an option given twice (`opt` with its dashes), as xtables' option
/// parser prints them (followed by an empty line).
pub fn used_twice(ext: &str, opt: &str) -> crate::Error {
    crate::Error::InvalidInput(format!("{ext}: option \"{opt}\" can only be used once.\n"))
}

/// An address as iptables reads it, rewritten into `ADDR/PREFIX` for the parser: IPv4
/// addresses of fewer than four parts are completed with zeros (`10` is `10.0.0.0`, `0/0`
/// is `0.0.0.0/0`), and a mask written as an address (`/255.255.0.0`, `/ffff:ffff::`)
/// becomes its prefix length when it is contiguous. Anything else is returned unchanged
/// (the parser then names it; [`address_part`] is what iptables' message names).
pub fn normalize_net(s: &str, family: crate::model::Family) -> String {
    // iptables splits at the last '/': in `1.2.3.4/32/3` the address is `1.2.3.4/32`.
    let (addr, mask) = match s.rsplit_once('/') {
        Some((a, m)) => (a, Some(m)),
        None => (s, None),
    };
    let addr = if family == crate::model::Family::Ipv6 {
        addr.to_owned()
    } else {
        complete_v4(addr).unwrap_or_else(|| addr.to_owned())
    };
    let mask = mask.map(|m| mask_prefix(m).map_or_else(|| m.to_owned(), |p| p.to_string()));
    match mask {
        Some(m) => format!("{addr}/{m}"),
        None => addr,
    }
}

/// Whether [`normalize_net`] would return `s` unchanged, told without a copy: an address
/// as it is written (`1.2.3.4`, `2001:db8::1`: an IPv4 address of four parts has nothing
/// to complete) with no mask or a mask of decimal digits (never an address mask).
pub fn is_normal_net(s: &str) -> bool {
    let (addr, mask) = match s.rsplit_once('/') {
        Some((a, m)) => (a, Some(m)),
        None => (s, None),
    };
    mask.is_none_or(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
        && addr.parse::<std::net::IpAddr>().is_ok()
}

/// The address part iptables names in "host/network `...' not found": all before the last
/// '/' when what follows it is a mask iptables would read.
pub fn address_part(s: &str) -> &str {
    let max = |a: &str| if a.contains(':') { 128 } else { 32 };
    match s.rsplit_once('/') {
        Some((a, m)) if m.parse::<u8>().is_ok_and(|n| n <= max(a)) || mask_prefix(m).is_some() => a,
        _ => s,
    }
}

/// `10` -> `10.0.0.0`, `10.1` -> `10.1.0.0` (iptables completes a network address).
fn complete_v4(a: &str) -> Option<String> {
    let parts: Vec<&str> = a.split('.').collect();
    if parts.len() >= 4 || parts.iter().any(|p| p.parse::<u8>().is_err()) {
        return None;
    }
    let mut v: Vec<&str> = parts;
    v.resize(4, "0");
    Some(v.join("."))
}

/// The prefix length of a contiguous mask written as an address.
fn mask_prefix(m: &str) -> Option<u32> {
    let bits: u128 = match m.parse::<std::net::IpAddr>().ok()? {
        std::net::IpAddr::V4(a) => u128::from(u32::from(a)) << 96,
        std::net::IpAddr::V6(a) => u128::from(a),
    };
    let ones = bits.leading_ones();
    (bits.checked_shl(ones).unwrap_or(0) == 0).then_some(ones)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> String {
        let v: Vec<String> = s.split(' ').map(str::to_owned).collect();
        unbundle(&v).join(" ")
    }

    #[test]
    fn bundles_expand_as_getopt_reads_them() {
        assert_eq!(u("-nL"), "-n -L");
        assert_eq!(u("-nvL"), "-n -v -L");
        assert_eq!(u("-vnxL"), "-v -n -x -L");
        assert_eq!(u("-L -nv"), "-L -n -v");
        assert_eq!(u("-w2 -S"), "-w 2 -S");
        assert_eq!(u("-w5 -W100000 -S"), "-w 5 -W 100000 -S");
        assert_eq!(u("-tnat -nLPREROUTING"), "-t nat -n -L PREROUTING");
        assert_eq!(u("-nvL INPUT 2"), "-n -v -L INPUT 2");
    }

    #[test]
    fn values_are_never_rewritten() {
        assert_eq!(
            u("-A in -m comment --comment -nL -j ACCEPT"),
            "-A in -m comment --comment -nL -j ACCEPT"
        );
        assert_eq!(u("-A -nv -j ACCEPT"), "-A -nv -j ACCEPT");
        assert_eq!(u("-N -xy"), "-N -xy");
        assert_eq!(u("-nQ"), "-nQ");
        assert_eq!(
            u("--line-numbers -nL --log-prefix -vx"),
            "--line-numbers -n -L --log-prefix -vx"
        );
    }

    #[test]
    fn family_flags_are_options_only() {
        use crate::model::Family::{Ipv4, Ipv6};
        let f = |s: &str| family_flag(&s.split(' ').map(str::to_owned).collect::<Vec<_>>());
        assert_eq!(f("-6 -A c -s ::1"), Some(Ipv6));
        assert_eq!(f("-A c -4 -j ACCEPT"), Some(Ipv4));
        assert_eq!(f("-A c -m comment --comment -6 -j ACCEPT"), None);
        assert_eq!(f("-A c -j ACCEPT"), None);
    }

    #[test]
    fn addresses_as_iptables_reads_them() {
        use crate::model::Family::{Ipv4, Ipv6};
        assert_eq!(normalize_net("0/0", Ipv4), "0.0.0.0/0");
        assert_eq!(normalize_net("10.1/16", Ipv4), "10.1.0.0/16");
        assert_eq!(normalize_net("10", Ipv4), "10.0.0.0");
        assert_eq!(normalize_net("1.2.3.4/255.255.0.0", Ipv4), "1.2.3.4/16");
        assert_eq!(normalize_net("1.2.3.4/0.0.0.0", Ipv4), "1.2.3.4/0");
        assert_eq!(
            normalize_net("1.2.3.4/255.0.255.0", Ipv4),
            "1.2.3.4/255.0.255.0"
        );
        assert_eq!(normalize_net("::/0", Ipv6), "::/0");
        assert_eq!(
            normalize_net("2001:db8::/ffff:ffff::", Ipv6),
            "2001:db8::/32"
        );
        assert_eq!(normalize_net("host.example", Ipv4), "host.example");
        assert_eq!(normalize_net("1.2.3.4/32/3", Ipv4), "1.2.3.4/32/3");
        assert_eq!(address_part("1.2.3.4/32/3"), "1.2.3.4/32");
        assert_eq!(address_part("192.0.2.0/33"), "192.0.2.0/33");
        assert_eq!(address_part("host/24"), "host");
    }

    #[test]
    fn an_address_said_normal_is_one_normalize_leaves_alone() {
        use crate::model::Family::{Ipv4, Ipv6};
        let inputs = [
            "192.0.2.1",
            "192.0.2.0/24",
            "192.0.2.0/032",
            "0/0",
            "10.1/16",
            "10",
            "1.2.3.4/",
            "1.2.3.4/255.255.0.0",
            "1.2.3.4/32/3",
            "::/0",
            "2001:db8::1/64",
            "::ffff:1.2.3.4",
            "2001:db8::/ffff:ffff::",
            "host.example",
            "host/24",
            "192.0.2.1/33",
            "",
        ];
        let mut normal = 0;
        for s in inputs {
            for fam in [Ipv4, Ipv6] {
                if is_normal_net(s) {
                    normal += 1;
                    assert_eq!(normalize_net(s, fam), s, "{s} {fam:?}");
                }
            }
        }
        assert_eq!(normal, 14, "7 of the inputs are normal, in both families");
    }

    #[test]
    fn nth_rule_of_listings() {
        let s = "-N foo\n-A foo -s 1.2.3.4/32\n-A foo -j ACCEPT\n";
        assert_eq!(nth_rule_of_list_rules(s, 2), "-A foo -j ACCEPT\n");
        assert_eq!(nth_rule_of_list_rules(s, 3), "");
        let l = "Chain foo (0 references)\ntarget     prot opt source               destination         \n           all  --  1.2.3.4              anywhere            \nACCEPT     all  --  anywhere             anywhere            \n";
        assert_eq!(
            nth_rule_of_list(l, 1),
            "           all  --  1.2.3.4              anywhere            \n"
        );
        assert_eq!(nth_rule_of_list(l, 3), "");
    }
}
