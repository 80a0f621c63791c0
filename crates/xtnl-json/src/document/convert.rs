//! A document's operations turned into the library's: rules from their fields or words,
//! forwards, ports, with the JSON path of anything refused.

use super::*;

pub(super) fn dotted(path: &str) -> String {
    if path.starts_with('.') {
        path.to_string()
    } else {
        format!(".{path}")
    }
}

/// serde_json appends " at line L column C"; the path message says it already.
pub(super) fn strip_position(s: &str) -> &str {
    s.rfind(" at line ").map_or(s, |i| &s[..i])
}

pub(super) fn port(v: u32, path: &str) -> Result<u16> {
    match v {
        1..=65535 => Ok(v as u16),
        _ => Err(invalid(path, format!("port {v} is out of range (1-65535)"))),
    }
}

pub(super) fn forward(f: ForwardIn, path: &str) -> Result<Forward> {
    let protocol =
        ForwardProtocol::parse(&f.protocol).map_err(|e| at(&format!("{path}.protocol"), e))?;
    let public_port = port(f.public_port, &format!("{path}.public_port"))?;
    let to: SocketAddr = f.to.parse().map_err(|_| {
        invalid(
            &format!("{path}.to"),
            format!(
                "{:?} is not ADDR:PORT (an IPv6 address goes in brackets)",
                f.to
            ),
        )
    })?;
    let fwd = Forward {
        protocol,
        public_port,
        to,
        in_interface: f.in_interface,
        comment: f.comment,
    };
    fwd.validate().map_err(|e| at(path, e))?;
    Ok(fwd)
}

pub(super) fn table_or(t: Option<String>, default: &str) -> String {
    t.unwrap_or_else(|| default.to_string())
}

pub(super) fn rule(family: Family, table: &str, r: RuleIn, path: &str) -> Result<IptRule> {
    let words = match r {
        serde_json::Value::String(text) => {
            crate::ipt::parse::split_words(&text).map_err(|e| at(path, e))?
        }
        fields @ serde_json::Value::Object(_) => {
            let f: RuleFields = serde_path_to_error::deserialize(fields).map_err(|e| {
                let inner = dotted(&e.path().to_string());
                let field = if inner == "." { String::new() } else { inner };
                Error::InvalidInput(format!(
                    "invalid document at {path}{field}: {}",
                    e.into_inner()
                ))
            })?;
            fields_to_words(f, path)?
        }
        _ => {
            return Err(invalid(
                path,
                "a rule is a string of iptables words or an object of rule fields",
            ));
        }
    };
    rule_from_words(family, table, &words).map_err(|e| at(path, e))
}

/// `OPTION VALUE`, when there is a value.
pub(super) fn option_words(w: &mut Vec<String>, option: &str, value: Option<String>) {
    if let Some(v) = value {
        w.push(option.into());
        w.push(v);
    }
}

impl PortIn {
    fn into_word(self) -> String {
        match self {
            PortIn::Number(n) => n.to_string(),
            PortIn::Text(t) => t,
        }
    }
}

pub(super) fn fields_to_words(f: RuleFields, path: &str) -> Result<Vec<String>> {
    let mut w: Vec<String> = Vec::new();
    option_words(&mut w, "-s", f.source);
    option_words(&mut w, "-d", f.destination);
    option_words(&mut w, "-i", f.in_interface);
    option_words(&mut w, "-o", f.out_interface);
    option_words(&mut w, "-p", f.protocol);
    option_words(&mut w, "--sport", f.sport.map(PortIn::into_word));
    option_words(&mut w, "--dport", f.dport.map(PortIn::into_word));
    if let Some(c) = f.comment {
        w.extend(["-m".into(), "comment".into(), "--comment".into(), c]);
    }
    if let Some(states) = f.ctstate {
        w.extend([
            "-m".into(),
            "conntrack".into(),
            "--ctstate".into(),
            states.join(","),
        ]);
    }
    match (f.jump, f.goto) {
        (Some(_), Some(_)) => {
            return Err(invalid(path, "a rule has jump or goto, not both"));
        }
        (Some(j), None) => w.extend(["-j".into(), j]),
        (None, Some(g)) => w.extend(["-g".into(), g]),
        (None, None) => {}
    }
    option_words(&mut w, "--to-destination", f.to_destination);
    option_words(&mut w, "--to-source", f.to_source);
    option_words(&mut w, "--to-ports", f.to_ports);
    option_words(&mut w, "--reject-with", f.reject_with);
    option_words(&mut w, "--log-prefix", f.log_prefix);
    Ok(w)
}

pub(super) fn convert(family: Family, o: OperationIn, path: &str) -> Result<Operation> {
    Ok(match o {
        OperationIn::ReservationSetup {
            table,
            chain,
            entry,
            jump_comment,
            forwards,
            ..
        } => {
            let mut r = Reservation::new(chain);
            r.family = family;
            r.table = table_or(table, "nat");
            if let Some(e) = entry {
                r.entry = e;
            }
            r.jump_comment = jump_comment;
            r.forwards = forwards
                .into_iter()
                .enumerate()
                .map(|(i, f)| forward(f, &format!("{path}.forwards[{i}]")))
                .collect::<Result<_>>()?;
            Operation::ReservationSetup(r)
        }
        OperationIn::ForwardAdd {
            table,
            chain,
            forward: f,
            ..
        } => Operation::ForwardAdd {
            table: table_or(table, "nat"),
            chain,
            forward: forward(f, &format!("{path}.forward"))?,
        },
        OperationIn::ForwardRemove {
            table,
            chain,
            protocol,
            public_port,
            in_interface,
            to,
            ..
        } => Operation::ForwardRemove {
            table: table_or(table, "nat"),
            chain,
            key: ForwardKey {
                protocol: ForwardProtocol::parse(&protocol)
                    .map_err(|e| at(&format!("{path}.protocol"), e))?,
                public_port: port(public_port, &format!("{path}.public_port"))?,
                in_interface,
            },
            to: to
                .map(|t| {
                    t.parse().map_err(|_| {
                        invalid(&format!("{path}.to"), format!("{t:?} is not ADDR:PORT"))
                    })
                })
                .transpose()?,
        },
        OperationIn::Teardown {
            table,
            chain,
            entry,
            ..
        } => Operation::Teardown {
            table: table_or(table, "nat"),
            chain,
            entry: entry.unwrap_or_else(|| "PREROUTING".into()),
        },
        OperationIn::Sweep {
            table,
            prefix,
            keep,
            ..
        } => Operation::Sweep {
            table: table_or(table, "nat"),
            prefix,
            keep: keep.into_iter().collect::<BTreeSet<_>>(),
        },
        OperationIn::HostSetup {
            chain,
            public_interface,
            private_interface,
            private_network,
            public_address,
            ports,
            comment_prefix,
            ..
        } => Operation::HostSetup(HostSetup {
            family,
            chain: chain.unwrap_or_else(|| "xtnl-nat_host".into()),
            public_interface,
            private_interface,
            private_network: private_network
                .parse()
                .map_err(|e| at(&format!("{path}.private_network"), e))?,
            public_address: public_address.parse().map_err(|_| {
                invalid(
                    &format!("{path}.public_address"),
                    format!("{public_address:?} is not an IP address"),
                )
            })?,
            port_ranges: ports
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let pp = format!("{path}.ports[{i}]");
                    let n = |s: &str| {
                        s.parse::<u32>()
                            .map_err(|_| invalid(&pp, format!("{p:?} is not PORT or FIRST:LAST")))
                            .and_then(|v| port(v, &pp))
                    };
                    match p.split_once(':') {
                        Some((a, b)) => PortRange::new(n(a)?, n(b)?).map_err(|e| at(&pp, e)),
                        None => Ok(PortRange::single(n(p)?)),
                    }
                })
                .collect::<Result<_>>()?,
            comment_prefix: comment_prefix.unwrap_or_else(|| "xtnl: ".into()),
        }),
        OperationIn::CreateChain { table, chain } => Operation::CreateChain {
            table: table_or(table, "filter"),
            chain,
        },
        OperationIn::FlushChain { table, chain } => Operation::FlushChain {
            table: table_or(table, "filter"),
            chain,
        },
        OperationIn::DeleteChain { table, chain } => Operation::DeleteChain {
            table: table_or(table, "filter"),
            chain,
        },
        OperationIn::EnsureRule {
            table,
            chain,
            rule: r,
            position,
        } => {
            let table = table_or(table, "filter");
            let at_head = match position.as_deref() {
                None | Some("append") => false,
                Some("head") => true,
                Some(p) => {
                    return Err(invalid(
                        &format!("{path}.position"),
                        format!("position {p:?} is not \"append\" or \"head\""),
                    ));
                }
            };
            Operation::EnsureRule {
                rule: rule(family, &table, r, &format!("{path}.rule"))?,
                table,
                chain,
                at_head,
            }
        }
        OperationIn::DeleteRule {
            table,
            chain,
            rule: r,
        } => {
            let table = table_or(table, "filter");
            Operation::DeleteRule {
                rule: rule(family, &table, r, &format!("{path}.rule"))?,
                table,
                chain,
            }
        }
    })
}
