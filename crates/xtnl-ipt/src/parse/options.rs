//! Reading the options of one command line, one function per option family: the command
//! letters, the global options, the rule spec proper (`-s -d -i -o -p -c`), the modules and
//! their options, the target and its options. An option the loaded extensions know goes to
//! them first ([`Parser::claim_ext`]).

use super::*;
use crate::ipt::ext;

/// Splits `--opt=value` the way getopt_long accepts it.
pub(super) fn split_long(arg: &str) -> (&str, Option<&str>) {
    match arg.strip_prefix("--").and_then(|_| arg.split_once('=')) {
        Some((o, v)) => (o, Some(v)),
        None => (arg, None),
    }
}

pub(super) struct Args<'a> {
    args: &'a [&'a str],
    pos: usize,
    /// A value given inline as `--opt=value`.
    inline: Option<&'a str>,
}

impl<'a> Args<'a> {
    fn next(&mut self) -> Option<&'a str> {
        let a = self.args.get(self.pos)?;
        self.pos += 1;
        Some(a)
    }
    fn peek(&self) -> Option<&'a str> {
        self.args.get(self.pos).copied()
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

/// The state of one command line while its options are read.
pub(super) struct Parser<'a> {
    pub(super) a: Args<'a>,
    pub(super) family: Family,
    pub(super) table: Option<String>,
    pub(super) command: Option<(char, Vec<&'a str>)>,
    pub(super) wait: WaitPolicy,
    pub(super) wait_given: bool,
    pub(super) wait_interval: Option<Duration>,
    pub(super) numeric: bool,
    pub(super) verbose: bool,
    pub(super) exact: bool,
    pub(super) line_numbers: bool,
    pub(super) zero_after_list: bool,
    pub(super) rule: IptRule,
    pub(super) modules: Vec<Pending>,
    /// `-j NAME` or `-g NAME`: (name, is goto).
    pub(super) target_name: Option<(String, bool)>,
    pub(super) target_opts: Vec<(String, String)>,
    pub(super) ext_target: Option<ext::Pending>,
    /// A NAT target's address/port option came before any `-p`: iptables checks a port's
    /// protocol while it parses the option (libxt_NAT.c), so a later `-p` does not help.
    pub(super) nat_option_before_proto: bool,
    /// Every address of `-s a,b,...` and `-d ...` (the rule holds the first).
    pub(super) srcs: Vec<IpNet>,
    pub(super) dsts: Vec<IpNet>,
    /// `-s -d -i -o -p` seen, each at most once.
    pub(super) seen: [bool; 5],
}

/// An address of `-s`/`-d`: none at all when it is `/0` and not inverted, as iptables
/// writes and prints it (nft-ipv4.c adds no match for a zero address and mask; save prints
/// none).
pub(super) fn address(net: IpNet, neg: bool) -> Option<Neg<IpNet>> {
    (neg || net.mask_octets().iter().any(|b| *b != 0)).then(|| Neg::new(net, neg))
}

/// Whether `opt` is a short option (`-X`) whose letter is none of `letters`: an option
/// family that knows only those short options answers it without comparing it with each of
/// its strings (a `match` of a word against strings calls `memcmp` for each one of its
/// length).
fn other_short(opt: &str, letters: &[u8]) -> bool {
    matches!(opt.as_bytes(), [b'-', c] if !letters.contains(c))
}

/// `!` before an option that cannot be negated.
fn no_neg(neg: bool, opt: &str) -> Result<()> {
    if neg {
        Err(bad(format!("cannot have ! before {opt}")))
    } else {
        Ok(())
    }
}

impl<'a> Parser<'a> {
    pub(super) fn new(args: &'a [&'a str], family: Family, wait: WaitPolicy) -> Self {
        Parser {
            a: Args {
                args,
                pos: 0,
                inline: None,
            },
            family,
            table: None,
            command: None,
            wait,
            wait_given: false,
            wait_interval: None,
            numeric: false,
            verbose: false,
            exact: false,
            line_numbers: false,
            zero_after_list: false,
            rule: IptRule::default(),
            modules: Vec::new(),
            target_name: None,
            target_opts: Vec::new(),
            ext_target: None,
            nat_option_before_proto: false,
            srcs: Vec::new(),
            dsts: Vec::new(),
            seen: [false; 5],
        }
    }

    /// Reads every option; each goes to the first family that knows it.
    pub(super) fn read_options(&mut self) -> Result<()> {
        let mut negate = false;
        while let Some(raw) = self.a.next() {
            if raw == "!" {
                if negate {
                    return Err(bad("multiple consecutive ! not allowed"));
                }
                negate = true;
                continue;
            }
            let (opt, inline) = split_long(raw);
            self.a.inline = inline;
            let neg = std::mem::take(&mut negate);
            if matches!(opt, "--to-destination" | "--to-source" | "--to-ports")
                && self.rule.proto.is_none()
            {
                self.nat_option_before_proto = true;
            }
            // Extensions and commands take their own arguments, inline ones included.
            if self.claim_ext(opt, neg)? || self.command_option(opt, neg)? {
                continue;
            }
            let known = self.global_option(opt, neg)?
                || self.rule_option(opt, neg)?
                || self.module_option(opt, neg)?
                || self.target_option(opt, neg)?;
            if !known {
                return Err(if opt.starts_with('-') {
                    unknown_option(opt)
                } else {
                    bad(format!("Bad argument `{opt}'"))
                });
            }
            if self.a.inline.is_some() {
                return Err(bad(format!("option \"{opt}\" doesn't allow an argument")));
            }
        }
        if negate {
            return Err(bad("! must come before an option"));
        }
        if self.wait_interval.is_some() && !self.wait_given {
            return Err(bad("--wait-interval only makes sense with --wait\n"));
        }
        Ok(())
    }

    /// `-A -I -D -R -C -N -X -F -Z -P -E -S -L` with the chain (and index, policy or new
    /// name) right after them; `-L -Z` is the one pair iptables allows.
    fn command_option(&mut self, opt: &str, neg: bool) -> Result<bool> {
        let Some(letter) = command_letter(opt) else {
            return Ok(false);
        };
        let a = &mut self.a;
        no_neg(neg, opt)?;
        if let Some((prev, prev_args)) = &self.command {
            // `-L -Z` (either order) lists, then zeroes: iptables allows that pair.
            let pair = matches!((*prev, letter), ('L', 'Z') | ('Z', 'L'));
            if !pair {
                return Err(bad(format!("Can't use -{letter} with -{prev}")));
            }
            self.zero_after_list = true;
            if letter == 'Z' {
                // Keep `-L`'s chain; a chain after -Z names the same one.
                let chain_arg = a.inline.take().or_else(|| match a.peek() {
                    Some(v) if !v.starts_with('-') && v != "!" => a.next(),
                    _ => None,
                });
                if prev_args.is_empty()
                    && let Some(c) = chain_arg
                {
                    self.command = Some(('L', vec![c]));
                }
                return Ok(true);
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
        if self.zero_after_list && letter == 'L' {
            // `-Z [chain] -L [chain]`: the listing's chain, or the one -Z named.
            let keep = self.command.take().map(|(_, a)| a).unwrap_or_default();
            self.command = Some(('L', if cargs.is_empty() { keep } else { cargs }));
            return Ok(true);
        }
        self.command = Some((letter, cargs));
        Ok(true)
    }

    /// `-t -4 -6 -w -W -n -v -x --line-numbers`.
    fn global_option(&mut self, opt: &str, neg: bool) -> Result<bool> {
        if other_short(opt, b"t46wWnvx") {
            return Ok(false);
        }
        match opt {
            "-t" | "--table" => {
                no_neg(neg, opt)?;
                if self.table.is_some() {
                    return Err(bad("The -t option cannot be used more than once"));
                }
                self.table = Some(self.a.value(opt)?.to_string());
            }
            "-4" | "--ipv4" => self.family = Family::Ipv4,
            "-6" | "--ipv6" => self.family = Family::Ipv6,
            "-w" | "--wait" => {
                self.wait_given = true;
                self.wait = match self.a.optional_value() {
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
                let s = self.a.value(opt)?;
                let us: u64 = s.parse().map_err(|_| bad("wait interval not numeric"))?;
                if us > 999_999 {
                    return Err(bad(format!("too long usec wait {us} > 999999 usec")));
                }
                self.wait_interval = Some(Duration::from_micros(us));
            }
            "-n" | "--numeric" => self.numeric = true,
            "-v" | "--verbose" => self.verbose = true,
            "-x" | "--exact" => self.exact = true,
            "--line-numbers" => self.line_numbers = true,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `-s -d -i -o -p` (each at most once, each negatable), `-f`, `-c`.
    fn rule_option(&mut self, opt: &str, neg: bool) -> Result<bool> {
        if other_short(opt, b"sdiopfc") {
            return Ok(false);
        }
        let slot = match opt {
            "-s" | "--source" | "--src" => Some((0, "-s")),
            "-d" | "--destination" | "--dst" => Some((1, "-d")),
            "-i" | "--in-interface" => Some((2, "-i")),
            "-o" | "--out-interface" => Some((3, "-o")),
            "-p" | "--protocol" => Some((4, "-p")),
            _ => None,
        };
        if let Some((k, name)) = slot
            && std::mem::replace(&mut self.seen[k], true)
        {
            return Err(bad(format!("multiple {name} flags not allowed")));
        }
        let family = self.family;
        let rule = &mut self.rule;
        match opt {
            "-s" | "--source" | "--src" => {
                self.srcs = parse_nets(self.a.value(opt)?, family)?;
                rule.src = address(self.srcs[0], neg);
            }
            "-d" | "--destination" | "--dst" => {
                self.dsts = parse_nets(self.a.value(opt)?, family)?;
                rule.dst = address(self.dsts[0], neg);
            }
            "-i" | "--in-interface" => {
                rule.in_iface = interface(self.a.value(opt)?, neg)?;
            }
            "-o" | "--out-interface" => {
                rule.out_iface = interface(self.a.value(opt)?, neg)?;
            }
            "-p" | "--protocol" => {
                let v = self.a.value(opt)?;
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
            "-f" | "--fragment" => {
                return Err(bad("option \"-f\" (fragments) is not supported by xtnl"));
            }
            "-c" | "--set-counters" => {
                no_neg(neg, opt)?;
                rule.counters = Some(crate::ipt::args::set_counters(
                    self.a.value(opt)?,
                    self.a.next(),
                )?);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `-m NAME` and the options of the modules parsed here (tcp/udp ports, multiport,
    /// comment, state); registry modules take theirs in [`Parser::claim_ext`].
    fn module_option(&mut self, opt: &str, neg: bool) -> Result<bool> {
        if other_short(opt, b"m") {
            return Ok(false);
        }
        match opt {
            "-m" | "--match" => {
                no_neg(neg, opt)?;
                let name = self.a.value(opt)?;
                self.modules.push(match name {
                    "tcp" => Pending::Tcp(PortsMatch::default()),
                    "udp" => Pending::Udp(PortsMatch::default()),
                    "multiport" => Pending::Multiport(None),
                    "comment" => Pending::Comment(None),
                    "state" => Pending::State(None),
                    other => match ext::find(other, false, self.family) {
                        Some(e) => Pending::Ext(ext::Pending::new(e)),
                        None if !ext::ENABLED => return Err(ext::not_built("match", other)),
                        None => {
                            return Err(bad(format!(
                                "Couldn't load match `{other}': xtnl supports -m tcp, udp, multiport, comment, state, {}",
                                ext::known_names(false).join(", ")
                            )));
                        }
                    },
                });
            }
            "--sport" | "--source-port" | "--dport" | "--destination-port" => {
                let v = self.a.value(opt)?;
                let ports = parse_ports(v, opt)?;
                let is_src = opt == "--sport" || opt == "--source-port";
                let tcp_or_udp = find_ports_module(&mut self.modules, &self.rule, opt)?;
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
                let v = self.a.value(opt)?;
                let slot = self.modules.iter_mut().rev().find_map(|m| match m {
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
                no_neg(neg, opt)?;
                let v = self.a.value(opt)?;
                if v.len() > crate::limits::MAX_IPTABLES_COMMENT_LEN {
                    return Err(bad(format!(
                        "COMMENT must be shorter than {} characters (it is {} bytes)",
                        crate::limits::MAX_IPTABLES_COMMENT_LEN + 1,
                        v.len()
                    )));
                }
                if v.contains('\0') {
                    return Err(bad("comment holds a NUL byte"));
                }
                let slot = self.modules.iter_mut().rev().find_map(|m| match m {
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
                let states = crate::ipt::rule::parse_states(self.a.value(opt)?, false)?;
                let slot = self.modules.iter_mut().rev().find_map(|m| match m {
                    Pending::State(s) => Some(s),
                    _ => None,
                });
                let Some(slot) = slot else {
                    return Err(unknown_option(opt));
                };
                *slot = Some(Neg::new(states, neg));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `-j`/`-g` and the options of the targets parsed here; registry targets take theirs
    /// in [`Parser::claim_ext`].
    fn target_option(&mut self, opt: &str, neg: bool) -> Result<bool> {
        if other_short(opt, b"jg") {
            return Ok(false);
        }
        match opt {
            "-j" | "--jump" | "-g" | "--goto" => {
                no_neg(neg, opt)?;
                if self.target_name.is_some() {
                    return Err(bad("multiple -j flags not allowed"));
                }
                self.target_name = Some((
                    self.a.value(opt)?.to_string(),
                    opt == "-g" || opt == "--goto",
                ));
                if let Some((n, false)) = &self.target_name
                    && !ext::ENABLED
                    && ext::is_registry_target(n)
                    && !is_typed_target(n)
                {
                    // Before its options, which only the registry knows.
                    return Err(ext::not_built("target", n));
                }
                let family = self.family;
                self.ext_target = self
                    .target_name
                    .as_ref()
                    .filter(|(_, goto)| !goto)
                    .and_then(|(n, _)| ext::find(n, true, family))
                    .map(ext::Pending::new);
            }
            "--to-destination" | "--to-source" | "--to-ports" | "--reject-with"
            | "--log-prefix" | "--log-level" => {
                no_neg(neg, opt)?;
                let v = self.a.value(opt)?;
                self.target_opts.push((opt.to_string(), v.to_string()));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The extension-registry hook: an option the loaded target or the most recent registry
    /// module knows goes to it (with its arguments); an option of the module `-p` names
    /// (`-p icmp --icmp-type`) loads that module implicitly, as iptables does.
    fn claim_ext(&mut self, opt: &str, neg: bool) -> Result<bool> {
        let (a, modules, target, rule, family) = (
            &mut self.a,
            &mut self.modules,
            &mut self.ext_target,
            &self.rule,
            self.family,
        );
        let inline = a.inline.take();
        // Whether an option with an optional argument has one (`--rateest-bps [RATE]`): the
        // next word, as iptables' parser takes it (`--opt=value` is refused, as by getopt).
        let has_arg = inline.is_none() && a.peek().is_some_and(|v| !v.starts_with('-') && v != "!");
        let mut next = || a.next();
        if let Some(t) = target.as_mut()
            && let Some(o) = t.knows(opt)
        {
            t.take(o.resolved(has_arg), neg, inline, &mut next)?;
            return Ok(true);
        }
        for m in modules.iter_mut().rev() {
            if let Pending::Ext(p) = m
                && let Some(o) = p.knows(opt)
            {
                p.take(o.resolved(has_arg), neg, inline, &mut next)?;
                return Ok(true);
            }
        }
        let implicit = rule
            .proto
            .as_ref()
            .filter(|p| !p.negated)
            .and_then(|p| ext::implicit(p.value.number(), family));
        if let Some(e) = implicit {
            let mut p = ext::Pending::new(e);
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
                    p.given = ext::tcp_given_of(ports);
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
}

/// The tcp/udp module a `--sport/--dport` belongs to: the last explicit one, or the one
/// `-p tcp|udp` loads implicitly (created here, at the point of first use).
pub(super) fn find_ports_module<'m>(
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

/// A module being filled in; options apply to the most recent module that knows them, as
/// iptables does.
#[derive(Debug)]
pub(super) enum Pending {
    Tcp(PortsMatch),
    Udp(PortsMatch),
    Multiport(Option<Multiport>),
    Comment(Option<String>),
    State(Option<Neg<CtStates>>),
    /// A module of the extension registry ([`crate::ipt::ext`]).
    Ext(ext::Pending),
}

/// `-i`/`-o NAME`. A lone `+` (every interface) is no match at all, as iptables writes it
/// (firewalld's `-A PREROUTING_ZONES -i + -g PRE_public`; both iptables save the rule without
/// `-i`). `! -i +` would match nothing: iptables-nft writes a compare with a name no
/// interface has, iptables-legacy an inverted match that `-S` cannot show; xtnl refuses it.
fn interface(name: &str, neg: bool) -> Result<Option<Neg<Interface>>> {
    if name == "+" {
        if neg {
            return Err(bad(
                "`! -i +' / `! -o +' would match no interface at all; leave the rule out",
            ));
        }
        return Ok(None);
    }
    Ok(Some(Neg::new(Interface::new(name)?, neg)))
}
