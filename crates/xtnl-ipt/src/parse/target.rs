//! The target: `-j`/`-g` with the options of the targets parsed here, and the payloads of
//! registry matches and targets in the form decoding gives them.

use super::*;
use crate::ipt::ext;

/// iptables' refusal of a NAT port after no `-p` or the wrong one (libxt_NAT.c).
pub(crate) const NAT_PORTS_NEED_PROTO: &str = "Need TCP, UDP, SCTP or DCCP with port specification";

/// Whether a NAT target (`DNAT`, `SNAT`, `MASQUERADE`, `REDIRECT`, typed or from the
/// registry) may take a port in `rule`, or iptables' refusal.
pub(crate) fn nat_ports_proto(rule: &IptRule) -> Result<()> {
    if rule.proto.as_ref().is_some_and(|p| p.value.nat_ports_ok()) {
        Ok(())
    } else {
        Err(bad(NAT_PORTS_NEED_PROTO))
    }
}

pub(super) fn is_known_target(name: &str) -> bool {
    is_typed_target(name) || ext::known_names(true).contains(&name)
}

/// The targets parsed here, into typed variants, with or without the registry.
pub(super) fn is_typed_target(name: &str) -> bool {
    matches!(
        name,
        "DNAT" | "SNAT" | "MASQUERADE" | "REDIRECT" | "REJECT" | "LOG"
    )
}

/// A registry module's payload, in the form decoding gives it (a pure `--ctstate` is
/// `IptMatch::Conntrack`), so that `-C`/`-D` compare like with like.
pub(super) fn ext_match(p: &ext::Pending, rule: &IptRule, family: Family) -> Result<IptMatch> {
    let x = p.finish(&ext::Ctx { family, rule })?;
    let wire = crate::wire::expr::Match {
        name: x.name,
        rev: x.rev,
        info: x.info,
    };
    crate::ipt::xt_bridge::match_from_xt(&wire, family).ok_or_else(|| {
        bad(format!(
            "{}: these options give a payload xtnl cannot print back",
            p.ext.name()
        ))
    })
}

pub(super) fn ext_target_of(p: &ext::Pending, rule: &IptRule, family: Family) -> Result<IptTarget> {
    let x = p.finish(&ext::Ctx { family, rule })?;
    let wire = crate::wire::expr::Target {
        name: x.name,
        rev: x.rev,
        info: x.info,
    };
    crate::ipt::xt_bridge::target_from_xt(&wire, family).ok_or_else(|| {
        bad(format!(
            "{}: these options give a payload xtnl cannot print back",
            p.ext.name()
        ))
    })
}

pub(super) fn parse_target(
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
        crate::ipt::args::once(name, o, &opts[..i])?;
    }
    let get = |o: &str| {
        opts.iter()
            .rev()
            .find(|(k, _)| k == o)
            .map(|(_, v)| v.as_str())
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
                nat_ports_proto(rule)?;
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
                nat_ports_proto(rule)?;
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
        name if !ext::ENABLED && ext::is_registry_target(name) => {
            return Err(ext::not_built("target", name));
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
