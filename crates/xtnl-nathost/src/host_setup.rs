//! The one-time rules of a NAT host ([`HostSetup`]): the masquerade of outbound traffic and
//! the accepts of the forwarded port ranges, written as the NAT-host agent writes them.

use std::net::IpAddr;

use super::backend::check_chain_name;
use super::spec::{MAX_COMMENT, check_comment, family_word, jump_rule, rule_from_words};
use crate::error::{Error, Result};
use crate::ipt::IptRule;
use crate::model::{Family, IpNet, PortRange};

/// The one-time rules of a NAT host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSetup {
    /// IPv4 (`iptables`) or IPv6 (`ip6tables`).
    pub family: Family,
    /// The chain holding them, in nat and in filter (`vcl-nat_host` for the agent).
    pub chain: String,
    /// The host's public interface: masqueraded outbound (`-o`), forwards arrive on it (`-i`).
    pub public_interface: String,
    /// The interface towards the reservations' private network.
    pub private_interface: String,
    /// The reservations' network; traffic to it is not masqueraded.
    pub private_network: IpNet,
    /// The host's public address (the `-d` of the inbound accept rules).
    pub public_address: IpAddr,
    /// Public port ranges forwarded to reservations (accepted inbound).
    pub port_ranges: Vec<PortRange>,
    /// The start of every rule's comment (`VCL: ` for the agent).
    pub comment_prefix: String,
}

/// A rule of the host set-up: where it goes and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedRule {
    /// The table it goes in (`nat` or `filter`).
    pub table: String,
    /// The chain's name.
    pub chain: String,
    /// The rule, in iptables terms.
    pub rule: IptRule,
}

impl HostSetup {
    /// Checks the chain name in both tables, the interface names, and that the network and
    /// address are of the set-up's family.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming what is wrong.
    pub fn validate(&self) -> Result<()> {
        for t in ["nat", "filter"] {
            check_chain_name(t, &self.chain)?;
        }
        for i in [&self.public_interface, &self.private_interface] {
            crate::model::Interface::new(i.clone())?;
        }
        let v4 = self.family != Family::Ipv6;
        if self.private_network.is_ipv4() != v4 || self.public_address.is_ipv4() != v4 {
            return Err(Error::InvalidInput(format!(
                "host set-up: the private network and public address must both be {} addresses",
                family_word(self.family)
            )));
        }
        if self.port_ranges.is_empty() {
            return Err(Error::InvalidInput(
                "host set-up: no public port ranges given".into(),
            ));
        }
        // multiport holds 15 ports, a range counting as two.
        let slots: usize = self
            .port_ranges
            .iter()
            .map(|r| if r.is_single() { 1 } else { 2 })
            .sum();
        if slots > 15 {
            return Err(Error::InvalidInput(format!(
                "host set-up: {} port ranges need {slots} multiport slots; at most 15 fit in one rule",
                self.port_ranges.len()
            )));
        }
        Ok(())
    }

    /// The jumps into the host chain: nat POSTROUTING, filter INPUT and FORWARD.
    pub fn jumps(&self) -> Result<Vec<PlacedRule>> {
        [
            ("nat", "POSTROUTING"),
            ("filter", "INPUT"),
            ("filter", "FORWARD"),
        ]
        .into_iter()
        .map(|(table, entry)| {
            let comment = format!(
                "{}jump from {table} table {entry} chain to NAT host chain {}",
                self.comment_prefix, self.chain
            );
            Ok(PlacedRule {
                table: table.into(),
                chain: entry.into(),
                rule: jump_rule(self.family, table, &self.chain, Some(&comment))?,
            })
        })
        .collect()
    }

    /// The rules of the host chain, in order, as the agent writes them.
    pub fn rules(&self) -> Result<Vec<PlacedRule>> {
        self.validate()?;
        let p = &self.comment_prefix;
        let ports = self
            .port_ranges
            .iter()
            .map(|r| {
                if r.is_single() {
                    r.first().to_string()
                } else {
                    format!("{}:{}", r.first(), r.last())
                }
            })
            .collect::<Vec<_>>()
            .join(",");
        let w = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let mut out = Vec::new();
        let net = self.private_network.to_string();
        let public = self.public_address.to_string();
        let masq_comment = format!(
            "{p}change IP of outbound {} packets to NAT host IP address {public}",
            self.public_interface
        );
        out.push((
            "nat",
            w(&[
                "!",
                "-d",
                &net,
                "-o",
                &self.public_interface,
                "-m",
                "comment",
                "--comment",
                &masq_comment,
                "-j",
                "MASQUERADE",
            ]),
        ));
        for proto in ["tcp", "udp"] {
            let comment = format!(
                "{p}allow inbound {} traffic on the NAT port ranges to public {}",
                proto.to_uppercase(),
                self.public_interface
            );
            out.push((
                "filter",
                w(&[
                    "-d",
                    &public,
                    "-i",
                    &self.public_interface,
                    "-p",
                    proto,
                    "-m",
                    "comment",
                    "--comment",
                    &comment,
                    "-m",
                    "multiport",
                    "--dports",
                    &ports,
                    "-m",
                    "state",
                    "--state",
                    "NEW,RELATED,ESTABLISHED",
                    "-j",
                    "ACCEPT",
                ]),
            ));
        }
        let fwd_in = format!(
            "{p}forward traffic from public {} to private {}",
            self.public_interface, self.private_interface
        );
        out.push((
            "filter",
            w(&[
                "-i",
                &self.public_interface,
                "-o",
                &self.private_interface,
                "-m",
                "comment",
                "--comment",
                &fwd_in,
                "-m",
                "state",
                "--state",
                "NEW,RELATED,ESTABLISHED",
                "-j",
                "ACCEPT",
            ]),
        ));
        let fwd_out = format!(
            "{p}forward traffic from private {} to public {}",
            self.private_interface, self.public_interface
        );
        out.push((
            "filter",
            w(&[
                "-i",
                &self.private_interface,
                "-o",
                &self.public_interface,
                "-m",
                "comment",
                "--comment",
                &fwd_out,
                "-j",
                "ACCEPT",
            ]),
        ));
        out.into_iter()
            .map(|(table, words)| {
                for wd in &words {
                    check_comment_if_long(wd)?;
                }
                Ok(PlacedRule {
                    table: table.into(),
                    chain: self.chain.clone(),
                    rule: rule_from_words(self.family, table, &words)?,
                })
            })
            .collect()
    }
}

fn check_comment_if_long(word: &str) -> Result<()> {
    if word.len() > MAX_COMMENT {
        check_comment(word)?;
    }
    Ok(())
}
