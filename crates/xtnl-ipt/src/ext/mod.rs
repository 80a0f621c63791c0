//! The extension registry: iptables' `-m NAME` matches and `-j NAME` targets beyond the
//! few that have typed variants of their own in [`super::IptMatch`]/[`super::IptTarget`].
//!
//! Each extension is one file here implementing the crate-private `Ext`: its name and
//! revision (the ones iptables 1.8.9 writes), the families it exists in, its option table in
//! iptables' words, `parse` (options -> the payload's kernel bytes, through the typed struct
//! in [`crate::xt`]) and `save` (payload -> options in iptables' order, with its inverted
//! forms and normalisations). A rule carries an extension as an [`XtPayload`]: its
//! canonical kernel bytes, which is what both backends send (nft_compat `match`/`target`,
//! or an x_tables entry) and what `-C`/`-D` compare. The few that iptables-nft writes as
//! native expressions (`limit`, `mark`, NFLOG) are encoded that way by the library's
//! crate-private `ipt::ext::native` (part of the nf_tables layer), which lists the
//! expressions iptables-nft writes for each.
//!
//! The extension files, the registry's list and their tests are declared once, by the
//! crate-private `registry!` below, gated as one unit by the cargo feature `extensions`.
//!
//! The hooks (crate-private): the command-line parser asks `find` when it meets
//! `-m NAME`/`-j NAME` and hands unknown options to `Pending::claims`; the printers call
//! `save_match` and `save_target`; decoding calls `decode`. Public, for the library's `-L`
//! listings and iptables-nft's encoding: [`list_match`], [`list_target`], [`target_name`],
//! [`level_name`] and [`trace`]'s native expressions.

#![deny(missing_docs)]
// Without the registry (feature `extensions` off) the toolkit its extensions are written
// with (option tables, `Given`, `Ctx`, the refusals) is compiled but has no user.
#![cfg_attr(not(feature = "extensions"), allow(dead_code))]

mod index;
mod log;
pub use log::level_name;
pub mod trace;

use std::fmt::Write;

use super::Flavour;
use super::rule::{IptRule, IptTarget, XtPayload};
use crate::error::{Error, Result};
use crate::model::{Family, L4Proto};
use crate::wire::WireError;
use index::by_wire;

/// How many words an option takes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arg {
    None,
    One,
    /// `--tcp-flags mask comp`.
    Two,
    /// One word if the next one is no option (`--rateest-bps [RATE]`): iptables' test
    /// `!argv[optind] || *argv[optind] == '-' || *argv[optind] == '!'`.
    Optional,
}

/// One option of an extension's table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Opt {
    pub name: &'static str,
    pub arg: Arg,
    /// Whether `! --opt` is allowed.
    pub invert: bool,
}

/// An option table as a constant (`opts![opt(...), ...]`).
macro_rules! opts {
    ($($e:expr),* $(,)?) => {{
        const O: &[Opt] = &[$($e),*];
        O
    }};
}
pub(crate) use opts;

impl Opt {
    /// The option with an [`Arg::Optional`] argument resolved: one word when `has_arg`.
    pub(crate) fn resolved(self, has_arg: bool) -> Opt {
        match self.arg {
            Arg::Optional if has_arg => Opt {
                arg: Arg::One,
                ..self
            },
            Arg::Optional => Opt {
                arg: Arg::None,
                ..self
            },
            _ => self,
        }
    }
}

pub(crate) const fn opt(name: &'static str, arg: Arg, invert: bool) -> Opt {
    Opt { name, arg, invert }
}

/// An option as the command line gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Given {
    pub opt: &'static str,
    pub args: Vec<String>,
    pub neg: bool,
}

impl Given {
    /// The first argument (every option with [`Arg::One`] has it).
    pub fn arg(&self) -> &str {
        self.args.first().map(String::as_str).unwrap_or_default()
    }
}

/// What an extension's parser may look at besides its options.
pub(crate) struct Ctx<'a> {
    pub family: Family,
    pub rule: &'a IptRule,
}

impl Ctx<'_> {
    /// `-p` when it is given and not negated.
    pub fn proto(&self) -> Option<L4Proto> {
        self.rule
            .proto
            .as_ref()
            .filter(|p| !p.negated)
            .map(|p| p.value)
    }
}

/// Which families an extension exists in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fams {
    Both,
    V4,
    V6,
}

/// One iptables extension. See the module documentation.
pub(crate) trait Ext: Sync {
    /// The name after `-m`/`-j` (also the kernel's, unless [`Ext::wire_name`] says otherwise).
    fn name(&self) -> &'static str;
    /// A `-j` target; matches (the default) leave this as it is.
    fn is_target(&self) -> bool {
        false
    }
    fn fams(&self) -> Fams {
        Fams::Both
    }
    /// The kernel extension's name (`NOTRACK` is `CT`).
    fn wire_name(&self) -> &'static str {
        self.name()
    }
    /// The revision iptables 1.8.9 writes on a current kernel.
    fn revision(&self) -> u32 {
        0
    }
    /// The revision of a payload `parse` built (NAT picks it per family).
    fn payload_revision(&self, _info: &[u8]) -> u32 {
        self.revision()
    }
    /// Other revisions this extension decodes (`-m conntrack` reads 3 only, say).
    fn reads(&self, rev: u32) -> bool {
        rev == self.revision()
    }
    fn options(&self) -> &'static [Opt];
    /// The payload for the given options, or iptables' complaint.
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>>;
    /// Appends the options as `iptables -S` prints them (each starting with a space);
    /// `None` when the payload says something iptables 1.8.9 would not print back.
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()>;
    /// The bytes iptables would write for this payload (kernel-private and unused bytes
    /// zeroed); `None` when it does not decode.
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>>;
    /// The name `-S` shows (`NOTRACK` for CT's alias flag).
    fn shown_name(&self, _info: &[u8]) -> &'static str {
        self.name()
    }
    /// Appends the payload as `iptables -L` prints it after the addresses (each word
    /// starting with a space; `numeric` is `-n`), in the words of the extension's `print`
    /// in iptables 1.8.9. The default, for a module whose `print` writes its `-S` options
    /// (`physdev`, `socket`), is the name and those options for a match and the options
    /// alone for a target; `None` as for [`Ext::save`].
    fn list(&self, info: &[u8], family: Family, numeric: bool, out: &mut String) -> Option<()> {
        let _ = numeric;
        if !self.is_target() {
            let _ = write!(out, " {}", self.shown_name(info));
        }
        self.save(info, family, out)
    }
    /// [`Ext::list`] as the given iptables prints it, for the few modules where
    /// iptables-legacy and iptables-nft list the same payload differently (legacy prints a
    /// match's name where the module has no `print`; iptables-nft prints nothing).
    fn list_as(
        &self,
        flavour: Flavour,
        info: &[u8],
        family: Family,
        numeric: bool,
        out: &mut String,
    ) -> Option<()> {
        let _ = flavour;
        self.list(info, family, numeric, out)
    }
}

/// Whether this build has the extension registry (`xtnl-ipt`'s cargo feature `extensions`).
/// Without it the registry's decoder reads no payload (the backends keep one whole, as
/// bytes, and the saves show the rule on a `#` line), the parser refuses `-m NAME`/`-j NAME`
/// of a registry extension naming the feature, and nothing is printed through the registry.
pub const ENABLED: bool = cfg!(feature = "extensions");

/// What `-m NAME`/`-j NAME` of an extension says in a build without the registry.
pub(crate) fn not_built(what: &str, name: &str) -> Error {
    bad(format!(
        "Couldn't load {what} `{name}': this build of xtnl has no extension registry \
         (the cargo feature `extensions` of xtnl and xtnl-ipt is off); it knows -m tcp, udp, \
         multiport, comment, state and -j DNAT, SNAT, MASQUERADE, REDIRECT, REJECT, LOG"
    ))
}

/// The registry as one unit gated by the feature `extensions`: its extension modules (each
/// one file of this directory), `REGISTRY` and the helpers' re-exports. Adding an
/// extension is its file's name under `modules` and its types under `extensions`; its tests
/// are `tests`' files. Without
/// the feature none of the files is compiled and `REGISTRY` is empty (tools/slim-check.sh
/// proves it from the compiled files and symbols).
macro_rules! registry {
    (
        modules: [$($module:ident),* $(,)?],
        extensions: [$($ext:path),* $(,)?],
        items: {$($item:item)*},
        tests: [$($tests:ident),* $(,)?] $(,)?
    ) => {
        $(
            #[cfg(feature = "extensions")]
            mod $module;
        )*
        $(
            #[cfg(feature = "extensions")]
            $item
        )*
        /// Every extension the registry knows, matches and targets.
        #[cfg(feature = "extensions")]
        static REGISTRY: &[&dyn Ext] = &[$(&$ext),*];
        /// Every extension the registry knows, matches and targets: none without the feature.
        #[cfg(not(feature = "extensions"))]
        static REGISTRY: &[&dyn Ext] = &[];
        $(
            #[cfg(all(test, feature = "extensions"))]
            mod $tests;
        )*
    };
}

registry! {
    // The files of the extensions (and their helpers: `values`' number and mark words,
    // `list_ports`' `-L` port words).
    modules: [
        addrtype, bpf, checksum, cluster, connlabel, connlimit, connmark, conntrack, ct, dccp,
        devgroup, ecn_target, hashlimit, hmark, icmp, idletimer, ip6hdr, ipcomp, iprange, ipset,
        ipv6header, ipvs, led, length, limit, mac, mark, misc, nat, netmap, nfacct, nflog, npt, osf,
        pkttype, policy, rateest, recent, rt, sctp, secmark, set, simple, srh, statistic, string,
        synproxy, tcp, tcpoptstrip, time, tos, tproxy, ttl, u32_match, values, list_ports,
    ],
    // In the order `find` and `known_names` see them (the first of a name that fits wins).
    extensions: [
        mark::Mark,
        mark::MarkTarget,
        addrtype::Addrtype,
        conntrack::Conntrack,
        icmp::Icmp,
        icmp::Icmp6,
        limit::Limit,
        statistic::Statistic,
        checksum::Checksum,
        connmark::Connmark,
        connmark::ConnmarkTarget,
        mac::Physdev,
        pkttype::Pkttype,
        iprange::Iprange,
        mac::Mac,
        iprange::Owner,
        length::Length,
        recent::Recent,
        nflog::Nflog,
        nflog::Nfqueue,
        ct::Ct,
        ct::Notrack,
        length::Tcpmss,
        length::TcpmssTarget,
        nat::DNAT,
        nat::SNAT,
        nat::MASQUERADE,
        nat::REDIRECT,
        log::Log,
        tcp::Tcp,
        ttl::TTL_MATCH,
        ttl::HL_MATCH,
        ttl::TTL_TARGET,
        ttl::HL_TARGET,
        ttl::Dscp,
        ttl::DscpSet,
        tos::Tos,
        tos::TosSet,
        simple::ESP,
        simple::AH,
        simple::Helper,
        simple::Cpu,
        simple::Quota,
        simple::Connbytes,
        sctp::Sctp,
        dccp::Dccp,
        hashlimit::Hashlimit,
        connlimit::Connlimit,
        tcpoptstrip::Tcpoptstrip,
        string::StringMatch,
        srh::Srh,
        ip6hdr::Ah6,
        ip6hdr::Frag,
        ip6hdr::HBH,
        ip6hdr::DST,
        ip6hdr::Mh,
        misc::Classify,
        misc::Audit,
        misc::Rpfilter,
        misc::Ecn,
        misc::Socket,
        misc::Cgroup,
        netmap::Netmap,
        synproxy::Synproxy,
        hmark::Hmark,
        ipv6header::Ipv6header,
        rt::Rt,
        connlabel::Connlabel,
        policy::Policy,
        set::Set,
        set::SetTarget,
        devgroup::Devgroup,
        devgroup::Realm,
        tproxy::Tproxy,
        tproxy::Tee,
        ecn_target::EcnTarget,
        time::Time,
        trace::Trace,
        ipcomp::Ipcomp,
        u32_match::U32Match,
        cluster::Cluster,
        bpf::Bpf,
        npt::DNPT,
        npt::SNPT,
        npt::Eui64,
        osf::Osf,
        ipvs::Ipvs,
        secmark::Connsecmark,
        secmark::Secmark,
        idletimer::Idletimer,
        nfacct::Nfacct,
        led::Led,
        rateest::RateestTarget,
        rateest::Rateest,
    ],
    // The helpers' items the extension files use through `super::`.
    items: {
        pub(crate) use values::{bang, markmask, num, xt_uint};
        pub(crate) use list_ports::list_ports;
    },
    // The registry's unit tests (a slim build runs xtnl-ipt's others: slim-check.sh --tests).
    tests: [tests, tests_ext6, tests_list_round3, tests_round3, tests_round4],
}

fn fits(e: &dyn Ext, family: Family) -> bool {
    match e.fams() {
        Fams::Both => true,
        Fams::V4 => family == Family::Ipv4,
        Fams::V6 => family == Family::Ipv6,
    }
}

/// The extension `-m NAME` (or `-j NAME` for a target) loads in `family`.
pub(crate) fn find(name: &str, target: bool, family: Family) -> Option<&'static dyn Ext> {
    // By name through an index made once: a restore asks for every `-m` and `-j` of every
    // line, and a jump to a user chain (no extension) would otherwise scan the registry.
    // FNV-1a, not SipHash: the keys are the registry's own names, and a short name hashes in
    // a few instructions (SipHash was most of the lookup's ~350).
    type ByName =
        std::collections::HashMap<&'static str, Vec<&'static dyn Ext>, xtnl_core::hash::Fnv>;
    static BY_NAME: std::sync::OnceLock<ByName> = std::sync::OnceLock::new();
    BY_NAME
        .get_or_init(|| {
            let mut m = ByName::default();
            for e in REGISTRY {
                m.entry(e.name()).or_default().push(*e);
            }
            m
        })
        .get(name)?
        .iter()
        .copied()
        .find(|e| e.is_target() == target && fits(*e, family))
}

/// The module `-p PROTO` loads implicitly when one of its options follows.
pub(crate) fn implicit(proto: u8, family: Family) -> Option<&'static dyn Ext> {
    let name = match (proto, family) {
        (1, Family::Ipv4) => "icmp",
        (58, Family::Ipv6) => "icmp6",
        (6, _) => "tcp",
        (132, _) => "sctp",
        (33, _) => "dccp",
        _ => return None,
    };
    find(name, false, family)
}

/// A plain tcp module's ports as options of the registry's tcp module.
#[cfg(feature = "extensions")]
pub(crate) fn tcp_given_of(p: &super::rule::PortsMatch) -> Vec<Given> {
    tcp::given_of(p)
}

/// Without the registry no module is loaded implicitly, so nothing asks for this.
#[cfg(not(feature = "extensions"))]
pub(crate) fn tcp_given_of(_: &super::rule::PortsMatch) -> Vec<Given> {
    Vec::new()
}

/// The `-j` names of the registry's targets (`registry_target_names` in the tests checks
/// the list against the registry), so that a build without it refuses `-j CT` naming the
/// feature rather than taking it for a jump to a chain called `CT`.
const TARGET_NAMES: &[&str] = &[
    "AUDIT",
    "CHECKSUM",
    "CLASSIFY",
    "CONNMARK",
    "CONNSECMARK",
    "CT",
    "DNAT",
    "DNPT",
    "DSCP",
    "ECN",
    "HL",
    "HMARK",
    "IDLETIMER",
    "LED",
    "LOG",
    "MARK",
    "MASQUERADE",
    "NETMAP",
    "NFLOG",
    "NFQUEUE",
    "NOTRACK",
    "RATEEST",
    "REDIRECT",
    "SECMARK",
    "SET",
    "SNAT",
    "SNPT",
    "SYNPROXY",
    "TCPMSS",
    "TCPOPTSTRIP",
    "TEE",
    "TOS",
    "TPROXY",
    "TRACE",
    "TTL",
];

/// Whether `-j NAME` names one of the registry's targets (whether or not this build has it).
pub(crate) fn is_registry_target(name: &str) -> bool {
    TARGET_NAMES.contains(&name)
}

/// Names of the extensions xtnl knows, for "not supported" messages.
pub(crate) fn known_names(target: bool) -> Vec<&'static str> {
    REGISTRY
        .iter()
        .filter(|e| e.is_target() == target)
        .map(|e| e.name())
        .collect()
}

/// A payload read from the kernel, in canonical form, if an extension here reads it and
/// iptables syntax can say all of it.
pub(crate) fn decode(
    name: &str,
    rev: u32,
    info: &[u8],
    target: bool,
    family: Family,
) -> Option<XtPayload> {
    let e = by_wire(name, rev, target, family)?;
    let info = e.canonical(info)?;
    // What `-S` could not print is not iptables syntax: keep it opaque. (The words go to a
    // buffer kept per thread: a listing decodes tens of thousands of payloads.)
    thread_local! {
        static WORDS: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    WORDS.with_borrow_mut(|w| {
        w.clear();
        e.save(&info, family, w)
    })?;
    Some(XtPayload {
        name: name.to_string(),
        rev,
        info,
        family,
    })
}

fn printer(p: &XtPayload, target: bool) -> Option<&'static dyn Ext> {
    by_wire(&p.name, p.rev, target, p.family)
}

/// ` -m NAME --opt ...` for a match payload.
pub(crate) fn save_match(p: &XtPayload, out: &mut String) {
    save(p, false, out)
}

/// ` -j NAME --opt ...` for a target payload.
pub(crate) fn save_target(p: &XtPayload, out: &mut String) {
    save(p, true, out)
}

fn save(p: &XtPayload, target: bool, out: &mut String) {
    let flag = if target { "-j" } else { "-m" };
    let family = p.family;
    match printer(p, target) {
        Some(e) => {
            let _ = write!(out, " {flag} {}", e.shown_name(&p.info));
            // Written in place (a save prints tens of thousands), taken back if it fails.
            let at = out.len();
            if e.save(&p.info, family, out).is_none() {
                out.truncate(at);
                out.push_str(" <payload not expressible in iptables syntax>");
            }
        }
        // Built by hand (this build's decoders give none): say why, never a wrong option.
        None if !ENABLED => {
            let _ = write!(
                out,
                " {flag} {} <not printed: this build has no extension registry (cargo feature `extensions`)>",
                p.name
            );
        }
        None => {
            let _ = write!(out, " {flag} {} <revision {} not supported>", p.name, p.rev);
        }
    }
}

/// A match payload as `iptables -L` of the given flavour prints it (`numeric`: `-n`).
pub fn list_match(p: &XtPayload, numeric: bool, flavour: Flavour, out: &mut String) {
    list(p, false, numeric, flavour, out)
}

/// A target payload as `iptables -L` prints it after the matches (`numeric`: `-n`).
pub fn list_target(p: &XtPayload, numeric: bool, flavour: Flavour, out: &mut String) {
    list(p, true, numeric, flavour, out)
}

fn list(p: &XtPayload, target: bool, numeric: bool, flavour: Flavour, out: &mut String) {
    let mut words = String::new();
    match printer(p, target) {
        Some(e)
            if e.list_as(flavour, &p.info, p.family, numeric, &mut words)
                .is_some() =>
        {
            out.push_str(&words)
        }
        _ => {
            // What decodes always saves (see `decode`); this is a payload built elsewhere.
            let mut t = String::new();
            save(p, target, &mut t);
            out.push_str(&t);
        }
    }
}

/// The name `-L` shows in the target column: the kernel extension's (`CT` for `-j NOTRACK`,
/// whose own words then say `NOTRACK`, as iptables prints it).
pub fn target_name(p: &XtPayload) -> String {
    p.name.clone()
}

mod pending;
pub(crate) use pending::Pending;

pub(crate) fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidInput(msg.into())
}

pub(crate) fn wire(e: WireError) -> Error {
    Error::InvalidInput(e.to_string())
}

/// Refuses a second use of an option iptables allows once.
pub(crate) fn once(given: &[Given], ext: &str) -> Result<()> {
    for (i, g) in given.iter().enumerate() {
        if given[..i].iter().any(|h| h.opt == g.opt) {
            return Err(crate::ipt::args::used_twice(ext, &format!("--{}", g.opt)));
        }
    }
    Ok(())
}

/// Refuses a module with none of its options.
pub(crate) fn need_some(given: &[Given], ext: &str) -> Result<()> {
    if given.is_empty() {
        return Err(bad(format!("{ext}: at least one option is required")));
    }
    Ok(())
}

/// xtables' final check of options that exclude each other (`xtables_options_fcheck`, run
/// once every option was read): of those given, the first two in the extension's table order
/// `order`, in libxtables' words (which end in a newline of their own).
pub(crate) fn exclusive(ext: &str, given: &[Given], order: &[&str]) -> Result<()> {
    let mut set = order.iter().filter(|o| get(given, o).is_some());
    if let (Some(a), Some(b)) = (set.next(), set.next()) {
        return Err(bad(format!(
            "{ext}: option \"--{a}\" cannot be used together with \"--{b}\".\n"
        )));
    }
    Ok(())
}

/// The last use of an option.
pub(crate) fn get<'g>(given: &'g [Given], opt: &str) -> Option<&'g Given> {
    given.iter().rev().find(|g| g.opt == opt)
}

/// A decode then an encode through the typed struct.
macro_rules! canonical_via {
    ($ty:ty) => {
        fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
            <$ty>::decode(info).ok().map(|v| v.encode())
        }
    };
}
pub(crate) use canonical_via;
