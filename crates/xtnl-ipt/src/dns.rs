//! A stub resolver for host names in `-s`/`-d` that `/etc/hosts` does not hold, as glibc's
//! `getaddrinfo` asks DNS for iptables (`hosts: files dns`): the nameservers of
//! `/etc/resolv.conf` (up to three, `127.0.0.1` when it names none), its `search`/`domain`
//! list with `ndots`, `options timeout:N attempts:N` (defaults 5 and 2, glibc's limits 30
//! and 5), one `A` question for iptables, `AAAA` for ip6tables, over UDP with the recursion
//! flag, again over TCP when the answer is truncated. The addresses are those of the name's
//! answer records, CNAMEs followed, in the answer's order.
//!
//! xtnl is a static binary without NSS, so it does this itself. Only fixed root-owned paths
//! are read (`/etc/resolv.conf`, `/proc/sys/kernel/hostname` for the default search domain);
//! nothing of the caller's environment (`RES_OPTIONS`, `LOCALDOMAIN`, `HOSTALIASES`) steers
//! it, delegated run or not. A reply counts only when it comes from the server asked, carries
//! the query's random id and echoes its question. The DNS message format is the `simple-dns`
//! crate's (vendor-notes.md).

#![deny(missing_docs)]

use std::hash::{BuildHasher, Hasher};
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use simple_dns::rdata::RData;
use simple_dns::{CLASS, Name, Packet, PacketFlag, QCLASS, QTYPE, Question, RCODE, TYPE};

use crate::model::Family;

/// The resolver configuration glibc reads.
const RESOLV_CONF: &str = "/etc/resolv.conf";
/// Where the default search domain comes from when resolv.conf names none (glibc takes the
/// domain part of `gethostname`).
const HOSTNAME: &str = "/proc/sys/kernel/hostname";

/// What resolv.conf says, with glibc's defaults and limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Conf {
    nameservers: Vec<IpAddr>,
    search: Vec<String>,
    ndots: usize,
    timeout: u64,
    attempts: u32,
}

impl Default for Conf {
    fn default() -> Conf {
        Conf {
            nameservers: Vec::new(),
            search: Vec::new(),
            ndots: 1,
            timeout: 5,
            attempts: 2,
        }
    }
}

/// glibc's `MAXNS`, `MAXDNSRCH`, `RES_MAXNDOTS`, `RES_MAXRETRANS`, `RES_MAXRETRY`.
const MAXNS: usize = 3;
const MAXDNSRCH: usize = 6;
const MAXNDOTS: usize = 15;
const MAXTIMEOUT: u64 = 30;
const MAXATTEMPTS: u32 = 5;

/// Reads resolv.conf's text as glibc's `res_init` does: `nameserver` (numeric, the first
/// three), `domain` and `search` (the last of them wins), `options`.
pub(crate) fn parse_conf(text: &str, hostname: Option<&str>) -> Conf {
    let mut c = Conf::default();
    let mut search: Option<Vec<String>> = None;
    for line in text.lines() {
        if line.starts_with(['#', ';']) {
            continue;
        }
        let mut f = line.split_whitespace();
        match f.next() {
            Some("nameserver") => {
                if let Some(a) = f.next().and_then(|a| a.parse::<IpAddr>().ok())
                    && c.nameservers.len() < MAXNS
                {
                    c.nameservers.push(a);
                }
            }
            Some("domain") => search = f.next().map(|d| vec![d.to_string()]),
            Some("search") => search = Some(f.take(MAXDNSRCH).map(str::to_string).collect()),
            Some("options") => {
                for o in f {
                    if let Some(n) = o.strip_prefix("ndots:").and_then(|n| n.parse().ok()) {
                        c.ndots = std::cmp::min(n, MAXNDOTS);
                    } else if let Some(n) = o.strip_prefix("timeout:").and_then(|n| n.parse().ok())
                    {
                        c.timeout = std::cmp::min(n, MAXTIMEOUT);
                    } else if let Some(n) = o.strip_prefix("attempts:").and_then(|n| n.parse().ok())
                    {
                        c.attempts = std::cmp::min(n, MAXATTEMPTS);
                    }
                }
            }
            _ => {}
        }
    }
    if c.nameservers.is_empty() {
        c.nameservers.push(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    c.search = search.unwrap_or_else(|| {
        hostname
            .and_then(|h| h.trim().split_once('.'))
            .filter(|(_, d)| !d.is_empty())
            .map(|(_, d)| vec![d.to_string()])
            .unwrap_or_default()
    });
    c
}

/// The names `res_search` asks, in its order: the name as given first when it has at least
/// `ndots` dots (or ends in one, then only it), the search domains appended, the name as
/// given last when it has fewer dots.
pub(crate) fn candidates(conf: &Conf, name: &str) -> Vec<String> {
    if let Some(abs) = name.strip_suffix('.') {
        return vec![abs.to_string()];
    }
    let dots = name.matches('.').count();
    let mut out = Vec::new();
    if dots >= conf.ndots {
        out.push(name.to_string());
    }
    for d in &conf.search {
        let d = d.trim_end_matches('.');
        if !d.is_empty() {
            out.push(format!("{name}.{d}"));
        }
    }
    if dots < conf.ndots {
        out.push(name.to_string());
    }
    out
}

/// What one question got.
enum Answer {
    /// The name's addresses (none: the name exists without such records, or does not exist).
    Addrs(Vec<IpAddr>),
    /// No server answered usefully (timeouts, SERVFAIL, REFUSED, ...).
    Fail,
}

/// The addresses of `name` of `family` from DNS, as iptables gets them through glibc;
/// empty when no server knows it or none answers.
pub fn lookup(name: &str, family: Family) -> Vec<IpAddr> {
    // The library's unit tests run in the host's network namespace: they never ask the
    // host's DNS (tests/dropin_dns.rs proves the resolver in scratch namespaces).
    if cfg!(test) {
        return Vec::new();
    }
    let text = std::fs::read_to_string(RESOLV_CONF).unwrap_or_default();
    let host = std::fs::read_to_string(HOSTNAME).ok();
    lookup_with(&parse_conf(&text, host.as_deref()), name, family)
}

pub(crate) fn lookup_with(conf: &Conf, name: &str, family: Family) -> Vec<IpAddr> {
    if name.is_empty() || name.len() > 253 || Name::new(name.trim_end_matches('.')).is_err() {
        return Vec::new();
    }
    if name != "." && !labels_encodable(name) {
        return Vec::new();
    }
    for fqdn in candidates(conf, name) {
        match query(conf, &fqdn, family) {
            Answer::Addrs(a) if !a.is_empty() => return a,
            Answer::Addrs(_) => {}
            // glibc's res_search goes on to the next name after a server failure too
            Answer::Fail => {}
        }
    }
    Vec::new()
}

/// Whether glibc's resolver can put `name` in a question (`ns_name_pton`): no empty label
/// (`a..b`, `.a`, `a..`) and none longer than 63 bytes. glibc asks no server for a name it
/// cannot encode, so iptables fails at once there (`host/network ... not found`); simple-dns
/// would encode an empty label, and the question would wait out every server's timeout.
fn labels_encodable(name: &str) -> bool {
    name.strip_suffix('.')
        .unwrap_or(name)
        .split('.')
        .all(|label| !label.is_empty() && label.len() <= 63)
}

/// A random query id: `RandomState`'s keys come from the system's random source (a hash
/// of anything under them is unpredictable to others).
fn random_id() -> u16 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.finish() as u16
}

fn qtype(family: Family) -> TYPE {
    if family == Family::Ipv6 {
        TYPE::AAAA
    } else {
        TYPE::A
    }
}

fn question_bytes(id: u16, fqdn: &str, family: Family) -> Option<Vec<u8>> {
    let mut p = Packet::new_query(id);
    p.set_flags(PacketFlag::RECURSION_DESIRED);
    p.questions.push(Question::new(
        Name::new(fqdn).ok()?,
        QTYPE::TYPE(qtype(family)),
        QCLASS::CLASS(CLASS::IN),
        false,
    ));
    p.build_bytes_vec().ok()
}

/// What a reply says, if it answers the question `id`/`fqdn`/`family` at all.
enum Reply {
    Answer(Vec<IpAddr>),
    Truncated,
    ServerFailed,
}

fn read_reply(bytes: &[u8], id: u16, fqdn: &str, family: Family) -> Option<Reply> {
    let p = Packet::parse(bytes).ok()?;
    let want = qtype(family);
    if p.id() != id
        || !p.has_flags(PacketFlag::RESPONSE)
        || p.questions.len() != 1
        || p.questions[0].qtype != QTYPE::TYPE(want)
        || !p.questions[0]
            .qname
            .to_string()
            .trim_end_matches('.')
            .eq_ignore_ascii_case(fqdn)
    {
        return None;
    }
    if p.has_flags(PacketFlag::TRUNCATION) {
        return Some(Reply::Truncated);
    }
    match p.rcode() {
        RCODE::NoError | RCODE::NameError => {}
        _ => return Some(Reply::ServerFailed),
    }
    // the name and the CNAMEs it leads to, then their addresses in the answer's order
    let mut owners = vec![fqdn.to_ascii_lowercase()];
    loop {
        let before = owners.len();
        for rr in &p.answers {
            if let RData::CNAME(c) = &rr.rdata {
                let owner = rr.name.to_string().to_ascii_lowercase();
                let target = c.0.to_string().to_ascii_lowercase();
                if owners.contains(&owner) && !owners.contains(&target) {
                    owners.push(target);
                }
            }
        }
        if owners.len() == before {
            break;
        }
    }
    let mut out = Vec::new();
    for rr in &p.answers {
        if rr.class != CLASS::IN || !owners.contains(&rr.name.to_string().to_ascii_lowercase()) {
            continue;
        }
        match &rr.rdata {
            RData::A(a) if want == TYPE::A => out.push(IpAddr::V4(Ipv4Addr::from(a.address))),
            RData::AAAA(a) if want == TYPE::AAAA => {
                out.push(IpAddr::V6(Ipv6Addr::from(a.address)));
            }
            _ => {}
        }
    }
    Some(Reply::Answer(out))
}

/// One question to the servers in turn, `attempts` rounds, as glibc's `send_dg`: the first
/// round waits `timeout` for each server, round N `timeout << N` divided by the number of
/// servers (at least one second).
fn query(conf: &Conf, fqdn: &str, family: Family) -> Answer {
    let id = random_id();
    let Some(q) = question_bytes(id, fqdn, family) else {
        return Answer::Fail;
    };
    let n = conf.nameservers.len() as u64;
    for round in 0..conf.attempts {
        for ns in &conf.nameservers {
            let mut secs = conf.timeout << round;
            if round > 0 {
                secs /= n.max(1);
            }
            let wait = Duration::from_secs(secs.max(1));
            let server = SocketAddr::new(*ns, 53);
            match ask_udp(server, &q, wait, id, fqdn, family) {
                Some(Reply::Answer(a)) => return Answer::Addrs(a),
                Some(Reply::Truncated) => {
                    if let Some(Reply::Answer(a)) = ask_tcp(server, &q, wait, id, fqdn, family) {
                        return Answer::Addrs(a);
                    }
                }
                Some(Reply::ServerFailed) | None => {}
            }
        }
    }
    Answer::Fail
}

fn ask_udp(
    server: SocketAddr,
    q: &[u8],
    wait: Duration,
    id: u16,
    fqdn: &str,
    family: Family,
) -> Option<Reply> {
    let local: SocketAddr = if server.is_ipv4() {
        (Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (Ipv6Addr::UNSPECIFIED, 0).into()
    };
    // connected, as glibc's: a refusal (ICMP port unreachable) ends the wait at once, and
    // only the server asked can answer
    let sock = UdpSocket::bind(local).ok()?;
    sock.connect(server).ok()?;
    sock.send(q).ok()?;
    let deadline = Instant::now() + wait;
    let mut buf = vec![0u8; 65535];
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        sock.set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .ok()?;
        let len = sock.recv(&mut buf).ok()?;
        if let Some(r) = buf.get(..len).and_then(|b| read_reply(b, id, fqdn, family)) {
            return Some(r);
        }
    }
}

fn ask_tcp(
    server: SocketAddr,
    q: &[u8],
    wait: Duration,
    id: u16,
    fqdn: &str,
    family: Family,
) -> Option<Reply> {
    let mut s = TcpStream::connect_timeout(&server, wait).ok()?;
    s.set_read_timeout(Some(wait)).ok()?;
    s.set_write_timeout(Some(wait)).ok()?;
    let len = u16::try_from(q.len()).ok()?;
    let mut msg = len.to_be_bytes().to_vec();
    msg.extend_from_slice(q);
    s.write_all(&msg).ok()?;
    let mut head = [0u8; 2];
    s.read_exact(&mut head).ok()?;
    let mut body = vec![0u8; usize::from(u16::from_be_bytes(head))];
    s.read_exact(&mut body).ok()?;
    match read_reply(&body, id, fqdn, family)? {
        Reply::Truncated => None,
        r => Some(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolv_conf_as_glibc_reads_it() {
        let c = parse_conf(
            "# c\nnameserver 192.0.2.53\nnameserver bogus\nnameserver 2001:db8::53\n\
             nameserver 192.0.2.54\nnameserver 192.0.2.55\ndomain a.example\n\
             search b.example c.example\noptions ndots:2 timeout:99 attempts:3 rotate\n",
            Some("host.d.example"),
        );
        assert_eq!(c.nameservers.len(), 3);
        assert_eq!(c.search, ["b.example", "c.example"]);
        assert_eq!((c.ndots, c.timeout, c.attempts), (2, 30, 3));
        let d = parse_conf("", Some("host.d.example\n"));
        assert_eq!(d.nameservers, [IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        assert_eq!(d.search, ["d.example"]);
        assert_eq!((d.ndots, d.timeout, d.attempts), (1, 5, 2));
        assert!(parse_conf("", Some("plain")).search.is_empty());
    }

    #[test]
    fn search_order_as_res_search() {
        let c = parse_conf("search s.example\n", None);
        assert_eq!(candidates(&c, "www"), ["www.s.example", "www"]);
        assert_eq!(candidates(&c, "a.b"), ["a.b", "a.b.s.example"]);
        assert_eq!(candidates(&c, "a.b."), ["a.b"]);
    }

    #[test]
    fn replies_read_with_cnames_and_checks() {
        let mut p = Packet::new_reply(7);
        p.questions.push(Question::new(
            Name::new_unchecked("Www.Example"),
            QTYPE::TYPE(TYPE::A),
            QCLASS::CLASS(CLASS::IN),
            false,
        ));
        let rr = |n: &'static str, d| {
            simple_dns::ResourceRecord::new(Name::new_unchecked(n), CLASS::IN, 60, d)
        };
        p.answers.push(rr(
            "www.example",
            RData::CNAME(simple_dns::rdata::CNAME(Name::new_unchecked("h.example"))),
        ));
        p.answers.push(rr(
            "h.example",
            RData::A(simple_dns::rdata::A {
                address: 0xc000_0207,
            }),
        ));
        p.answers.push(rr(
            "other.example",
            RData::A(simple_dns::rdata::A { address: 1 }),
        ));
        p.answers.push(rr(
            "h.example",
            RData::A(simple_dns::rdata::A {
                address: 0xc000_0201,
            }),
        ));
        let bytes = p.build_bytes_vec().unwrap();
        let Some(Reply::Answer(a)) = read_reply(&bytes, 7, "www.example", Family::Ipv4) else {
            panic!("not read");
        };
        assert_eq!(
            a,
            [
                "192.0.2.7".parse::<IpAddr>().unwrap(),
                "192.0.2.1".parse().unwrap()
            ]
        );
        assert!(read_reply(&bytes, 8, "www.example", Family::Ipv4).is_none());
        assert!(read_reply(&bytes, 7, "www.example", Family::Ipv6).is_none());
        assert!(read_reply(&bytes, 7, "ww.example", Family::Ipv4).is_none());
        assert!(read_reply(&bytes[..20], 7, "www.example", Family::Ipv4).is_none());
    }
}
