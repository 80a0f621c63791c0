//! The bodies of the fuzz targets, shared with the regression test that replays the seeds
//! and every input that once crashed (`tests/fuzz_regressions.rs` includes this file), so
//! that a crash found by fuzzing is replayed by `cargo test` through the same code.
#![allow(dead_code)]

use std::fmt::Write;

use xtnl::ipt::parse::{self, Command};
use xtnl::ipt::{compat, print, restore, tables};
use xtnl::model::Family;
use xtnl::model::{ChainPolicy, ChainType, Hook};
use xtnl::nft::{RawRule, SetElements, TableRef, codec};
use xtnl::wire::netlink::{AckRepr, NLMSG_ERROR, NlMsgs};
use xtnl::wire::nftables::{
    ChainRepr, GenRepr, RuleRepr, SetElemsRepr, TableRepr, msg, nft_msg_of, split_nfgenmsg,
};
use xtnl::xt::{XtMatch, XtTarget};

/// The iptables command-line grammar: arbitrary bytes as command lines.
///
/// First byte: bit 0 picks IPv6 as the default family; bit 1 splits the rest into arguments
/// at NUL bytes (any argument content), otherwise each line is split the way a restore file
/// line is (`split_words`). Every command that parses is then encoded for its table, decoded
/// back as a listing would, and printed: none of it may panic, and what `-S` would print
/// for the rule read back must be what it prints for the rule as parsed.
pub fn ipt_parse(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let family = if mode & 1 != 0 {
        Family::Ipv6
    } else {
        Family::Ipv4
    };
    let text = String::from_utf8_lossy(rest);
    if mode & 2 != 0 {
        let args: Vec<String> = text.split('\0').map(str::to_owned).collect();
        one(&args, family);
    } else {
        for line in text.lines() {
            if let Ok(args) = parse::split_words(line) {
                one(&args, family);
            }
        }
    }
}

fn one(args: &[String], family: Family) {
    let Ok(inv) = parse::parse(args, family) else {
        return;
    };
    let rule = match &inv.command {
        Command::Append { rule, .. }
        | Command::Insert { rule, .. }
        | Command::Delete { rule, .. }
        | Command::Replace { rule, .. }
        | Command::Check { rule, .. } => rule,
        _ => return,
    };
    let spec = print::rule_spec(rule);
    let _ = print::append_line("X", rule, true);
    if let Ok(model) = compat::to_model(rule, inv.family) {
        if let Ok(native) = codec::encode_native(&model, inv.family) {
            let _ = codec::decode(inv.family, &native.exprs, native.userdata.as_deref());
        }
    }
    let table = TableRef::new(inv.family, inv.table.clone());
    if let Some(back) = encoded_and_read_back(&table, rule) {
        // In tables of xtnl's own, rules are encoded natively and some read back in other
        // words of the same meaning (`-m conntrack --ctstate` as `-m state`); in iptables'
        // tables the encoding is iptables-nft's and must read back as written.
        if !tables::is_iptables_table(&inv.table) {
            return;
        }
        let read = print::rule_spec(&back.without_counters());
        if read == spec {
            return;
        }
        // iptables-nft itself reads one of its encodings back in other words of the same
        // meaning: `! --sport :200` is the expression `sport > 200`, listed by iptables-nft
        // 1.8.9 as `--sport 201:65535` (checked with the real tool; the words encode as a
        // range, another expression of the same match). Only a port may differ so, and the
        // words read back must be a fixed point: parsed, encoded and read back again, they
        // say the same.
        assert_eq!(
            without_ports(&read),
            without_ports(&spec),
            "rule read back differs from the rule added: {args:?}"
        );
        let again = parse::split_words(&format!("-t {} -A X{read}", inv.table))
            .ok()
            .and_then(|w| parse::parse(&w, inv.family).ok());
        let again = match again.as_ref().map(|i| &i.command) {
            Some(Command::Append { rule, .. }) => rule,
            _ => panic!("the rule read back does not parse: {read} (added: {args:?})"),
        };
        let Some(back_again) = encoded_and_read_back(&table, again) else {
            panic!("the rule read back does not encode: {read} (added: {args:?})");
        };
        assert_eq!(
            print::rule_spec(&back_again.without_counters()),
            read,
            "rule read back differs from the rule added: {args:?}, and its words read back \
             differently again"
        );
    }
}

/// `rule` encoded in iptables-nft's encoding into chain X of `table` and read back as a
/// listing reads it (its anonymous set, if any, given to the reader); `None` when it does
/// not encode.
fn encoded_and_read_back(
    table: &TableRef,
    rule: &xtnl::ipt::IptRule,
) -> Option<xtnl::ipt::IptRule> {
    let enc = compat::encode(table, rule).ok()?;
    let mut sets = SetElements::new();
    if let Some(s) = enc.sets.first() {
        sets.insert(codec::ANON_SET_NAME.to_owned(), s.elements.clone());
    }
    let raw = RawRule {
        chain: table.chain("X"),
        handle: 1,
        exprs: enc.exprs,
        userdata: enc.userdata,
        sets,
    };
    Some(compat::decode(table, &raw))
}

/// Whether `spec` holds a control character or a blank other than a space outside double
/// quotes (what the printers quote, a comment, keeps its characters when split again).
fn unquoted_blank_or_control(spec: &str) -> bool {
    let mut quoted = false;
    let mut escaped = false;
    for c in spec.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            _ if !quoted && (c.is_control() || (c != ' ' && c.is_whitespace())) => return true,
            _ => {}
        }
    }
    false
}

/// A rule's words without its tcp/udp port options (`[!] --sport/--dport P`).
fn without_ports(spec: &str) -> Vec<&str> {
    let words: Vec<&str> = spec.split(' ').collect();
    let mut out = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let port = |w: &str| matches!(w, "--sport" | "--dport");
        if words[i] == "!" && words.get(i + 1).is_some_and(|w| port(w)) {
            i += 3;
        } else if port(words[i]) {
            i += 2;
        } else {
            out.push(words[i]);
            i += 1;
        }
    }
    out
}

/// The iptables-restore format: arbitrary bytes as a restore file (the CLI refuses
/// non-UTF-8 input before parsing, so only UTF-8 reaches the parser). First byte: bit 0
/// picks IPv6.
pub fn restore_parse(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let family = if mode & 1 != 0 {
        Family::Ipv6
    } else {
        Family::Ipv4
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let _ = restore::parse_file(text, family);
}

/// Arbitrary bytes as what the kernel sends on the NETLINK_NETFILTER socket: one datagram of
/// netlink messages, iterated as the transport does (ACKs and errors with extended-ack
/// TLVs), each nf_tables message decoded as a listing decodes it: table, chain, rule (every
/// expression kind), set elements, generation; each rule then decoded to the model
/// (`nft::codec`) and to iptables' view (`ipt::compat::decode`, which types the x_tables
/// payloads), and printed. Nothing here may panic or allocate without bound.
pub fn nft_decode(data: &[u8]) {
    let mut sets = SetElements::new();
    let mut rules = Vec::new();
    let mut out = String::new();
    for m in NlMsgs::new(data) {
        let Ok(m) = m else { break };
        let _ = (m.flags(), m.seq(), m.pid());
        if m.ty() == NLMSG_ERROR {
            if let Ok(ack) = AckRepr::parse(&m) {
                let _ = write!(out, "{ack:?}");
            }
            continue;
        }
        let Some(kind) = nft_msg_of(m.ty()) else {
            continue;
        };
        let Ok((family, attrs)) = split_nfgenmsg(m.payload()) else {
            continue;
        };
        match kind {
            msg::NEWTABLE => {
                if let Ok(t) = TableRepr::parse(family, attrs) {
                    let _ = Family::from_nfproto(t.family);
                }
            }
            msg::NEWCHAIN => {
                if let Ok(c) = ChainRepr::parse(family, attrs) {
                    // What the listing's Chain::from_repr derives from it.
                    if let Some(h) = &c.hook {
                        let _ = Hook::from_number(h.hooknum);
                        let _ = c.chain_type.as_deref().and_then(ChainType::parse);
                        let _ = c.policy.and_then(ChainPolicy::from_verdict);
                    }
                }
            }
            msg::NEWRULE => {
                if let Ok(r) = RuleRepr::parse(family, attrs) {
                    for e in &r.exprs {
                        let _ = write!(out, "{e}");
                    }
                    rules.push(r);
                }
            }
            msg::NEWSETELEM => {
                if let Ok(s) = SetElemsRepr::parse(attrs) {
                    sets.entry(s.set.clone()).or_default().extend(s.elements);
                }
            }
            msg::NEWGEN => {
                let _ = GenRepr::parse(attrs);
            }
            _ => {}
        }
    }
    for r in rules {
        let Some(family) = Family::from_nfproto(r.family) else {
            continue;
        };
        let model = codec::decode_with_sets(family, &r.exprs, r.userdata.as_deref(), &|n| {
            sets.get(n).cloned()
        });
        let _ = write!(out, "{model}");
        let _ = model.is_expressible();
        let table = TableRef::new(family, r.table.clone());
        let raw = RawRule {
            chain: table.chain(r.chain.clone()),
            handle: r.handle.unwrap_or(0),
            exprs: r.exprs,
            userdata: r.userdata,
            sets: sets.clone(),
        };
        let ipt = compat::decode(&table, &raw);
        out.push_str(&print::append_line(&raw.chain.name, &ipt, true));
        // The same expressions as they would be read in iptables' own tables.
        for name in ["filter", "nat"] {
            let t = TableRef::new(family, name);
            let ipt = compat::decode(&t, &raw);
            out.push_str(&print::rule_spec(&ipt));
        }
    }
    std::hint::black_box(out);
}

/// The x_tables extensions with typed payloads, matches first, then targets.
const MATCHES: &[(&str, u32)] = &[
    ("comment", 0),
    ("multiport", 1),
    ("conntrack", 3),
    ("state", 0),
    ("tcp", 0),
    ("udp", 0),
];
const TARGETS: &[(&str, u32)] = &[
    ("DNAT", 0),
    ("DNAT", 1),
    ("DNAT", 2),
    ("SNAT", 0),
    ("SNAT", 1),
    ("SNAT", 2),
    ("MASQUERADE", 0),
    ("REDIRECT", 0),
    ("REJECT", 0),
    ("LOG", 0),
];

/// The x_tables extension payloads (`xtnl-xt`): arbitrary bytes as the `info` of a match or
/// target that the kernel reports (nft_compat's NFTA_MATCH_INFO / NFTA_TARGET_INFO, or an
/// x_tables blob). First byte: which extension and revision; second: the family. Whatever
/// decodes must re-encode to a payload that decodes to the same value.
pub fn xt_decode(data: &[u8]) {
    let [which, fam, info @ ..] = data else {
        return;
    };
    let family = match fam % 3 {
        0 => Family::Ipv4,
        1 => Family::Ipv6,
        _ => Family::Inet,
    };
    let which = usize::from(*which) % (MATCHES.len() + TARGETS.len());
    if let Some(&(name, rev)) = MATCHES.get(which) {
        if let Ok(m) = XtMatch::decode(name, rev, info) {
            let again = XtMatch::decode(m.name(), m.revision(), &m.encode())
                .expect("a decoded match re-encodes to a valid payload");
            assert_eq!(again, m, "match {name} rev {rev} round trip");
            let _ = XtMatch::from_expr(&m.to_expr());
        }
    } else {
        let (name, rev) = TARGETS[which - MATCHES.len()];
        if let Ok(t) = XtTarget::decode(name, rev, info, family) {
            let again = XtTarget::decode(t.name(), t.revision(), &t.encode(), family)
                .expect("a decoded target re-encodes to a valid payload");
            assert_eq!(again, t, "target {name} rev {rev} round trip");
            let _ = XtTarget::from_expr(&t.to_expr(), family);
        }
    }
}

/// `xtnl apply` documents (`json::parse`): arbitrary bytes as a document, through parsing
/// and validation; none of it may panic.
pub fn json_parse(data: &[u8]) {
    let _ = xtnl::json::parse(data);
}

/// The x_tables blob decoder of the legacy backend (through `legacy::RawTable`, the public
/// face of the private `legacy::blob` and `legacy::table`): arbitrary bytes as what
/// `IPT_SO_GET_INFO` and `IPT_SO_GET_ENTRIES` return. First byte: bit 0 picks IPv6; then the
/// 84-byte getinfo reply, then the entries. A table that decodes must lay out again and decode
/// from that layout to the same table, counters aside.
pub fn xt_blob(data: &[u8]) {
    use xtnl::legacy::{RawTable, Table};
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let family = if mode & 1 != 0 {
        Family::Ipv6
    } else {
        Family::Ipv4
    };
    let Ok(raw) = RawTable::decode(rest) else {
        return;
    };
    let info = &raw.info;
    let Ok(table) = raw.to_table(family) else {
        return;
    };
    let Ok(layout) = table.to_blob() else {
        return;
    };
    let again = Table::from_blob(
        family,
        &info.name,
        info.valid_hooks,
        &layout.hook_entry,
        &layout.underflow,
        &layout.blob,
    )
    .expect("a table laid out by xtnl decodes");
    // Rules are kept as the bytes read, and a layout rewrites their offsets, `comefrom` and
    // counters (the kernel keeps counters across a replace; the backend adds the replaced
    // table's back). So: the structure must survive, and laying out again must give the very
    // same bytes.
    let shape = |t: &Table| -> Vec<(String, Option<usize>, i32, Vec<String>)> {
        t.chains
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    c.hook,
                    c.policy,
                    c.rules.iter().map(|r| format!("{:?}", r.verdict)).collect(),
                )
            })
            .collect()
    };
    assert_eq!(
        shape(&again),
        shape(&table),
        "layout round trip: chains and verdicts"
    );
    let Ok(relaid) = again.to_blob() else {
        panic!("a table laid out by xtnl lays out again");
    };
    assert_eq!(relaid.blob, layout.blob, "layout round trip: bytes");
    assert_eq!(
        relaid.hook_entry, layout.hook_entry,
        "layout round trip: hook entries"
    );
    assert_eq!(
        relaid.underflow, layout.underflow,
        "layout round trip: underflows"
    );
}

/// The extension registry's kernel names and revisions (`crates/xtnl-ipt/src/ext/`): matches, then
/// targets. `set` and `SET` ask the kernel for set names, which a fuzz target must not do:
/// `set` stays at its place with a revision the registry does not read (so the indices of
/// the seeds hold), `SET` is left out; tests/ext_diff.rs covers both.
const EXT_MATCHES: &[(&str, u32)] = &[
    ("addrtype", 1),
    ("connlimit", 1),
    ("connmark", 1),
    ("conntrack", 3),
    ("dccp", 0),
    ("devgroup", 0),
    ("realm", 0),
    ("hashlimit", 3),
    ("icmp", 0),
    ("icmp6", 0),
    ("ah", 0),
    ("frag", 0),
    ("hbh", 0),
    ("dst", 0),
    ("mh", 0),
    ("iprange", 1),
    ("owner", 1),
    ("length", 0),
    ("tcpmss", 0),
    ("limit", 0),
    ("mac", 0),
    ("physdev", 0),
    ("mark", 1),
    ("rpfilter", 0),
    ("ecn", 0),
    ("socket", 3),
    ("cgroup", 2),
    ("pkttype", 0),
    ("recent", 1),
    ("sctp", 0),
    ("set", 0),
    ("esp", 0),
    ("helper", 0),
    ("cpu", 0),
    ("quota", 0),
    ("connbytes", 0),
    ("srh", 1),
    ("statistic", 0),
    ("string", 1),
    ("tcp", 0),
    ("tos", 1),
    ("ttl", 0),
    ("hl", 0),
    ("dscp", 0),
];
const EXT_TARGETS: &[(&str, u32)] = &[
    ("CHECKSUM", 0),
    ("CONNMARK", 2),
    ("CT", 2),
    ("TCPMSS", 0),
    ("LOG", 0),
    ("MARK", 2),
    ("CLASSIFY", 0),
    ("AUDIT", 0),
    ("DNAT", 2),
    ("DNAT", 1),
    ("DNAT", 0),
    ("SNAT", 0),
    ("SNAT", 1),
    ("MASQUERADE", 0),
    ("REDIRECT", 0),
    ("NETMAP", 0),
    ("NFLOG", 0),
    ("NFQUEUE", 3),
    ("TCPOPTSTRIP", 0),
    ("TOS", 1),
    ("TTL", 0),
    ("HL", 0),
    ("DSCP", 0),
    ("TPROXY", 1),
    ("TEE", 1),
    ("ECN", 0),
];

/// Extensions added later, after both lists so that the first byte of the seeds and
/// regressions above keeps naming the same extension: (name, revision, target).
const EXT_LATER: &[(&str, u32, bool)] = &[
    ("time", 0, false),
    ("u32", 0, false),
    ("ipcomp", 0, false),
    ("cluster", 0, false),
    ("bpf", 1, false),
    ("TRACE", 0, true),
    ("osf", 0, false),
    ("ipvs", 0, false),
    ("eui64", 0, false),
    ("DNPT", 0, true),
    ("SNPT", 0, true),
    ("CONNSECMARK", 0, true),
    ("SECMARK", 1, true),
    ("IDLETIMER", 1, true),
    ("IDLETIMER", 0, true),
    ("RATEEST", 0, true),
    ("LED", 0, true),
];

/// The extension registry's decoders (`crates/xtnl-ipt/src/ext/`), reached as the kernel's bytes reach
/// them: an nft_compat `match`/`target` expression read back in an iptables table. First
/// byte: which extension and revision; second: bit 0 the family, bit 1 the table (filter or
/// mangle; nat for NAT targets). No decoder may panic, nor the `-S` and `-L` printers; a
/// rule that decodes as iptables syntax and that the parser accepts back must print the
/// same again, and read the same once encoded again.
pub fn ext_decode(data: &[u8]) {
    use xtnl::ipt::Flavour;
    use xtnl::ipt::listing::{ChainListing, render_table};
    use xtnl::wire::expr::{Expr, Match, Target};
    let [which, mode, info @ ..] = data else {
        return;
    };
    let family = if mode & 1 != 0 {
        Family::Ipv6
    } else {
        Family::Ipv4
    };
    let which = usize::from(*which) % (EXT_MATCHES.len() + EXT_TARGETS.len() + EXT_LATER.len());
    let later = which
        .checked_sub(EXT_MATCHES.len() + EXT_TARGETS.len())
        .and_then(|i| EXT_LATER.get(i));
    let matched = match later {
        Some(&(name, rev, false)) => Some((name, rev)),
        Some(_) => None,
        None => EXT_MATCHES.get(which).copied(),
    };
    let (expr, table) = match matched {
        Some((name, rev)) => {
            let m = Match {
                name: name.into(),
                rev,
                info: info.to_vec(),
            };
            (
                Expr::Match(m),
                if mode & 2 != 0 { "mangle" } else { "filter" },
            )
        }
        None => {
            let (name, rev) = match later {
                Some(&(name, rev, _)) => (name, rev),
                None => EXT_TARGETS[which - EXT_MATCHES.len()],
            };
            let nat = matches!(name, "DNAT" | "SNAT" | "MASQUERADE" | "REDIRECT" | "NETMAP");
            let t = Target {
                name: name.into(),
                rev,
                info: info.to_vec(),
            };
            (Expr::Target(t), if nat { "nat" } else { "mangle" })
        }
    };
    let table = TableRef::new(family, table);
    let raw = RawRule {
        chain: table.chain("X"),
        handle: 1,
        exprs: vec![expr],
        userdata: None,
        sets: SetElements::new(),
    };
    let rule = compat::decode(&table, &raw);
    let spec = print::rule_spec(&rule);
    let chains = [ChainListing {
        name: "X".into(),
        policy: None,
        policy_counters: None,
        references: 0,
        rules: vec![(1, rule.clone())],
    }];
    for args in [&["-n", "-L"][..], &["-L"], &["-n", "-v", "-L"]] {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        if let Ok(inv) = parse::parse(&args, family) {
            for flavour in [Flavour::Nft, Flavour::Legacy] {
                let _ = render_table(&chains, None, &inv, family, flavour);
            }
        }
    }
    if !rule.is_expressible() {
        return;
    }
    // Names iptables' printers write as they are (physdev's interfaces, as libxt_physdev
    // `printf(" --physdev-in %s", ...)`; CT's `--helper`, as libxt_CT): one holding a blank
    // other than a space or a control character outside quotes (any writer of the kernel's
    // bytes can put one there) does not read back, in iptables-restore neither; nor does a
    // physdev name with a quote or a backslash, or an empty name (below).
    if unquoted_blank_or_control(&spec)
        || ((spec.contains(" --physdev-in ") || spec.contains(" --physdev-out "))
            && spec.contains(['"', '\'', '\\']))
    {
        return;
    }
    let Ok(words) = parse::split_words(&format!("-t {} -A X{spec}", table.name)) else {
        panic!("the printed rule splits: {spec}");
    };
    let Ok(inv) = parse::parse(&words, family) else {
        return;
    };
    let Command::Append { rule: again, .. } = &inv.command else {
        return;
    };
    // An empty name in a payload (physdev's `--physdev-out` with the flag set and no name:
    // any writer of the kernel's bytes can make one) prints as iptables prints it, nothing
    // between two blanks, which no parser reads back, iptables' neither.
    let words: Vec<&str> = spec.split(' ').collect();
    if words
        .windows(2)
        .any(|w| w[0].starts_with("--") && w[1].is_empty())
    {
        return;
    }
    // A rate iptables prints rounded (`limit`, `hashlimit`: `N/unit` of a period that is no
    // whole fraction of the unit) reads back as another period, in iptables too.
    if spec.contains("limit") {
        return;
    }
    // So does a RATEEST time constant past 2^32 us (iptables' unsigned arithmetic wraps;
    // crates/xtnl-ipt/src/ext/tests_ext6.rs checks the others read back).
    if spec.contains("-j RATEEST") {
        return;
    }
    assert_eq!(print::rule_spec(again), spec, "printed again differently");
    // Written again and read back, it says the same (the bytes may differ where the kernel's
    // had fields iptables never sets, which its printer does not show either). NFLOG's
    // `--nflog-range` (no effect in the kernel) is left out of the native `log` expression
    // by iptables-nft, and so by xtnl: it is not compared.
    if spec.contains("--nflog-range") {
        return;
    }
    if let Ok(enc) = compat::encode(&table, again) {
        let raw = RawRule {
            exprs: enc.exprs,
            userdata: enc.userdata,
            ..raw
        };
        let back = compat::decode(&table, &raw);
        assert_eq!(
            print::rule_spec(&back),
            spec,
            "{spec}: written again, reads back differently"
        );
    }
}

/// `xtnl nft -j -f` documents: arbitrary bytes parsed as nft's JSON
/// (`xtnl_nft_json::Document`) and planned by `nftjson::apply` on a connection that replays
/// an empty capture (no kernel, no xtables lock): the plan runs until its first read of the
/// kernel or until the batch is sent, both of which the replay refuses with an error. None of
/// it may panic, and a document the types read whole serializes and parses back to the same.
pub fn nft_json_plan(data: &[u8]) {
    use xtnl::lock::LockMode;
    use xtnl::nft::Session;
    use xtnl::transport::{Capture, Conn};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(doc) = xtnl_nft_json::Document::from_json(text) else {
        return;
    };
    let again = doc.to_json().expect("a typed document serializes");
    let reparsed = xtnl_nft_json::Document::from_json(&again).expect("its own JSON parses");
    // A shape kept whole in an `Other` variant may come back typed (a duplicate key, which
    // the types refuse, is gone from the `serde_json::Value` it is kept as), so the round
    // trip is exact for documents the types read whole: the only ones the front plans.
    if doc.unknowns().is_empty() {
        assert_eq!(
            reparsed.to_json().expect("serializes"),
            again,
            "the document changed through its own JSON"
        );
    }
    let mut session = Session::builder()
        .lock_mode(LockMode::Never)
        .open_on(Conn::replay(Capture::default()));
    let _ = xtnl::nftjson::apply(&mut session, &doc);
}
