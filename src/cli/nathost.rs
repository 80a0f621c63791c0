//! `xtnl reservation setup`, `forward add|remove`, `teardown`, `sweep`, `host setup`: the
//! NAT-host agent's operations, each one atomic transaction.

use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

use super::context::Ctx;
use super::io_error;
use xtnl::error::{Error, Result};
use xtnl::lock::{LockMode, WaitPolicy};
use xtnl::model::{Family, IpNet, PortRange};
use xtnl::nathost::{Forward, ForwardKey, HostSetup, Operation, Report, Reservation};

pub const USAGE: &str = "\
NAT-host operations (each is one atomic transaction; idempotent; [-4|-6] [-t TABLE] [-w [SECS]]
[--json] apply to all):
  reservation setup CHAIN [--entry CHAIN] [--forward [IFACE:]PROTO/PORT=ADDR:PORT]...
        [-i IFACE] [--comment-prefix TEXT | --no-comments]
                                ensure the chain, one jump to it from the entry chain
                                (PREROUTING) and each forward (a DNAT rule)
  forward add CHAIN [IFACE:]PROTO/PORT=ADDR:PORT [-i IFACE] [--comment-prefix TEXT]
  forward remove CHAIN [IFACE:]PROTO/PORT[=ADDR:PORT]
  teardown CHAIN [--entry CHAIN]
                                delete every rule jumping to CHAIN, flush it, delete it
  sweep --prefix PREFIX --keep NAME,...|@FILE
                                remove every PREFIX* chain not kept, with the jumps to it
  host setup --public-interface IFACE --private-interface IFACE --private-network NET
        --public-address ADDR --ports RANGE,... [--chain NAME] [--comment-prefix TEXT]
                                the one-time rules: masquerade (nat), accepts (filter)";

/// Options every NAT-host command takes.
struct Common {
    family: Family,
    table: Option<String>,
    wait: WaitPolicy,
    json: bool,
}

/// A tiny option scanner: options with a value, flags, and positional words.
struct Args<'a> {
    words: std::slice::Iter<'a, String>,
    peeked: Option<&'a String>,
}

impl<'a> Args<'a> {
    fn new(args: &'a [String]) -> Self {
        Args {
            words: args.iter(),
            peeked: None,
        }
    }
    fn next(&mut self) -> Option<&'a String> {
        self.peeked.take().or_else(|| self.words.next())
    }
    fn peek(&mut self) -> Option<&'a String> {
        if self.peeked.is_none() {
            self.peeked = self.words.next();
        }
        self.peeked
    }
    fn value(&mut self, opt: &str) -> Result<&'a String> {
        self.next()
            .ok_or_else(|| Error::InvalidInput(format!("option {opt} needs a value")))
    }
}

/// Options after the common ones, in order: `(option, value)`; a positional word has an
/// empty option.
type Rest = Vec<(String, Option<String>)>;

/// Reads the options common to every command; returns the rest in order.
fn common(args: &[String]) -> Result<(Common, Rest)> {
    let mut c = Common {
        family: Family::Ipv4,
        table: None,
        wait: WaitPolicy::default_for_command()?,
        json: false,
    };
    let mut rest = Vec::new();
    let mut a = Args::new(args);
    while let Some(w) = a.next() {
        match w.as_str() {
            "-4" | "--ipv4" => c.family = Family::Ipv4,
            "-6" | "--ipv6" => c.family = Family::Ipv6,
            "-t" | "--table" => c.table = Some(a.value(w)?.clone()),
            "--json" => c.json = true,
            "-w" | "--wait" => {
                c.wait = match a.peek().and_then(|s| s.parse::<u64>().ok()) {
                    Some(secs) => {
                        a.next();
                        WaitPolicy::Timeout(Duration::from_secs(secs))
                    }
                    None => WaitPolicy::Forever,
                }
            }
            "--entry"
            | "--forward"
            | "-i"
            | "--in-interface"
            | "--comment-prefix"
            | "--prefix"
            | "--keep"
            | "--public-interface"
            | "--private-interface"
            | "--private-network"
            | "--public-address"
            | "--ports"
            | "--layout"
            | "--to"
            | "--chain" => {
                let v = a.value(w)?.clone();
                rest.push((w.clone(), Some(v)));
            }
            "--no-comments" => rest.push((w.clone(), None)),
            o if o.starts_with('-') && o.len() > 1 => {
                return Err(Error::InvalidInput(format!("unknown option {o:?}")));
            }
            _ => rest.push((String::new(), Some(w.clone()))),
        }
    }
    Ok((c, rest))
}

fn positional(rest: &[(String, Option<String>)]) -> Vec<&str> {
    rest.iter()
        .filter(|(o, _)| o.is_empty())
        .filter_map(|(_, v)| v.as_deref())
        .collect()
}

fn option<'a>(rest: &'a [(String, Option<String>)], names: &[&str]) -> Option<&'a str> {
    rest.iter()
        .rev()
        .find(|(o, _)| names.contains(&o.as_str()))
        .and_then(|(_, v)| v.as_deref())
}

fn options<'a>(rest: &'a [(String, Option<String>)], name: &str) -> Vec<&'a str> {
    rest.iter()
        .filter(|(o, _)| o == name)
        .filter_map(|(_, v)| v.as_deref())
        .collect()
}

fn required<'a>(rest: &'a [(String, Option<String>)], name: &str) -> Result<&'a str> {
    option(rest, &[name]).ok_or_else(|| Error::InvalidInput(format!("option {name} is required")))
}

fn only_allowed(rest: &[(String, Option<String>)], allowed: &[&str], what: &str) -> Result<()> {
    match rest
        .iter()
        .find(|(o, _)| !o.is_empty() && !allowed.contains(&o.as_str()))
    {
        Some((o, _)) => Err(Error::InvalidInput(format!(
            "option {o} does not apply to {what}"
        ))),
        None => Ok(()),
    }
}

fn exactly<'a>(
    rest: &'a [(String, Option<String>)],
    n: usize,
    usage: &str,
) -> Result<Vec<&'a str>> {
    let p = positional(rest);
    if p.len() != n {
        return Err(Error::InvalidInput(format!("usage: xtnl {usage}")));
    }
    Ok(p)
}

fn comment_prefix(rest: &[(String, Option<String>)]) -> Option<String> {
    if rest.iter().any(|(o, _)| o == "--no-comments") {
        return None;
    }
    Some(
        option(rest, &["--comment-prefix"])
            .unwrap_or("xtnl: ")
            .to_string(),
    )
}

fn forward_with(spec: &str, rest: &[(String, Option<String>)]) -> Result<Forward> {
    let mut f = Forward::parse_spec(spec)?;
    if f.in_interface.is_none() {
        f.in_interface = option(rest, &["-i", "--in-interface"]).map(str::to_string);
    }
    if let Some(p) = comment_prefix(rest) {
        f.comment = Some(f.described(&p));
    }
    f.validate()?;
    Ok(f)
}

/// Runs `xtnl reservation|forward|teardown|sweep|host ...` (`args` starts with the command).
pub(super) fn run(out: &mut impl Write, args: &[String], ctx: &Ctx) -> Result<()> {
    let (cmd, sub, rest_args) = match args.first().map(String::as_str) {
        Some(c @ ("reservation" | "forward" | "host")) => {
            let sub = args.get(1).map(String::as_str).unwrap_or("");
            (c, sub, args.get(2..).unwrap_or(&[]))
        }
        Some(c) => (c, "", &args[1..]),
        None => return Err(Error::InvalidInput("no command given".into())),
    };
    let (c, mut rest) = common(rest_args)?;
    let layout = super::nathost_map::take_layout(&mut rest)?;
    if cmd == "migrate" || (cmd, sub) == ("forward", "list") {
        if cmd == "migrate" {
            ctx.require_nft(c.family, || {
                "migrate moves iptables-nft's chains in one nf_tables transaction; this host's \
                 iptables is iptables-legacy, whose tables cannot join it (--backend nft to \
                 migrate iptables-nft's chains anyway)"
                    .into()
            })?;
        }
        return super::nathost_map::run_other(out, cmd, &c.family, c.wait, c.json, &rest, ctx);
    }
    let map_teardown_keys = super::nathost_map::teardown_keys(layout, cmd, &mut rest)?;
    let table = c.table.clone().unwrap_or_else(|| "nat".into());
    // Everything is checked before the kernel is asked anything: bad input never reaches it.
    let family = c.family;
    let op: Operation = match (cmd, sub) {
        ("reservation", "setup") => {
            only_allowed(
                &rest,
                &[
                    "--entry",
                    "--forward",
                    "-i",
                    "--in-interface",
                    "--comment-prefix",
                    "--no-comments",
                ],
                "reservation setup",
            )?;
            let p = exactly(&rest, 1, "reservation setup CHAIN [--forward SPEC]...")?;
            let mut res = Reservation::new(p[0]);
            res.family = c.family;
            res.table = table;
            if let Some(e) = option(&rest, &["--entry"]) {
                res.entry = e.to_string();
            }
            if let Some(prefix) = comment_prefix(&rest) {
                res.jump_comment = Some(res.described_jump(&prefix));
            }
            res.forwards = options(&rest, "--forward")
                .into_iter()
                .map(|s| forward_with(s, &rest))
                .collect::<Result<_>>()?;
            Operation::ReservationSetup(res)
        }
        ("forward", "add") => {
            only_allowed(
                &rest,
                &["-i", "--in-interface", "--comment-prefix", "--no-comments"],
                "forward add",
            )?;
            let p = exactly(&rest, 2, "forward add CHAIN [IFACE:]PROTO/PORT=ADDR:PORT")?;
            let f = forward_with(p[1], &rest)?;
            Operation::ForwardAdd {
                table,
                chain: p[0].to_string(),
                forward: f,
            }
        }
        ("forward", "remove") => {
            only_allowed(&rest, &[], "forward remove")?;
            let p = exactly(
                &rest,
                2,
                "forward remove CHAIN [IFACE:]PROTO/PORT[=ADDR:PORT]",
            )?;
            let (key, to) = match p[1].split_once('=') {
                Some((k, to)) => (
                    ForwardKey::parse_spec(k)?,
                    Some(to.parse().map_err(|_| {
                        Error::InvalidInput(format!("forward {:?}: {to:?} is not ADDR:PORT", p[1]))
                    })?),
                ),
                None => (ForwardKey::parse_spec(p[1])?, None),
            };
            Operation::ForwardRemove {
                table,
                chain: p[0].to_string(),
                key,
                to,
            }
        }
        ("teardown", _) => {
            only_allowed(&rest, &["--entry"], "teardown")?;
            let p = exactly(&rest, 1, "teardown [-t TABLE] CHAIN")?;
            let entry = option(&rest, &["--entry"])
                .unwrap_or("PREROUTING")
                .to_string();
            Operation::Teardown {
                table,
                chain: p[0].to_string(),
                entry,
            }
        }
        ("sweep", _) => {
            only_allowed(&rest, &["--prefix", "--keep"], "sweep")?;
            exactly(&rest, 0, "sweep --prefix PREFIX --keep NAME,...|@FILE")?;
            let prefix = required(&rest, "--prefix")?.to_string();
            let keep = keep_list(required(&rest, "--keep")?)?;
            Operation::Sweep {
                table,
                prefix,
                keep,
            }
        }
        ("host", "setup") => {
            only_allowed(
                &rest,
                &[
                    "--public-interface",
                    "--private-interface",
                    "--private-network",
                    "--public-address",
                    "--ports",
                    "--chain",
                    "--comment-prefix",
                ],
                "host setup",
            )?;
            exactly(
                &rest,
                0,
                "host setup --public-interface ... (see xtnl help)",
            )?;
            if c.table.is_some() {
                return Err(Error::InvalidInput(
                    "host setup writes to nat and filter; -t does not apply".into(),
                ));
            }
            let host = HostSetup {
                family: c.family,
                chain: option(&rest, &["--chain"])
                    .unwrap_or("xtnl-nat_host")
                    .to_string(),
                public_interface: required(&rest, "--public-interface")?.to_string(),
                private_interface: required(&rest, "--private-interface")?.to_string(),
                private_network: parse_net(required(&rest, "--private-network")?)?,
                public_address: required(&rest, "--public-address")?.parse().map_err(|_| {
                    Error::InvalidInput("--public-address: not an IP address".into())
                })?,
                port_ranges: parse_ranges(required(&rest, "--ports")?)?,
                comment_prefix: option(&rest, &["--comment-prefix"])
                    .unwrap_or("xtnl: ")
                    .to_string(),
            };
            Operation::HostSetup(host)
        }
        (cmd, sub) => {
            return Err(Error::InvalidInput(format!(
                "unknown command {:?}\n{USAGE}",
                format!("{cmd} {sub}").trim()
            )));
        }
    };
    op.validate(family)?;
    if layout == xtnl::nathost::map::Layout::Map {
        if c.table.is_some() {
            return Err(Error::InvalidInput(
                "-t does not apply to the map layout: its table is xtnl_nat".into(),
            ));
        }
        let report = super::nathost_map::run(&op, family, c.wait, map_teardown_keys, ctx)?;
        return print_report(out, &report, c.json);
    }
    let mut backend = ctx.open(family, false, ctx.lock(c.wait), LockMode::Always)?;
    let report = backend.run_one(family, op)?;
    print_report(out, &report, c.json)?;
    // A short-lived process: do not make the caller wait for the kernel's reclaim.
    backend.close()
}

fn parse_net(s: &str) -> Result<IpNet> {
    s.parse()
}

fn parse_ranges(s: &str) -> Result<Vec<PortRange>> {
    s.split(',')
        .map(|r| {
            let bad = || Error::InvalidInput(format!("--ports: {r:?} is not PORT or FIRST:LAST"));
            let num = |p: &str| -> Result<u16> {
                match p.parse::<u32>() {
                    Ok(n) if (1..=65535).contains(&n) => Ok(n as u16),
                    _ => Err(bad()),
                }
            };
            match r.split_once(':') {
                Some((a, b)) => PortRange::new(num(a)?, num(b)?),
                None => Ok(PortRange::single(num(r)?)),
            }
        })
        .collect()
}

/// `NAME,NAME,...`, or `@FILE` with names separated by blanks or lines (`@-`: standard input).
fn keep_list(spec: &str) -> Result<BTreeSet<String>> {
    let text = match spec.strip_prefix('@') {
        Some("-") => {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map_err(|e| {
                Error::InvalidInput(format!("--keep @-: cannot read standard input: {e}"))
            })?;
            s
        }
        Some(path) => {
            super::privileged::caller_file(path)?;
            std::fs::read_to_string(path)
                .map_err(|e| Error::InvalidInput(format!("--keep @{path}: {e}")))?
        }
        None => spec.replace(',', " "),
    };
    Ok(text.split_whitespace().map(str::to_string).collect())
}

fn print_report(out: &mut impl Write, r: &Report, json: bool) -> Result<()> {
    if json {
        let v = xtnl::json::report_value(r);
        writeln!(out, "{v}").map_err(io_error)?;
    } else {
        writeln!(out, "{}", r.outcome.as_str()).map_err(io_error)?;
        for c in &r.changes {
            writeln!(out, "  {c}").map_err(io_error)?;
        }
    }
    out.flush().map_err(io_error)
}
