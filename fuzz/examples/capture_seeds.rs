//! Writes the fuzz seed corpus (`fuzz/seeds/TARGET/`): iptables command lines and restore
//! files from the tests' corpora, and real kernel replies captured in a scratch network
//! namespace (as root): tables, chains, rules written by iptables-nft, ip6tables-nft and
//! nft, anonymous set elements, the generation, and error ACKs with extended-ack text.
//!
//! `cargo run --manifest-path fuzz/Cargo.toml --example capture_seeds` (from the repository
//! root). Deterministic file names; re-running replaces the seeds.

#[path = "../../src/scratch.rs"]
mod scratch;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use xtnl::transport::NlSocket;
use xtnl::wire::expr::Expr;
use xtnl::wire::netlink::{
    MsgWriter, NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST, NLMSG_DONE, NLMSG_ERROR, NlMsgs,
};
use xtnl::wire::nftables::{
    NFNL_MSG_BATCH_BEGIN, NFNL_MSG_BATCH_END, NFNL_SUBSYS_NFTABLES, NFTA_CHAIN_NAME,
    NFTA_CHAIN_TABLE, NFTA_SET_ELEM_LIST_SET, NFTA_SET_ELEM_LIST_TABLE, RuleRepr, msg, nfgenmsg,
    nfproto, nft_type, split_nfgenmsg,
};

const V4_RULES: &[(&str, &str, &str)] = &[
    ("filter", "INPUT", "-p tcp -m tcp --dport 22 -j ACCEPT"),
    ("filter", "INPUT", "! -s 198.51.100.0/24 -i eth+ -j DROP"),
    (
        "filter",
        "INPUT",
        "-p udp -m udp ! --sport 100:200 -j RETURN",
    ),
    (
        "filter",
        "INPUT",
        "-p tcp -m multiport --dports 80,443,8000:8080 -j ACCEPT",
    ),
    (
        "filter",
        "INPUT",
        "-p tcp -m multiport --ports 22,2222 -j ACCEPT",
    ),
    (
        "filter",
        "INPUT",
        "-m comment --comment \"with spaces: and --> arrows\" -j LOG --log-prefix \"x: \" --log-level 6",
    ),
    (
        "filter",
        "INPUT",
        "-m state --state NEW,ESTABLISHED -j ACCEPT",
    ),
    (
        "filter",
        "INPUT",
        "-m conntrack ! --ctstate NEW,UNTRACKED,DNAT -j DROP",
    ),
    (
        "filter",
        "INPUT",
        "-p tcp -j REJECT --reject-with tcp-reset",
    ),
    (
        "filter",
        "INPUT",
        "-j REJECT --reject-with icmp-host-prohibited",
    ),
    ("filter", "INPUT", "-j user-chain"),
    ("filter", "FORWARD", "-s 192.0.2.0/24 -o eth+ -g user-chain"),
    (
        "filter",
        "user-chain",
        "-d 152.1.1.1/32 -i eth1 -p tcp -m comment --comment \"VCL: allow inbound TCP traffic on the NAT port ranges to public eth1\" -m multiport --dports 5700:6500,9696:9701,49152:65535 -m state --state NEW,RELATED,ESTABLISHED -j ACCEPT",
    ),
    (
        "nat",
        "PREROUTING",
        "-m comment --comment \"VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-5205\" -j vcld-5205",
    ),
    (
        "nat",
        "vcld-5205",
        "-i eth1 -p tcp -m comment --comment \"VCL: forward eth1:tcp/50443 --> 10.1.2.3:3389\" -m tcp --dport 50443 -j DNAT --to-destination 10.1.2.3:3389",
    ),
    (
        "nat",
        "PREROUTING",
        "-p udp -m udp --dport 53 -j DNAT --to-destination 192.0.2.10-192.0.2.20",
    ),
    (
        "nat",
        "PREROUTING",
        "-p tcp -m tcp --dport 80 -j DNAT --to-destination 192.0.2.10:8000-8010",
    ),
    (
        "nat",
        "PREROUTING",
        "-p tcp -m tcp --dport 8080 -j REDIRECT --to-ports 80",
    ),
    (
        "nat",
        "POSTROUTING",
        "! -d 10.0.0.0/20 -o eth1 -j MASQUERADE",
    ),
    (
        "nat",
        "POSTROUTING",
        "-p tcp -j MASQUERADE --to-ports 1024-2048",
    ),
    (
        "nat",
        "POSTROUTING",
        "-p tcp -j SNAT --to-source 198.51.100.1:1000-2000",
    ),
    ("mangle", "PREROUTING", "-m state --state NEW -j RETURN"),
    ("raw", "OUTPUT", "-m comment --comment raw -j DROP"),
];

const V6_RULES: &[(&str, &str, &str)] = &[
    (
        "filter",
        "INPUT",
        "-d 2001:db8::/32 -p tcp -m tcp --dport 443 -j ACCEPT",
    ),
    ("filter", "INPUT", "-p ipv6-icmp -j ACCEPT"),
    (
        "filter",
        "INPUT",
        "-i eth0 -p udp -m multiport --dports 53,123 -j ACCEPT",
    ),
    (
        "filter",
        "INPUT",
        "-j REJECT --reject-with icmp6-adm-prohibited",
    ),
    (
        "nat",
        "PREROUTING",
        "-p tcp -m tcp --dport 80 -j DNAT --to-destination [2001:db8::2]:8080",
    ),
    (
        "nat",
        "POSTROUTING",
        "-s 2001:db8::/64 -j SNAT --to-source 2001:db8::99",
    ),
    ("nat", "POSTROUTING", "-o eth1 -j MASQUERADE"),
];

const NFT_RULES: &str = r#"
table ip own {
    chain c {
        tcp dport { 22, 80, 1000-2000 } accept
        ct state established,related accept
        ip saddr 192.0.2.0/24 iifname "eth1" counter drop comment "c1"
        meta l4proto tcp reject with tcp reset
        reject with icmp host-prohibited
        log prefix "x: " level info
        ip daddr != 203.0.113.0/27 tcp sport 1024-65535 return
    }
    chain n {
        type nat hook prerouting priority dstnat; policy accept;
        tcp dport 80 dnat to 192.0.2.10:8080
        udp dport 53 dnat to 192.0.2.10-192.0.2.20
        tcp dport 8080 redirect to :80
        jump c
    }
    chain p {
        type nat hook postrouting priority srcnat; policy accept;
        oifname "eth1" masquerade
        ip saddr 192.0.2.0/24 snat to 198.51.100.1
    }
}
table inet own6 {
    chain c {
        type filter hook input priority 0; policy drop;
        ip6 saddr 2001:db8::/32 accept
        meta nfproto ipv4 udp dport { 53, 123 } accept
        reject with icmpx admin-prohibited
    }
}
"#;

/// iptables command lines (the ipt_parse target's format: mode byte, then the line).
const COMMAND_LINES: &[&str] = &[
    "-N vcld-5205",
    "-t nat -X vcld-5205",
    "-t nat -F",
    "-Z INPUT",
    "-P FORWARD DROP",
    "-E old new",
    "-S",
    "-t nat -S PREROUTING",
    "-L -n -v -x --line-numbers",
    "-L INPUT -Z",
    "-I INPUT 2 -j ACCEPT",
    "-D INPUT 1",
    "-R INPUT 1 -s 192.0.2.1 -j DROP",
    "-C INPUT -p tcp --dport 22 -j ACCEPT",
    "-w 5 -W 1000 -A INPUT -j ACCEPT",
    "--insert PREROUTING --table nat --jump vcld-5205 --match comment --comment \"VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-5205\"",
    "--insert vcld-5205 --table nat --in-interface eth1 --protocol tcp --match comment --comment \"VCL: forward eth1:tcp/50443 --> 10.1.2.3:3389\" --match tcp --destination-port 50443 --jump DNAT --to-destination 10.1.2.3:3389",
    "--delete PREROUTING -t nat -j vcld-5205 -m comment --comment \"VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-5205\"",
    "-t own -A c -p tcp -m multiport --dports 22,80,1000:2000 -j ACCEPT",
    "-t own -A c -m conntrack --ctstate RELATED,ESTABLISHED -j LOG --log-prefix own",
];

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    let dirs = [
        "ipt_parse",
        "restore_parse",
        "nft_decode",
        "xt_decode",
        "xt_blob",
    ];
    for d in dirs {
        let p = root.join(d);
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create seed dir");
    }
    let mut seeds = Seeds { root: root.clone() };

    // ipt_parse: the specs as -A lines, and the other commands.
    for (i, (t, c, r)) in V4_RULES.iter().enumerate() {
        seeds.put(
            "ipt_parse",
            &format!("v4-{i:02}"),
            &line(0, &format!("-t {t} -A {c} {r}")),
        );
    }
    for (i, (t, c, r)) in V6_RULES.iter().enumerate() {
        seeds.put(
            "ipt_parse",
            &format!("v6-{i:02}"),
            &line(1, &format!("-t {t} -A {c} {r}")),
        );
    }
    for (i, l) in COMMAND_LINES.iter().enumerate() {
        seeds.put("ipt_parse", &format!("cmd-{i:02}"), &line(0, l));
    }
    // One with NUL-separated arguments (mode bit 1).
    let mut nul = vec![2u8];
    nul.extend_from_slice(b"-A\0INPUT\0-m\0comment\0--comment\0two words\0-j\0ACCEPT");
    seeds.put("ipt_parse", "argv-nul", &nul);

    scratch::enter_new().expect("unshare(CLONE_NEWNET): run as root");
    scratch::refuse_initial().expect("not in the initial network namespace");
    let v4 = restore_text(V4_RULES, &["user-chain"], &["vcld-5205"]);
    let v6 = restore_text(V6_RULES, &[], &[]);
    piped("iptables-nft-restore", &[], &v4);
    piped("ip6tables-nft-restore", &[], &v6);
    piped("nft", &["-f", "-"], NFT_RULES);
    seeds.put("restore_parse", "v4", &line(0, &v4));
    seeds.put("restore_parse", "v6", &line(1, &v6));
    let saved = output("iptables-nft-save", &[]);
    seeds.put("restore_parse", "v4-saved", &line(0, &saved));
    seeds.put(
        "restore_parse",
        "noflush-counters",
        &line(0, "*nat\n:vcld-1 - [0:0]\n[3:180] -A vcld-1 -p tcp -m tcp --dport 50022 -j DNAT --to-destination 192.0.2.3:22\n# comment\nCOMMIT\n"),
    );

    // Kernel replies, as the datagrams the socket returns.
    let mut sock = NlSocket::open().expect("netlink socket");
    let gen_dgrams = exchange(&mut sock, msg::GETGEN, nfproto::UNSPEC, 0, |_| {});
    seeds.put_all("nft_decode", "gen", &gen_dgrams);
    let tables = exchange(
        &mut sock,
        msg::GETTABLE,
        nfproto::UNSPEC,
        NLM_F_DUMP,
        |_| {},
    );
    seeds.put_all("nft_decode", "tables", &tables);
    let chains = exchange(
        &mut sock,
        msg::GETCHAIN,
        nfproto::UNSPEC,
        NLM_F_DUMP,
        |_| {},
    );
    seeds.put_all("nft_decode", "chains", &chains);
    let rules = exchange(&mut sock, msg::GETRULE, nfproto::UNSPEC, NLM_F_DUMP, |_| {});
    // Whole dump datagrams are large; one message per seed keeps seeds small and each
    // meaningful.
    let mut n = 0;
    let mut lookups = Vec::new();
    let mut xt = 0;
    for d in &rules {
        for m in NlMsgs::new(d) {
            let m = m.expect("kernel message");
            if m.ty() == NLMSG_DONE {
                seeds.put("nft_decode", "done", m.bytes());
                continue;
            }
            seeds.put("nft_decode", &format!("rule-{n:03}"), m.bytes());
            n += 1;
            let (fam, attrs) = split_nfgenmsg(m.payload()).expect("nfgenmsg");
            let r = RuleRepr::parse(fam, attrs).expect("rule");
            for e in &r.exprs {
                match e {
                    Expr::Lookup(l) => {
                        lookups.push((fam, r.table.clone(), l.set.clone(), m.bytes().to_vec()))
                    }
                    Expr::Match(x) => {
                        if let Some(i) = xt_index(&x.name, x.rev, true) {
                            let mut s = vec![i, fam_byte(fam)];
                            s.extend_from_slice(&x.info);
                            seeds.put("xt_decode", &format!("{}-{}-{xt:03}", x.name, x.rev), &s);
                            xt += 1;
                        }
                    }
                    Expr::Target(x) => {
                        if let Some(i) = xt_index(&x.name, x.rev, false) {
                            let mut s = vec![i, fam_byte(fam)];
                            s.extend_from_slice(&x.info);
                            seeds.put("xt_decode", &format!("{}-{}-{xt:03}", x.name, x.rev), &s);
                            xt += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    // A rule with the elements of the set it looks up, as a listing reads them together.
    for (i, (fam, table, set, rule)) in lookups.iter().enumerate() {
        let elems = exchange(&mut sock, msg::GETSETELEM, *fam, NLM_F_DUMP, |w| {
            w.strz(NFTA_SET_ELEM_LIST_TABLE, table);
            w.strz(NFTA_SET_ELEM_LIST_SET, set);
        });
        let mut s: Vec<u8> = elems.concat();
        s.extend_from_slice(rule);
        seeds.put("nft_decode", &format!("set-and-rule-{i}"), &s);
    }
    // Errors: a missing chain (ENOENT with the kernel's text), and a refused batch.
    let missing = exchange(&mut sock, msg::GETCHAIN, nfproto::IPV4, 0, |w| {
        w.strz(NFTA_CHAIN_TABLE, "filter");
        w.strz(NFTA_CHAIN_NAME, "no-such-chain");
    });
    seeds.put_all("nft_decode", "enoent", &missing);
    let refused = refused_batch(&mut sock);
    seeds.put_all("nft_decode", "batch-error", &refused);

    // x_tables blobs as iptables-legacy writes them, read back through the legacy backend.
    piped("iptables-legacy-restore", &[], &v4);
    piped("ip6tables-legacy-restore", &[], &v6);
    for (fam, mode, tables) in [
        (
            xtnl::model::Family::Ipv4,
            0u8,
            &["filter", "nat", "mangle", "raw"][..],
        ),
        (xtnl::model::Family::Ipv6, 1u8, &["filter", "nat"][..]),
    ] {
        let lock = xtnl::lock::XtablesLock::new(
            std::env::temp_dir().join("xtnl-capture-seeds.lock"),
            xtnl::lock::WaitPolicy::Forever,
        );
        let xs = xtnl::legacy::Legacy::open(fam, lock).expect("x_tables socket");
        for t in tables {
            let raw = xs.read_raw(t).expect("read x_tables table");
            let (info, blob) = (raw.info, raw.entries);
            let mut s = vec![mode];
            s.extend_from_slice(&getinfo_bytes(&info));
            s.extend_from_slice(&blob);
            seeds.put("xt_blob", &format!("{t}-{mode}"), &s);
        }
    }
    eprintln!("seeds written under {}", root.display());
}

/// `struct ipt_getinfo` as the kernel returns it (84 bytes, native byte order).
fn getinfo_bytes(i: &xtnl::legacy::GetInfo) -> Vec<u8> {
    let mut b = vec![0u8; 32];
    b[..i.name.len()].copy_from_slice(i.name.as_bytes());
    b.extend_from_slice(&i.valid_hooks.to_ne_bytes());
    for v in i.hook_entry.iter().chain(i.underflow.iter()) {
        b.extend_from_slice(&v.to_ne_bytes());
    }
    b.extend_from_slice(&i.num_entries.to_ne_bytes());
    b.extend_from_slice(&i.size.to_ne_bytes());
    b
}

fn fam_byte(fam: u8) -> u8 {
    match fam {
        nfproto::IPV6 => 1,
        _ => 0,
    }
}

/// The xt_decode target's index of (name, rev): matches first, then targets.
fn xt_index(name: &str, rev: u32, is_match: bool) -> Option<u8> {
    let matches = [
        ("comment", 0),
        ("multiport", 1),
        ("conntrack", 3),
        ("state", 0),
        ("tcp", 0),
        ("udp", 0),
    ];
    let targets = [
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
    if is_match {
        matches
            .iter()
            .position(|&(n, r)| n == name && r == rev)
            .map(|i| i as u8)
    } else {
        targets
            .iter()
            .position(|&(n, r)| n == name && r == rev)
            .map(|i| (i + matches.len()) as u8)
    }
}

struct Seeds {
    root: PathBuf,
}

impl Seeds {
    fn put(&mut self, target: &str, name: &str, bytes: &[u8]) {
        std::fs::write(self.root.join(target).join(name), bytes).expect("write seed");
    }
    fn put_all(&mut self, target: &str, name: &str, dgrams: &[Vec<u8>]) {
        for (i, d) in dgrams.iter().enumerate() {
            self.put(target, &format!("{name}-{i}"), d);
        }
    }
}

fn line(mode: u8, text: &str) -> Vec<u8> {
    let mut v = vec![mode];
    v.extend_from_slice(text.as_bytes());
    v
}

fn restore_text(
    rules: &[(&str, &str, &str)],
    filter_chains: &[&str],
    nat_chains: &[&str],
) -> String {
    let mut s = String::new();
    for table in ["filter", "nat", "mangle", "raw"] {
        let these: Vec<_> = rules.iter().filter(|r| r.0 == table).collect();
        if these.is_empty() {
            continue;
        }
        s.push_str(&format!("*{table}\n"));
        let user = if table == "filter" {
            filter_chains
        } else if table == "nat" {
            nat_chains
        } else {
            &[]
        };
        for c in user {
            s.push_str(&format!(":{c} - [0:0]\n"));
        }
        for (_, c, r) in these {
            s.push_str(&format!("-A {c} {r}\n"));
        }
        s.push_str("COMMIT\n");
    }
    s
}

fn piped(program: &str, args: &[&str], input: &str) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let st = child.wait().unwrap();
    assert!(st.success(), "{program} {args:?} failed");
}

fn output(program: &str, args: &[&str]) -> String {
    let o = Command::new(program).args(args).output().unwrap();
    assert!(o.status.success());
    String::from_utf8(o.stdout).unwrap()
}

/// Sends one request and returns every datagram of its answer, through its ACK or DONE.
fn exchange(
    sock: &mut NlSocket,
    m: u8,
    family: u8,
    flags: u16,
    attrs: impl FnOnce(&mut xtnl::wire::attr::AttrWriter<'_>),
) -> Vec<Vec<u8>> {
    let seq = sock.next_seq();
    let mut w = MsgWriter::new();
    let ack = if flags & NLM_F_DUMP == 0 {
        NLM_F_ACK
    } else {
        0
    };
    w.message(
        nft_type(m),
        NLM_F_REQUEST | flags | ack,
        seq,
        &nfgenmsg(family, 0),
        attrs,
    );
    sock.send(w.as_bytes()).expect("send");
    let mut out = Vec::new();
    loop {
        let d = sock.recv(false).expect("recv").expect("datagram").to_vec();
        let last =
            NlMsgs::new(&d).any(|m| m.is_ok_and(|m| m.ty() == NLMSG_DONE || m.ty() == NLMSG_ERROR));
        out.push(d);
        if last {
            return out;
        }
    }
}

/// A batch whose second rule names a missing chain: ACK, error with extended ack, and the
/// batch's own replies.
fn refused_batch(sock: &mut NlSocket) -> Vec<Vec<u8>> {
    let base = sock.next_seq();
    let mut w = MsgWriter::new();
    w.message(
        NFNL_MSG_BATCH_BEGIN,
        NLM_F_REQUEST,
        base,
        &nfgenmsg(nfproto::UNSPEC, NFNL_SUBSYS_NFTABLES),
        |_| {},
    );
    w.message(
        nft_type(msg::NEWCHAIN),
        NLM_F_REQUEST | NLM_F_ACK | 0x400,
        base + 1,
        &nfgenmsg(nfproto::IPV4, 0),
        |a| {
            a.strz(NFTA_CHAIN_TABLE, "filter");
            a.strz(NFTA_CHAIN_NAME, "seed-chain");
        },
    );
    w.message(
        nft_type(msg::NEWRULE),
        NLM_F_REQUEST | NLM_F_ACK | 0x400 | 0x800,
        base + 2,
        &nfgenmsg(nfproto::IPV4, 0),
        |a| {
            a.strz(1, "filter");
            a.strz(2, "no-such-chain");
        },
    );
    w.message(
        NFNL_MSG_BATCH_END,
        NLM_F_REQUEST,
        base + 3,
        &nfgenmsg(nfproto::UNSPEC, NFNL_SUBSYS_NFTABLES),
        |_| {},
    );
    sock.skip_seqs(3);
    sock.send(w.as_bytes()).expect("send batch");
    let mut out = Vec::new();
    while let Some(d) = sock.recv(true).expect("recv") {
        out.push(d.to_vec());
    }
    out
}
