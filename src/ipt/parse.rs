//! iptables' command line: global options, exactly one command, and a rule spec of `-s -d -i
//! -o -p`, `-m` modules with their options (tcp/udp load implicitly after `-p`), and a
//! target with its options. Errors name the offending option; nothing is sent for them.
//!
//! Over 600 lines: the option loop of one command line. It is to be split along the backend
//! seam of issue 14 (command grammar, address/port parsing, targets); extensions already live
//! in `ipt::ext`, one file each.

use crate::model::ChainPolicy;
use std::net::IpAddr;
use std::time::Duration;

use super::protocols;
use super::rule::{
    CtStates, IptMatch, IptRule, IptTarget, LogOpts, Multiport, MultiportDir, NatRange, Neg,
    PortsMatch, RejectWith,
};
use crate::error::{Error, Result};
use crate::lock::WaitPolicy;
use crate::model::{Family, Interface, IpNet, L4Proto, PortRange, validate_name};

/// One iptables invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub family: Family,
    pub table: String,
    pub command: Command,
    /// `-w [secs]`; without `-w` the bounded default ([`WaitPolicy::default_for_command`]);
    /// `-w 0` fails at once.
    pub wait: WaitPolicy,
    /// `-W usecs`: the lock poll interval.
    pub wait_interval: Option<Duration>,
    pub numeric: bool,
    pub verbose: bool,
    pub exact: bool,
    pub line_numbers: bool,
    /// `-L -Z`: zero the counters after listing them.
    pub zero_after_list: bool,
    /// `-S CHAIN N`, `-L CHAIN N`, `-Z CHAIN N`: the one rule the command is about.
    pub rule_number: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Append {
        chain: String,
        rule: IptRule,
    },
    Insert {
        chain: String,
        index: usize,
        rule: IptRule,
    },
    Delete {
        chain: String,
        rule: IptRule,
    },
    DeleteIndex {
        chain: String,
        index: usize,
    },
    Replace {
        chain: String,
        index: usize,
        rule: IptRule,
    },
    Check {
        chain: String,
        rule: IptRule,
    },
    NewChain(String),
    DeleteChain(Option<String>),
    Flush(Option<String>),
    Zero(Option<String>),
    Policy {
        chain: String,
        policy: ChainPolicy,
    },
    Rename {
        from: String,
        to: String,
    },
    ListRules(Option<String>),
    List(Option<String>),
}

impl Command {
    /// Whether it changes the ruleset (and so takes the xtables lock).
    pub fn mutates(&self) -> bool {
        !matches!(
            self,
            Command::ListRules(_) | Command::List(_) | Command::Check { .. }
        )
    }
}

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidInput(msg.into())
}

/// Which command letter a long or short option names, for "multiple commands" errors.
fn command_letter(opt: &str) -> Option<char> {
    Some(match opt {
        "-A" | "--append" => 'A',
        "-I" | "--insert" => 'I',
        "-D" | "--delete" => 'D',
        "-R" | "--replace" => 'R',
        "-C" | "--check" => 'C',
        "-N" | "--new-chain" => 'N',
        "-X" | "--delete-chain" => 'X',
        "-F" | "--flush" => 'F',
        "-Z" | "--zero" => 'Z',
        "-P" | "--policy" => 'P',
        "-E" | "--rename-chain" => 'E',
        "-S" | "--list-rules" => 'S',
        "-L" | "--list" => 'L',
        _ => return None,
    })
}

/// Splits `--opt=value` the way getopt_long accepts it.
fn split_long(arg: &str) -> (&str, Option<&str>) {
    match arg.strip_prefix("--").and_then(|_| arg.split_once('=')) {
        Some((o, v)) => (o, Some(v)),
        None => (arg, None),
    }
}

struct Args<'a> {
    args: &'a [String],
    pos: usize,
    /// A value given inline as `--opt=value`.
    inline: Option<&'a str>,
}

impl<'a> Args<'a> {
    fn next(&mut self) -> Option<&'a str> {
        let a = self.args.get(self.pos)?;
        self.pos += 1;
        Some(a.as_str())
    }
    fn peek(&self) -> Option<&'a str> {
        self.args.get(self.pos).map(String::as_str)
    }
    fn value(&mut self, opt: &str) -> Result<&'a str> {
        if let Some(v) = self.inline.take() {
            return Ok(v);
        }
        self.next()
            .ok_or_else(|| bad(format!("option \"{opt}\" requires an argument")))
    }
    /// An optional value: the next argument if it does not look like an option.
    fn optional_value(&mut self) -> Option<&'a str> {
        if let Some(v) = self.inline.take() {
            return Some(v);
        }
        match self.peek() {
            Some(v) if !v.starts_with('-') && v != "!" => self.next(),
            _ => None,
        }
    }
}

/// A module being filled in; options apply to the most recent module that knows them, as
/// iptables does.
#[derive(Debug)]
enum Pending {
    Tcp(PortsMatch),
    Udp(PortsMatch),
    Multiport(Option<Multiport>),
    Comment(Option<String>),
    State(Option<Neg<CtStates>>),
    /// A module of the extension registry ([`super::ext`]).
    Ext(super::ext::Pending),
}

/// Parses one iptables command line (without the program name). `default_family` is IPv6
/// when invoked as `ip6tables`/`xtnl6`.
pub fn parse(argv: &[String], default_family: Family) -> Result<Invocation> {
    let argv = &super::args::unbundle(argv);
    let mut a = Args {
        args: argv,
        pos: 0,
        inline: None,
    };
    let mut family = default_family;
    let mut table: Option<String> = None;
    let mut command: Option<(char, Vec<&str>)> = None;
    let mut wait = WaitPolicy::default_for_command()?;
    let mut wait_given = false;
    let mut wait_interval = None;
    let (mut numeric, mut verbose, mut exact, mut line_numbers) = (false, false, false, false);
    let mut zero_after_list = false;
    let mut rule = IptRule::default();
    let mut modules: Vec<Pending> = Vec::new();
    let mut target_name: Option<(String, bool)> = None; // (name, is goto)
    let mut target_opts: Vec<(String, String)> = Vec::new();
    let mut ext_target: Option<super::ext::Pending> = None;
    let mut negate = false;
    let set = |slot: &mut bool, name: &str| -> Result<()> {
        if std::mem::replace(slot, true) {
            return Err(bad(format!("multiple {name} flags not allowed")));
        }
        Ok(())
    };
    let (mut seen_s, mut seen_d, mut seen_i, mut seen_o, mut seen_p) =
        (false, false, false, false, false);

    while let Some(raw) = a.next() {
        if raw == "!" {
            if negate {
                return Err(bad("multiple consecutive ! not allowed"));
            }
            negate = true;
            continue;
        }
        let (opt, inline) = split_long(raw);
        a.inline = inline;
        let neg = std::mem::take(&mut negate);
        let no_neg = |neg: bool| -> Result<()> {
            if neg {
                Err(bad(format!("cannot have ! before {opt}")))
            } else {
                Ok(())
            }
        };

        if claim_ext(
            opt,
            neg,
            &mut a,
            &mut modules,
            &mut ext_target,
            &rule,
            family,
        )? {
            continue;
        }
        if let Some(letter) = command_letter(opt) {
            no_neg(neg)?;
            if let Some((prev, prev_args)) = &command {
                // `-L -Z` (either order) lists, then zeroes: iptables allows that pair.
                let pair = matches!((*prev, letter), ('L', 'Z') | ('Z', 'L'));
                if !pair {
                    return Err(bad(format!("Can't use -{letter} with -{prev}")));
                }
                zero_after_list = true;
                if letter == 'Z' {
                    // Keep `-L`'s chain; a chain after -Z names the same one.
                    let chain_arg = a.inline.take().or_else(|| match a.peek() {
                        Some(v) if !v.starts_with('-') && v != "!" => a.next(),
                        _ => None,
                    });
                    if prev_args.is_empty()
                        && let Some(c) = chain_arg
                    {
                        command = Some(('L', vec![c]));
                    }
                    continue;
                }
            }
            let mut cargs = Vec::new();
            // Each command takes its chain (and index / policy / new name) right after it.
            let (required, optional): (usize, usize) = match letter {
                'A' | 'C' | 'N' => (1, 0),
                'I' | 'D' => (1, 1),
                'R' | 'P' | 'E' => (2, 0),
                'X' | 'F' => (0, 1),
                'Z' | 'S' | 'L' => (0, 2),
                _ => (0, 0),
            };
            for _ in 0..required {
                cargs.push(a.value(opt)?);
            }
            for _ in 0..optional {
                let next = a.inline.take().or_else(|| match a.peek() {
                    Some(v) if !v.starts_with('-') && v != "!" => a.next(),
                    _ => None,
                });
                if let Some(v) = next {
                    cargs.push(v);
                }
            }
            if zero_after_list && letter == 'L' {
                // `-Z [chain] -L [chain]`: the listing's chain, or the one -Z named.
                let keep = command.take().map(|(_, a)| a).unwrap_or_default();
                command = Some(('L', if cargs.is_empty() { keep } else { cargs }));
                continue;
            }
            command = Some((letter, cargs));
            continue;
        }

        match opt {
            "-t" | "--table" => {
                no_neg(neg)?;
                if table.is_some() {
                    return Err(bad("The -t option cannot be used more than once"));
                }
                table = Some(a.value(opt)?.to_string());
            }
            "-4" | "--ipv4" => family = Family::Ipv4,
            "-6" | "--ipv6" => family = Family::Ipv6,
            "-w" | "--wait" => {
                wait_given = true;
                wait = match a.optional_value() {
                    None => WaitPolicy::Forever,
                    Some(s) => {
                        let secs: u64 = s
                            .parse()
                            .map_err(|_| bad(format!("wait seconds not numeric: \"{s}\"")))?;
                        if secs == 0 {
                            WaitPolicy::FailFast
                        } else {
                            WaitPolicy::Timeout(Duration::from_secs(secs))
                        }
                    }
                }
            }
            "-W" | "--wait-interval" => {
                let s = a.value(opt)?;
                let us: u64 = s.parse().map_err(|_| bad("wait interval not numeric"))?;
                if us > 999_999 {
                    return Err(bad(format!("too long usec wait {us} > 999999 usec")));
                }
                wait_interval = Some(Duration::from_micros(us));
            }
            "-n" | "--numeric" => numeric = true,
            "-v" | "--verbose" => verbose = true,
            "-x" | "--exact" => exact = true,
            "--line-numbers" => line_numbers = true,
            "-s" | "--source" | "--src" => {
                set(&mut seen_s, "-s")?;
                rule.src = Some(Neg::new(parse_net(a.value(opt)?, family)?, neg));
            }
            "-d" | "--destination" | "--dst" => {
                set(&mut seen_d, "-d")?;
                rule.dst = Some(Neg::new(parse_net(a.value(opt)?, family)?, neg));
            }
            "-i" | "--in-interface" => {
                set(&mut seen_i, "-i")?;
                rule.in_iface = Some(Neg::new(Interface::new(a.value(opt)?)?, neg));
            }
            "-o" | "--out-interface" => {
                set(&mut seen_o, "-o")?;
                rule.out_iface = Some(Neg::new(Interface::new(a.value(opt)?)?, neg));
            }
            "-p" | "--protocol" => {
                set(&mut seen_p, "-p")?;
                let v = a.value(opt)?;
                let n = protocols::number_of(v)
                    .ok_or_else(|| bad(format!("unknown protocol \"{v}\" specified")))?;
                if n == 0 {
                    if neg {
                        return Err(bad("rule would never match protocol"));
                    }
                } else {
                    rule.proto = Some(Neg::new(L4Proto::from_number(n), neg));
                }
            }
            "-m" | "--match" => {
                no_neg(neg)?;
                let name = a.value(opt)?;
                modules.push(match name {
                    "tcp" => Pending::Tcp(PortsMatch::default()),
                    "udp" => Pending::Udp(PortsMatch::default()),
                    "multiport" => Pending::Multiport(None),
                    "comment" => Pending::Comment(None),
                    "state" => Pending::State(None),
                    other => match super::ext::find(other, false, family) {
                        Some(e) => Pending::Ext(super::ext::Pending::new(e)),
                        None => {
                            return Err(bad(format!(
                                "Couldn't load match `{other}': xtnl supports -m tcp, udp, multiport, comment, state, {}",
                                super::ext::known_names(false).join(", ")
                            )));
                        }
                    },
                });
            }
            "-j" | "--jump" | "-g" | "--goto" => {
                no_neg(neg)?;
                if target_name.is_some() {
                    return Err(bad("multiple -j flags not allowed"));
                }
                target_name = Some((a.value(opt)?.to_string(), opt == "-g" || opt == "--goto"));
                ext_target = target_name
                    .as_ref()
                    .filter(|(_, goto)| !goto)
                    .and_then(|(n, _)| super::ext::find(n, true, family))
                    .map(super::ext::Pending::new);
            }
            "-f" | "--fragment" => {
                return Err(bad("option \"-f\" (fragments) is not supported by xtnl"));
            }
            "-c" | "--set-counters" => {
                no_neg(neg)?;
                rule.counters = Some(super::args::set_counters(a.value(opt)?, a.next())?);
            }
            "--sport" | "--source-port" | "--dport" | "--destination-port" => {
                let v = a.value(opt)?;
                let ports = parse_ports(v, opt)?;
                let is_src = opt == "--sport" || opt == "--source-port";
                let tcp_or_udp = find_ports_module(&mut modules, &rule, opt)?;
                let slot = if is_src {
                    &mut tcp_or_udp.sport
                } else {
                    &mut tcp_or_udp.dport
                };
                if slot.is_some() {
                    return Err(bad(format!("multiple {opt} flags not allowed")));
                }
                *slot = Some(Neg::new(ports, neg));
            }
            "--sports" | "--source-ports" | "--dports" | "--destination-ports" | "--ports" => {
                let dir = match opt {
                    "--sports" | "--source-ports" => MultiportDir::Source,
                    "--ports" => MultiportDir::Either,
                    _ => MultiportDir::Destination,
                };
                let v = a.value(opt)?;
                let slot = modules.iter_mut().rev().find_map(|m| match m {
                    Pending::Multiport(s) => Some(s),
                    _ => None,
                });
                let Some(slot) = slot else {
                    return Err(unknown_option(opt));
                };
                if slot.is_some() {
                    return Err(bad("multiport can only have one option"));
                }
                *slot = Some(Multiport {
                    dir,
                    ports: parse_port_list(v)?,
                    negated: neg,
                });
            }
            "--comment" => {
                no_neg(neg)?;
                let v = a.value(opt)?;
                if v.len() > 255 {
                    return Err(bad(format!(
                        "COMMENT must be shorter than 256 characters (it is {} bytes)",
                        v.len()
                    )));
                }
                if v.contains('\0') {
                    return Err(bad("comment holds a NUL byte"));
                }
                let slot = modules.iter_mut().rev().find_map(|m| match m {
                    Pending::Comment(s) => Some(s),
                    _ => None,
                });
                let Some(slot) = slot else {
                    return Err(unknown_option(opt));
                };
                if slot.is_some() {
                    return Err(bad("multiple --comment flags not allowed"));
                }
                *slot = Some(v.to_string());
            }
            "--state" => {
                let states = super::rule::parse_states(a.value(opt)?, false)?;
                let slot = modules.iter_mut().rev().find_map(|m| match m {
                    Pending::State(s) => Some(s),
                    _ => None,
                });
                let Some(slot) = slot else {
                    return Err(unknown_option(opt));
                };
                *slot = Some(Neg::new(states, neg));
            }
            "--to-destination" | "--to-source" | "--to-ports" | "--reject-with"
            | "--log-prefix" | "--log-level" => {
                no_neg(neg)?;
                let v = a.value(opt)?;
                target_opts.push((opt.to_string(), v.to_string()));
            }
            other if other.starts_with('-') => return Err(unknown_option(other)),
            other => return Err(bad(format!("Bad argument `{other}'"))),
        }
        if a.inline.is_some() {
            return Err(bad(format!("option \"{opt}\" doesn't allow an argument")));
        }
    }
    if negate {
        return Err(bad("! must come before an option"));
    }
    if wait_interval.is_some() && !wait_given {
        return Err(bad("--wait-interval only makes sense with --wait\n"));
    }

    for m in modules {
        rule.matches.push(match m {
            Pending::Tcp(p) => IptMatch::Tcp(p),
            Pending::Udp(p) => IptMatch::Udp(p),
            Pending::Multiport(Some(mp)) => {
                // tcp, udp, udplite, sctp, dccp: the protocols xt_multiport accepts.
                if !rule.proto.as_ref().is_some_and(|p| {
                    !p.negated && matches!(p.value.number(), 6 | 17 | 33 | 132 | 136)
                }) {
                    return Err(bad("multiport needs `-p tcp' or `-p udp'"));
                }
                IptMatch::Multiport(mp)
            }
            Pending::Multiport(None) => return Err(bad("multiport expects an option")),
            Pending::Comment(Some(c)) => IptMatch::Comment(c),
            Pending::Comment(None) => {
                return Err(bad("comment: option \"--comment\" must be specified"));
            }
            Pending::State(Some(s)) => IptMatch::State(s),
            Pending::State(None) => return Err(bad("state: option \"--state\" must be specified")),
            Pending::Ext(p) => ext_match(&p, &rule, family)?,
        });
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
    rule.target = match target_name {
        None => {
            if let Some((o, _)) = target_opts.first() {
                return Err(unknown_option(o));
            }
            None
        }
        Some((name, goto)) => match ext_target {
            Some(p) => Some(ext_target_of(&p, &rule, family)?),
            None => Some(parse_target(&name, goto, &target_opts, &rule, family)?),
        },
    };

    let Some((letter, cargs)) = command else {
        return Err(bad("no command specified"));
    };
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
    let table = table.unwrap_or_else(|| "filter".into());
    validate_name("table", &table)?;
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
            let raw = cargs.first().copied().unwrap_or_default();
            if raw.starts_with('-') {
                return Err(bad("chain name not allowed to start with `-'"));
            }
            let c = chain(0)?;
            if c.starts_with('!') {
                return Err(bad(format!("Invalid chain name `{c}'")));
            }
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
                    .context(super::messages::Msg::BadPolicy.text(family)));
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
    if let Command::Append { chain, rule }
    | Command::Insert { chain, rule, .. }
    | Command::Replace { chain, rule, .. }
    | Command::Delete { chain, rule }
    | Command::Check { chain, rule } = &command
    {
        check_interfaces_for_chain(chain, rule)?;
    }
    let drop_in_nat = match &command {
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
    Ok(Invocation {
        family,
        table,
        command,
        wait,
        wait_interval,
        numeric,
        verbose,
        exact,
        line_numbers,
        zero_after_list,
        rule_number,
    })
}

/// Splits a command line the way iptables-restore splits a rule line (and a shell would for
/// these): whitespace separates words, double quotes group, and inside quotes a backslash
/// takes the next character literally.
pub fn split_words(line: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let (mut cur, mut quoted, mut any) = (String::new(), false, false);
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            '\\' if quoted => match chars.next() {
                Some(e) => cur.push(e),
                None => return Err(bad("a backslash ends the line")),
            },
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if quoted {
        return Err(bad("unterminated quote"));
    }
    if any {
        out.push(cur);
    }
    Ok(out)
}

fn unknown_option(opt: &str) -> Error {
    bad(format!("unknown option \"{opt}\""))
}

fn is_known_target(name: &str) -> bool {
    matches!(
        name,
        "DNAT" | "SNAT" | "MASQUERADE" | "REDIRECT" | "REJECT" | "LOG"
    ) || super::ext::known_names(true).contains(&name)
}

/// The extension-registry hook: an option the loaded target or the most recent registry
/// module knows goes to it (with its arguments); an option of the module `-p` names
/// (`-p icmp --icmp-type`) loads that module implicitly, as iptables does.
fn claim_ext(
    opt: &str,
    neg: bool,
    a: &mut Args<'_>,
    modules: &mut Vec<Pending>,
    target: &mut Option<super::ext::Pending>,
    rule: &IptRule,
    family: Family,
) -> Result<bool> {
    let inline = a.inline.take();
    let mut next = || a.next();
    if let Some(t) = target.as_mut()
        && let Some(o) = t.knows(opt)
    {
        t.take(o, neg, inline, &mut next)?;
        return Ok(true);
    }
    for m in modules.iter_mut().rev() {
        if let Pending::Ext(p) = m
            && let Some(o) = p.knows(opt)
        {
            p.take(o, neg, inline, &mut next)?;
            return Ok(true);
        }
    }
    let implicit = rule
        .proto
        .as_ref()
        .filter(|p| !p.negated)
        .and_then(|p| super::ext::implicit(p.value.number(), family));
    if let Some(e) = implicit {
        let mut p = super::ext::Pending::new(e);
        if let Some(o) = p.knows(opt) {
            // Ports alone stay with the tcp module here; `--syn`/`--tcp-flags`/
            // `--tcp-option` turn the tcp module already there into the registry's.
            let tcp_ports = matches!(
                opt,
                "--sport" | "--dport" | "--source-port" | "--destination-port"
            );
            if e.name() == "tcp" && tcp_ports {
                a.inline = inline;
                return Ok(false);
            }
            let at = modules.iter().rposition(|m| matches!(m, Pending::Tcp(_)));
            if e.name() == "tcp"
                && let Some(i) = at
                && let Pending::Tcp(ports) = &modules[i]
            {
                p.given = super::ext::tcp_given_of(ports);
                p.take(o, neg, inline, &mut next)?;
                modules[i] = Pending::Ext(p);
                return Ok(true);
            }
            p.take(o, neg, inline, &mut next)?;
            modules.push(Pending::Ext(p));
            return Ok(true);
        }
    }
    a.inline = inline;
    Ok(false)
}

/// A registry module's payload, in the form decoding gives it (a pure `--ctstate` is
/// `IptMatch::Conntrack`), so that `-C`/`-D` compare like with like.
fn ext_match(p: &super::ext::Pending, rule: &IptRule, family: Family) -> Result<IptMatch> {
    let x = p.finish(&super::ext::Ctx { family, rule })?;
    let wire = crate::wire::expr::Match {
        name: x.name,
        rev: x.rev,
        info: x.info,
    };
    super::xt_bridge::match_from_xt(&wire, family).ok_or_else(|| {
        bad(format!(
            "{}: these options give a payload xtnl cannot print back",
            p.ext.name()
        ))
    })
}

fn ext_target_of(p: &super::ext::Pending, rule: &IptRule, family: Family) -> Result<IptTarget> {
    let x = p.finish(&super::ext::Ctx { family, rule })?;
    let wire = crate::wire::expr::Target {
        name: x.name,
        rev: x.rev,
        info: x.info,
    };
    super::xt_bridge::target_from_xt(&wire, family).ok_or_else(|| {
        bad(format!(
            "{}: these options give a payload xtnl cannot print back",
            p.ext.name()
        ))
    })
}

/// iptables' chain-name limit (XT_EXTENSION_MAXNAMELEN - 1 = 28) and no spaces.
pub(crate) fn validate_chain_name(c: &str) -> Result<()> {
    if c.is_empty() {
        return Err(bad("chain name expected"));
    }
    if c.len() > 28 {
        return Err(bad(format!(
            "chain name `{c}' too long (must be under 29 chars)"
        )));
    }
    if c.chars().any(|ch| ch.is_whitespace() || ch.is_control()) {
        return Err(bad(format!("Invalid chain name `{c}'")));
    }
    Ok(())
}

/// iptables refuses `-o` on input hooks and `-i` on output hooks of built-in chains.
fn check_interfaces_for_chain(chain: &str, rule: &IptRule) -> Result<()> {
    if rule.out_iface.is_some() && matches!(chain, "INPUT" | "PREROUTING") {
        return Err(bad(format!("Can't use -o with {chain}")));
    }
    if rule.in_iface.is_some() && matches!(chain, "OUTPUT" | "POSTROUTING") {
        return Err(bad(format!("Can't use -i with {chain}")));
    }
    Ok(())
}

/// The tcp/udp module a `--sport/--dport` belongs to: the last explicit one, or the one
/// `-p tcp|udp` loads implicitly (created here, at the point of first use).
fn find_ports_module<'m>(
    modules: &'m mut Vec<Pending>,
    rule: &IptRule,
    opt: &str,
) -> Result<&'m mut PortsMatch> {
    let idx = modules
        .iter()
        .rposition(|m| matches!(m, Pending::Tcp(_) | Pending::Udp(_)));
    let idx = match idx {
        Some(i) => i,
        None => {
            let implicit = match rule.proto.as_ref() {
                Some(p) if !p.negated && p.value == L4Proto::Tcp => {
                    Pending::Tcp(PortsMatch::default())
                }
                Some(p) if !p.negated && p.value == L4Proto::Udp => {
                    Pending::Udp(PortsMatch::default())
                }
                _ => return Err(unknown_option(opt)),
            };
            modules.push(implicit);
            modules.len() - 1
        }
    };
    match &mut modules[idx] {
        Pending::Tcp(p) | Pending::Udp(p) => Ok(p),
        _ => Err(unknown_option(opt)),
    }
}

fn parse_net(s: &str, family: Family) -> Result<IpNet> {
    if s.contains(',') {
        return Err(bad(format!(
            "multiple addresses in `{s}' are not supported by xtnl; give one rule per address"
        )));
    }
    let net: IpNet = super::args::normalize_net(s, family).parse().map_err(|_| {
        bad(format!(
            "host/network `{}' not found",
            super::args::address_part(s)
        ))
    })?;
    if net.is_ipv4() != (family != Family::Ipv6) {
        return Err(bad(format!(
            "host/network `{s}' is not an {} address",
            if family == Family::Ipv6 {
                "IPv6"
            } else {
                "IPv4"
            }
        )));
    }
    Ok(net)
}

/// A port number or service name.
fn port(s: &str) -> Result<u16> {
    if let Ok(n) = s.parse::<u16>() {
        return Ok(n);
    }
    services(s).ok_or_else(|| bad(format!("invalid port/service `{s}' specified")))
}

fn services(name: &str) -> Option<u16> {
    let text = std::fs::read_to_string("/etc/services").ok()?;
    text.lines().find_map(|l| {
        let l = l.split('#').next()?;
        let mut f = l.split_whitespace();
        let n = f.next()?;
        let port = f.next()?.split('/').next()?.parse().ok()?;
        (n == name || f.any(|alias| alias == name)).then_some(port)
    })
}

/// `p`, `a:b`, `a:` (to 65535) or `:b` (from 0), as tcp/udp `--sport/--dport` take them.
pub(crate) fn parse_ports(s: &str, opt: &str) -> Result<PortRange> {
    let (a, b) = match s.split_once(':') {
        Some((a, b)) => (
            if a.is_empty() { 0 } else { port(a)? },
            if b.is_empty() { 65535 } else { port(b)? },
        ),
        None => {
            let p = port(s)?;
            (p, p)
        }
    };
    PortRange::new(a, b).map_err(|_| {
        bad(format!(
            "invalid portrange ({s}) specified for {opt}: the first port is higher than the second"
        ))
    })
}

/// multiport's list: up to 15 ports, a range counting as two.
fn parse_port_list(s: &str) -> Result<Vec<PortRange>> {
    let mut out = Vec::new();
    let mut slots = 0;
    for item in s.split(',') {
        let r = match item.split_once(':') {
            Some((a, b)) => PortRange::new(port(a)?, port(b)?)
                .map_err(|_| bad(format!("invalid portrange specified: {item}")))?,
            None => PortRange::single(port(item)?),
        };
        slots += if r.is_single() { 1 } else { 2 };
        out.push(r);
    }
    if slots > 15 {
        return Err(bad(
            "too many ports specified (multiport takes at most 15, a range counting as two)",
        ));
    }
    Ok(out)
}

/// `[addr[-addr]][:port[-port]]`, IPv6 addresses in brackets when a port follows.
pub(crate) fn parse_nat_range(s: &str, family: Family, opt: &str) -> Result<NatRange> {
    let err = || bad(format!("Bad IP address \"{s}\" for {opt}"));
    let (addrs, ports) = if let Some(rest) = s.strip_prefix('[') {
        let (inside, after) = rest.split_once(']').ok_or_else(err)?;
        (inside, after.strip_prefix(':'))
    } else if family == Family::Ipv6 {
        (s, None)
    } else {
        match s.split_once(':') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        }
    };
    let ip = |t: &str| -> Result<IpAddr> {
        let a: IpAddr = t.parse().map_err(|_| err())?;
        if a.is_ipv4() != (family != Family::Ipv6) {
            return Err(err());
        }
        Ok(a)
    };
    let (addr_min, addr_max) = if addrs.is_empty() {
        (None, None)
    } else {
        match addrs.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (ip(a)?, ip(b)?);
                // The kernel takes a reversed range and then maps nothing sensible.
                if a > b {
                    return Err(bad(format!(
                        "address range `{addrs}' for {opt} is reversed: {a} is higher than {b}"
                    )));
                }
                (Some(a), Some(b))
            }
            None => (Some(ip(addrs)?), None),
        }
    };
    let ports = match ports {
        None => None,
        Some(p) => Some(nat_ports(
            match p.split_once('-') {
                Some((a, b)) => PortRange::new(port(a)?, port(b)?)
                    .map_err(|_| bad(format!("Port range `{p}' invalid")))?,
                None => PortRange::single(port(p)?),
            },
            opt,
        )?),
    };
    if addr_min.is_none() && ports.is_none() {
        return Err(err());
    }
    Ok(NatRange {
        addr_min,
        addr_max,
        ports,
    })
}

pub(crate) fn parse_to_ports(s: &str) -> Result<PortRange> {
    let range = match s.split_once('-') {
        Some((a, b)) => {
            PortRange::new(port(a)?, port(b)?).map_err(|_| bad(format!("Port range `{s}' invalid")))
        }
        None => Ok(PortRange::single(port(s)?)),
    }?;
    nat_ports(range, "--to-ports")
}

/// A NAT rewrites to these ports. Port 0 is accepted, as iptables-nft 1.8.9 and the kernel
/// accept it (`REDIRECT --to-ports 0` is in scripts); a drop-in refuses nothing iptables
/// takes.
fn nat_ports(range: PortRange, _opt: &str) -> Result<PortRange> {
    Ok(range)
}

fn parse_target(
    name: &str,
    goto: bool,
    opts: &[(String, String)],
    rule: &IptRule,
    family: Family,
) -> Result<IptTarget> {
    let allowed: &[&str] = match name {
        "DNAT" => &["--to-destination"],
        "SNAT" => &["--to-source"],
        "MASQUERADE" | "REDIRECT" => &["--to-ports"],
        "REJECT" => &["--reject-with"],
        "LOG" => &["--log-prefix", "--log-level"],
        _ => &[],
    };
    for (i, (o, _)) in opts.iter().enumerate() {
        if !allowed.contains(&o.as_str()) {
            return Err(unknown_option(o));
        }
        super::args::once(name, o, &opts[..i])?;
    }
    let get = |o: &str| {
        opts.iter()
            .rev()
            .find(|(k, _)| k == o)
            .map(|(_, v)| v.as_str())
    };
    let needs_ports_proto = |what: &str| -> Result<()> {
        if rule
            .proto
            .as_ref()
            .is_some_and(|p| !p.negated && p.value.has_ports())
        {
            Ok(())
        } else {
            Err(bad(format!("{what}: a port needs `-p tcp' or `-p udp'")))
        }
    };
    if goto {
        validate_chain_name(name)?;
        if is_known_target(name) || matches!(name, "ACCEPT" | "DROP" | "RETURN") {
            return Err(bad(format!("goto `{name}' is not a chain")));
        }
        return Ok(IptTarget::Goto(name.to_string()));
    }
    Ok(match name {
        "ACCEPT" => IptTarget::Accept,
        "DROP" => IptTarget::Drop,
        "RETURN" => IptTarget::Return,
        "DNAT" | "SNAT" => {
            let opt = if name == "DNAT" {
                "--to-destination"
            } else {
                "--to-source"
            };
            let v = get(opt)
                .ok_or_else(|| bad(format!("{name}: option \"{opt}\" must be specified")))?;
            let r = parse_nat_range(v, family, opt)?;
            if r.ports.is_some() {
                needs_ports_proto(name)?;
            }
            if name == "DNAT" {
                IptTarget::Dnat(r)
            } else {
                IptTarget::Snat(r)
            }
        }
        "MASQUERADE" | "REDIRECT" => {
            let p = get("--to-ports").map(parse_to_ports).transpose()?;
            if p.is_some() {
                needs_ports_proto(name)?;
            }
            if name == "MASQUERADE" {
                IptTarget::Masquerade(p)
            } else {
                IptTarget::Redirect(p)
            }
        }
        "REJECT" => {
            let with = match get("--reject-with") {
                Some(w) => RejectWith::parse(w, family)?,
                None => RejectWith::default_for(family),
            };
            if with == RejectWith::TcpReset
                && !rule
                    .proto
                    .as_ref()
                    .is_some_and(|p| !p.negated && p.value == L4Proto::Tcp)
            {
                return Err(bad("REJECT: TCP_RESET invalid for non-tcp"));
            }
            IptTarget::Reject(with)
        }
        "LOG" => {
            let prefix = get("--log-prefix")
                .filter(|p| !p.is_empty())
                .map(str::to_string);
            if let Some(p) = &prefix {
                if p.len() > LogOpts::MAX_PREFIX {
                    return Err(bad(format!(
                        "Maximum prefix length {} for --log-prefix",
                        LogOpts::MAX_PREFIX
                    )));
                }
                if p.contains('\0') {
                    return Err(bad("--log-prefix holds a NUL byte"));
                }
            }
            let level = match get("--log-level") {
                None => LogOpts::DEFAULT_LEVEL,
                Some(l) => log_level(l)?,
            };
            IptTarget::Log(LogOpts { prefix, level })
        }
        chain => {
            validate_chain_name(chain)?;
            if chain.starts_with('-') {
                return Err(bad(format!("Invalid target name `{chain}'")));
            }
            IptTarget::Jump(chain.to_string())
        }
    })
}

pub(crate) fn log_level(s: &str) -> Result<u8> {
    const NAMES: [&str; 8] = [
        "emerg", "alert", "crit", "error", "warning", "notice", "info", "debug",
    ];
    if let Ok(n) = s.parse::<u8>() {
        if n <= 7 {
            return Ok(n);
        }
    }
    NAMES
        .iter()
        .position(|n| {
            *n == s
                || (s == "panic" && *n == "emerg")
                || (s == "warn" && *n == "warning")
                || (s == "err" && *n == "error")
        })
        .map(|i| i as u8)
        .ok_or_else(|| bad(format!("log-level `{s}' unknown")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Invocation> {
        let args: Vec<String> = split_words(s)?;
        parse(&args, Family::Ipv4)
    }

    fn spec(s: &str) -> String {
        match p(s).unwrap().command {
            Command::Append { chain, rule } | Command::Insert { chain, rule, .. } => {
                super::super::print::append_line(&chain, &rule, false)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nat_host_commands_parse_in_any_option_order() {
        let s = spec(
            "--insert vcld-5205 --table nat --in-interface eth1 --protocol tcp --match comment --comment \"VCL: forward eth1:tcp/50443 --> 10.1.2.3:3389\" --match tcp --destination-port 50443 --jump DNAT --to-destination 10.1.2.3:3389",
        );
        assert_eq!(
            s,
            "-A vcld-5205 -i eth1 -p tcp -m comment --comment \"VCL: forward eth1:tcp/50443 --> 10.1.2.3:3389\" -m tcp --dport 50443 -j DNAT --to-destination 10.1.2.3:3389"
        );
        let s = spec(
            "--insert vcl-nat_host --table filter --destination 152.1.1.1 --in-interface eth1 --jump ACCEPT --protocol tcp --match comment --comment \"c\" --match multiport --destination-ports 5700:6500,9696:9701,49152:65535 --match state --state NEW,RELATED,ESTABLISHED",
        );
        assert_eq!(
            s,
            "-A vcl-nat_host -d 152.1.1.1/32 -i eth1 -p tcp -m comment --comment c -m multiport --dports 5700:6500,9696:9701,49152:65535 -m state --state NEW,RELATED,ESTABLISHED -j ACCEPT"
        );
        let s = spec(
            "--insert vcl-nat_host --table nat ! --destination 10.0.0.0/20 --jump MASQUERADE --out-interface eth1",
        );
        assert_eq!(s, "-A vcl-nat_host ! -d 10.0.0.0/20 -o eth1 -j MASQUERADE");
    }

    #[test]
    fn implicit_tcp_match_goes_where_its_first_option_is() {
        assert_eq!(
            spec("-A INPUT -p tcp --dport 80 -m comment --comment x -j DROP"),
            "-A INPUT -p tcp -m tcp --dport 80 -m comment --comment x -j DROP"
        );
        assert_eq!(
            spec("-A INPUT -p tcp ! --sport 1:1024 -j ACCEPT"),
            "-A INPUT -p tcp -m tcp ! --sport 1:1024 -j ACCEPT"
        );
    }

    #[test]
    fn commands_and_errors() {
        assert!(
            matches!(p("-t nat -N vcld-1").unwrap().command, Command::NewChain(c) if c == "vcld-1")
        );
        assert!(matches!(p("-F").unwrap().command, Command::Flush(None)));
        assert!(matches!(
            p("-I INPUT 3 -j ACCEPT").unwrap().command,
            Command::Insert { index: 3, .. }
        ));
        assert!(matches!(
            p("-D INPUT 2").unwrap().command,
            Command::DeleteIndex { index: 2, .. }
        ));
        assert_eq!(p("-w -F").unwrap().wait, WaitPolicy::Forever);
        assert_eq!(
            p("-w 5 -F").unwrap().wait,
            WaitPolicy::Timeout(Duration::from_secs(5))
        );
        assert_eq!(p("-F -w").unwrap().wait, WaitPolicy::Forever);
        for (cmd, needle) in [
            (
                "-A INPUT --dport 80 -j ACCEPT",
                "unknown option \"--dport\"",
            ),
            ("-A INPUT -p tcp --bogus", "unknown option \"--bogus\""),
            ("-A INPUT -F", "Can't use -F with -A"),
            ("-A INPUT -o eth0 -j ACCEPT", "Can't use -o with INPUT"),
            (
                "-A INPUT -p tcp --dport 65536 -j ACCEPT",
                "invalid port/service `65536'",
            ),
            (
                "-A INPUT -p tcp --dport 2000:1000 -j ACCEPT",
                "invalid portrange",
            ),
            (
                "-A INPUT -s 300.1.1.1 -j ACCEPT",
                "host/network `300.1.1.1' not found",
            ),
            ("-A INPUT -m foo -j ACCEPT", "Couldn't load match `foo'"),
            ("-A INPUT -j DNAT", "--to-destination\" must be specified"),
            (
                "-A INPUT -j REJECT --reject-with tcp-reset",
                "TCP_RESET invalid",
            ),
            ("-N ACCEPT", "clash"),
            (
                "-A INPUT -m multiport --dports 1,2 -j ACCEPT",
                "multiport needs",
            ),
            ("-A", "requires an argument"),
            ("", "no command"),
        ] {
            let err = p(cmd).unwrap_err();
            assert!(err.to_string().contains(needle), "{cmd}: {err}");
            assert_eq!(err.exit_status(), 2, "{cmd}");
        }
    }
}
