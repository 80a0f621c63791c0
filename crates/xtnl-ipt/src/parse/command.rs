//! After the options: the modules become matches, the target is built, and the command
//! letter with its arguments becomes a [`Command`], checked as iptables checks it.

use super::options::{Parser, Pending};
use super::*;

impl Parser<'_> {
    /// The invocation the options describe.
    pub(super) fn finish(mut self) -> Result<Invocation> {
        self.finish_modules()?;
        self.finish_target()?;
        let Some((letter, cargs)) = self.command.take() else {
            return Err(bad("no command specified"));
        };
        let table = self.table.take().unwrap_or_else(|| "filter".into());
        validate_name("table", &table)?;
        let rule = std::mem::take(&mut self.rule);
        let (command, rule_number) = command(letter, &cargs, rule, self.family)?;
        let command = expand(command, &self.srcs, &self.dsts)?;
        let ifaces_given = (self.seen[2], self.seen[3]);
        for each in command.each() {
            check_command(&table, each, ifaces_given)?;
        }
        Ok(Invocation {
            family: self.family,
            table,
            command,
            wait: self.wait,
            wait_interval: self.wait_interval,
            numeric: self.numeric,
            verbose: self.verbose,
            exact: self.exact,
            line_numbers: self.line_numbers,
            zero_after_list: self.zero_after_list,
            rule_number,
        })
    }

    /// The modules, in order, as matches; `-m tcp`/`-m udp` need their protocol.
    fn finish_modules(&mut self) -> Result<()> {
        let family = self.family;
        let rule = &mut self.rule;
        for m in std::mem::take(&mut self.modules) {
            let im = match m {
                Pending::Tcp(p) => IptMatch::Tcp(p),
                Pending::Udp(p) => IptMatch::Udp(p),
                Pending::Multiport(Some(mp)) => {
                    // tcp, udp, udplite, sctp, dccp: the protocols xt_multiport accepts;
                    // iptables' two refusals as libxt_multiport.c's check_proto words them.
                    match &rule.proto {
                        Some(p)
                            if !p.negated
                                && matches!(p.value.number(), 6 | 17 | 33 | 132 | 136) => {}
                        Some(p) if p.negated || p.value.number() != 0 => {
                            return Err(bad(
                                "multiport only works with TCP, UDP, UDPLITE, SCTP and DCCP",
                            ));
                        }
                        _ => {
                            return Err(bad("multiport needs `-p tcp', `-p udp', \
                                 `-p udplite', `-p sctp' or `-p dccp'"));
                        }
                    }
                    IptMatch::Multiport(mp)
                }
                Pending::Multiport(None) => return Err(bad("multiport expects an option")),
                Pending::Comment(Some(c)) => IptMatch::Comment(c),
                Pending::Comment(None) => {
                    return Err(bad("comment: option \"--comment\" must be specified"));
                }
                Pending::State(Some(s)) => IptMatch::State(s),
                Pending::State(None) => {
                    return Err(bad("state: option \"--state\" must be specified"));
                }
                Pending::Ext(p) => ext_match(&p, rule, family)?,
            };
            rule.matches.push(im);
        }
        for m in &rule.matches {
            // `-m tcp` alone is kept (iptables prints it back) but needs its protocol.
            if let IptMatch::Tcp(_) | IptMatch::Udp(_) = m {
                let want = if matches!(m, IptMatch::Tcp(_)) {
                    L4Proto::Tcp
                } else {
                    L4Proto::Udp
                };
                if !rule
                    .proto
                    .as_ref()
                    .is_some_and(|p| !p.negated && p.value == want)
                {
                    return Err(bad(format!("-m {want} needs `-p {want}'")));
                }
            }
        }
        Ok(())
    }

    /// `-j`/`-g` with its options, by the registry or by [`parse_target`].
    fn finish_target(&mut self) -> Result<()> {
        let family = self.family;
        self.rule.target = match self.target_name.take() {
            None => {
                if let Some((o, _)) = self.target_opts.first() {
                    return Err(unknown_option(o));
                }
                None
            }
            Some((name, goto)) => {
                let pending = self.ext_target.take();
                let parse = |rule: &IptRule| match &pending {
                    Some(p) => ext_target_of(p, rule, family),
                    None => parse_target(&name, goto, &self.target_opts, rule, family),
                };
                let target = parse(&self.rule)?;
                // A port given before `-p` is refused as iptables refuses it: parsed again
                // as the rule stood then (no protocol), the target must still be accepted.
                if self.nat_option_before_proto && self.rule.proto.is_some() {
                    let early = IptRule {
                        proto: None,
                        ..self.rule.clone()
                    };
                    if let Err(e) = parse(&early)
                        && e.to_string().contains(super::NAT_PORTS_NEED_PROTO)
                    {
                        return Err(e);
                    }
                }
                Some(target)
            }
        };
        Ok(())
    }
}

/// The command a letter and its arguments name, and the rule number of `-S/-L/-Z CHAIN N`.
fn command(
    letter: char,
    cargs: &[&str],
    rule: IptRule,
    family: Family,
) -> Result<(Command, Option<usize>)> {
    let chain = |i: usize| -> Result<String> {
        let c = cargs.get(i).copied().unwrap_or_default();
        validate_chain_name(c)?;
        Ok(c.to_string())
    };
    let index = |i: usize| -> Result<usize> {
        let s = cargs.get(i).copied().unwrap_or_default();
        match s.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(bad(format!("Invalid rule number `{s}'"))),
        }
    };
    let has_rule = rule != IptRule::default();
    let no_rule = |what: &str| -> Result<()> {
        if has_rule {
            Err(bad(format!(
                "Illegal option with {what}: rule options not allowed"
            )))
        } else {
            Ok(())
        }
    };
    let rule_number = match letter {
        'S' | 'L' | 'Z' if cargs.len() > 1 => Some(index(1)?),
        _ => None,
    };
    let command = match letter {
        'A' => Command::Append {
            chain: chain(0)?,
            rule,
        },
        'C' => Command::Check {
            chain: chain(0)?,
            rule,
        },
        'I' => {
            let idx = if cargs.len() > 1 { index(1)? } else { 1 };
            Command::Insert {
                chain: chain(0)?,
                index: idx,
                rule,
            }
        }
        'D' => {
            if cargs.len() > 1 {
                no_rule("-D with a rule number")?;
                Command::DeleteIndex {
                    chain: chain(0)?,
                    index: index(1)?,
                }
            } else {
                if !has_rule {
                    return Err(bad("-D needs a rule specification or a rule number"));
                }
                Command::Delete {
                    chain: chain(0)?,
                    rule,
                }
            }
        }
        'R' => Command::Replace {
            chain: chain(0)?,
            index: index(1)?,
            rule,
        },
        'N' => {
            no_rule("-N")?;
            let c = cargs.first().copied().unwrap_or_default().to_string();
            crate::limits::check_iptables_chain_name(crate::limits::NameDialect::IptablesNew, &c)?;
            if matches!(c.as_str(), "ACCEPT" | "DROP" | "RETURN" | "QUEUE") || is_known_target(&c) {
                return Err(bad(format!(
                    "chain name may not clash with target name `{c}'"
                )));
            }
            Command::NewChain(c)
        }
        'X' => {
            no_rule("-X")?;
            Command::DeleteChain(if cargs.is_empty() {
                None
            } else {
                Some(chain(0)?)
            })
        }
        'F' => {
            no_rule("-F")?;
            Command::Flush(if cargs.is_empty() {
                None
            } else {
                Some(chain(0)?)
            })
        }
        'Z' => {
            no_rule("-Z")?;
            Command::Zero(if cargs.is_empty() {
                None
            } else {
                Some(chain(0)?)
            })
        }
        'P' => {
            no_rule("-P")?;
            let policy = match cargs.get(1).copied() {
                Some("ACCEPT") => ChainPolicy::Accept,
                Some("DROP") => ChainPolicy::Drop,
                // iptables passes other names to the kernel, which refuses them: status 1.
                Some(p) => {
                    return Err(Error::Precondition(format!(
                        "policy `{p}': only ACCEPT and DROP are policies"
                    ))
                    .context(crate::ipt::messages::Msg::BadPolicy.text(family)));
                }
                None => return Err(bad("-P needs a chain and a policy")),
            };
            Command::Policy {
                chain: chain(0)?,
                policy,
            }
        }
        'E' => {
            no_rule("-E")?;
            Command::Rename {
                from: chain(0)?,
                to: chain(1)?,
            }
        }
        'S' => {
            no_rule("-S")?;
            Command::ListRules(if cargs.is_empty() {
                None
            } else {
                Some(chain(0)?)
            })
        }
        'L' => {
            no_rule("-L")?;
            Command::List(if cargs.is_empty() {
                None
            } else {
                Some(chain(0)?)
            })
        }
        _ => return Err(bad("no command specified")),
    };
    Ok((command, rule_number))
}

/// A rule given several addresses becomes one command per source and destination pair
/// (sources outer), as iptables' `add_entry`/`delete_entry`/`check_entry` loop over them;
/// `-R` needs one of each, and `!` goes with one address only (xshared.c's post-parse checks).
fn expand(command: Command, srcs: &[IpNet], dsts: &[IpNet]) -> Result<Command> {
    if srcs.len() <= 1 && dsts.len() <= 1 {
        return Ok(command);
    }
    if let Command::Replace { .. } = command {
        return Err(bad("Replacement rule does not specify a unique address"));
    }
    let rule_of = |c: &Command| match c {
        Command::Append { rule, .. }
        | Command::Insert { rule, .. }
        | Command::Delete { rule, .. }
        | Command::Check { rule, .. } => Some(rule.clone()),
        _ => None,
    };
    let Some(rule) = rule_of(&command) else {
        return Ok(command);
    };
    if rule.src.as_ref().is_some_and(|a| a.negated) || rule.dst.as_ref().is_some_and(|a| a.negated)
    {
        return Err(bad(
            "! not allowed with multiple source or destination IP addresses",
        ));
    }
    let one = |net: IpNet| super::options::address(net, false);
    let srcs: Vec<Option<Neg<IpNet>>> = if srcs.is_empty() {
        vec![rule.src.clone()]
    } else {
        srcs.iter().copied().map(one).collect()
    };
    let dsts: Vec<Option<Neg<IpNet>>> = if dsts.is_empty() {
        vec![rule.dst.clone()]
    } else {
        dsts.iter().copied().map(one).collect()
    };
    let mut each = Vec::with_capacity(srcs.len() * dsts.len());
    for s in &srcs {
        for d in &dsts {
            let mut c = command.clone();
            if let Command::Append { rule, .. }
            | Command::Insert { rule, .. }
            | Command::Delete { rule, .. }
            | Command::Check { rule, .. } = &mut c
            {
                rule.src = s.clone();
                rule.dst = d.clone();
            }
            each.push(c);
        }
    }
    Ok(Command::Expanded(each))
}

/// What iptables refuses once the command is known: `-i`/`-o` on the wrong built-in chain,
/// DROP in table nat.
/// `ifaces_given`: `-i` and `-o` were given (`-i +` is no match, and still refused there).
fn check_command(table: &str, command: &Command, ifaces_given: (bool, bool)) -> Result<()> {
    if let Command::Append { chain, rule }
    | Command::Insert { chain, rule, .. }
    | Command::Replace { chain, rule, .. }
    | Command::Delete { chain, rule }
    | Command::Check { chain, rule } = command
    {
        check_interfaces_for_chain(chain, rule, ifaces_given)?;
    }
    let drop_in_nat = match command {
        Command::Policy {
            policy: ChainPolicy::Drop,
            ..
        } => true,
        Command::Append { rule, .. }
        | Command::Insert { rule, .. }
        | Command::Replace { rule, .. }
        | Command::Delete { rule, .. }
        | Command::Check { rule, .. } => matches!(rule.target, Some(IptTarget::Drop)),
        _ => false,
    };
    if table == "nat" && drop_in_nat {
        return Err(bad(
            "The \"nat\" table is not intended for filtering, the use of DROP is therefore inhibited.",
        ));
    }
    Ok(())
}

/// iptables refuses `-o` on input hooks and `-i` on output hooks of built-in chains.
fn check_interfaces_for_chain(chain: &str, rule: &IptRule, given: (bool, bool)) -> Result<()> {
    if (rule.out_iface.is_some() || given.1) && matches!(chain, "INPUT" | "PREROUTING") {
        return Err(bad(format!("Can't use -o with {chain}")));
    }
    if (rule.in_iface.is_some() || given.0) && matches!(chain, "OUTPUT" | "POSTROUTING") {
        return Err(bad(format!("Can't use -i with {chain}")));
    }
    Ok(())
}
