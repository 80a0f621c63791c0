//! What iptables' getopt accepts before the parser sees it: bundled short options (`-nL`,
//! `-nvL`, `-vnxL`, `-w2`, `-tnat`), and the rule number after `-S CHAIN` / `-L CHAIN`.
//!
//! iptables parses its command line with `getopt_long`, so `-nvL` is `-n -v -L`, and a short
//! option that takes a value takes the rest of the word when there is a rest (`-w5`,
//! `-W100000`, `-tnat`, `-LINPUT`). [`unbundle`] rewrites such words into separate words,
//! leaving every option value untouched, so that the parser only ever sees one option per
//! word.

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
pub fn unbundle(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut value_next = false;
    for a in argv {
        if std::mem::take(&mut value_next) || a == "!" || a == "-" {
            out.push(a.clone());
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            value_next = !long.is_empty() && !long.contains('=') && !long_without_value(a);
            out.push(a.clone());
            continue;
        }
        let Some(body) = a.strip_prefix('-') else {
            out.push(a.clone());
            continue;
        };
        let chars: Vec<char> = body.chars().collect();
        let known = chars.first().and_then(|&c| short(c));
        match known {
            None => out.push(a.clone()),
            Some(_) if chars.len() == 1 => {
                value_next = short(chars[0]) == Some(Takes::Required);
                out.push(a.clone());
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
                        Some(Takes::Nothing) => words.push(format!("-{c}")),
                        Some(t) => {
                            words.push(format!("-{c}"));
                            let rest: String = chars[i + 1..].iter().collect();
                            if rest.is_empty() {
                                value_next = t == Takes::Required;
                            } else {
                                words.push(rest);
                            }
                            break;
                        }
                    }
                }
                if ok {
                    out.extend(words);
                } else {
                    value_next = false;
                    out.push(a.clone());
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
