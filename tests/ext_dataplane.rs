//! Data plane of the extensions: rules written by `xtnl` (both backends) act on real packets
//! in a namespace of the test's own: `MARK` then `-m mark`, `CT --notrack` then
//! `--ctstate UNTRACKED`, `addrtype --dst-type LOCAL` DNAT of a TCP connection, and
//! `statistic --mode random` splitting packets between two rules (counters show both hit).

mod common;

use std::io::Read;
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::process::Output;
use std::time::Duration;

use common::{in_netns, private_lock_path, run};

const LOCAL: &str = "192.0.2.1";

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn ip(args: &[&str]) {
    let o = run("ip", args);
    assert!(o.status.success(), "ip {args:?}: {}", text(&o));
}

struct X {
    lock: String,
    legacy: bool,
}

impl X {
    fn run(&self, args: &str) -> Output {
        let mut a: Vec<&str> = Vec::new();
        if self.legacy {
            a.extend(["--backend", "legacy"]);
        }
        a.extend(args.split_whitespace());
        common::run_env(
            common::xtnl_bin(),
            &a,
            &[("XTABLES_LOCKFILE", self.lock.as_str())],
        )
    }
    fn ok(&self, args: &str) {
        let o = self.run(args);
        assert!(o.status.success(), "xtnl {args}: {}", text(&o));
    }
    /// Packet counters of a chain's rules, in order (`-S -v` prints `-c packets bytes`).
    fn counters(&self, table: &str, chain: &str) -> Vec<u64> {
        let o = self.run(&format!("-t {table} -S {chain} -v"));
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.starts_with("-A"))
            .map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                let i = w.iter().position(|x| *x == "-c").expect("-c in -S -v");
                w[i + 1].parse().expect("a packet count")
            })
            .collect()
    }
}

fn send_udp(port: u16, n: usize) {
    let s = UdpSocket::bind("0.0.0.0:0").expect("bind");
    for _ in 0..n {
        // Nobody listens: the packets still cross OUTPUT (and the ICMP errors are ignored).
        let _ = s.send_to(b"x", (LOCAL, port));
    }
}

fn lab(legacy: bool) {
    in_netns(move || {
        ip(&["link", "set", "lo", "up"]);
        // A veth pair inside the test's namespace carries the local address.
        ip(&["link", "add", "xa0", "type", "veth", "peer", "name", "xb0"]);
        ip(&["addr", "add", &format!("{LOCAL}/24"), "dev", "xa0"]);
        ip(&["link", "set", "xa0", "up"]);
        ip(&["link", "set", "xb0", "up"]);
        let lock = private_lock_path().to_str().expect("utf-8").to_owned();
        let x = X { lock, legacy };

        // MARK, then mark: only marked packets hit the second rule.
        x.ok("-t mangle -A OUTPUT -p udp --dport 9 -j MARK --set-mark 0x5");
        x.ok("-A OUTPUT -p udp --dport 9 -m mark --mark 0x5 -j ACCEPT");
        x.ok("-A OUTPUT -p udp --dport 8 -m mark --mark 0x5 -j ACCEPT");
        send_udp(9, 10);
        send_udp(8, 10);
        assert_eq!(x.counters("mangle", "OUTPUT"), vec![10]);
        assert_eq!(x.counters("filter", "OUTPUT"), vec![10, 0], "mark");
        x.ok("-F OUTPUT");

        // CT --notrack: the packets are UNTRACKED in filter, the others are not.
        x.ok("-t raw -A OUTPUT -p udp --dport 10 -j CT --notrack");
        x.ok("-A OUTPUT -p udp -m conntrack --ctstate UNTRACKED -j ACCEPT");
        x.ok("-A OUTPUT -p udp -m conntrack --ctstate NEW -j ACCEPT");
        send_udp(10, 7);
        send_udp(11, 3);
        assert_eq!(x.counters("raw", "OUTPUT"), vec![7]);
        assert_eq!(x.counters("filter", "OUTPUT"), vec![7, 3], "notrack");
        x.ok("-F OUTPUT");

        // statistic --mode random: both branches are taken.
        x.ok("-A OUTPUT -p udp --dport 12 -m statistic --mode random --probability 0.5 -j ACCEPT");
        x.ok("-A OUTPUT -p udp --dport 12 -j ACCEPT");
        send_udp(12, 400);
        let c = x.counters("filter", "OUTPUT");
        assert_eq!(c[0] + c[1], 400, "{c:?}");
        assert!(c[0] > 100 && c[1] > 100, "random split {c:?}");
        x.ok("-F OUTPUT");

        // addrtype --dst-type LOCAL DNAT: a connection to port 7000 of a local address
        // reaches the listener on 7001.
        let l = TcpListener::bind((LOCAL, 7001)).expect("listen");
        x.ok("-t nat -A OUTPUT -p tcp -m addrtype --dst-type LOCAL -m tcp --dport 7000 -j DNAT --to-destination 192.0.2.1:7001");
        x.ok("-t nat -A OUTPUT -p tcp -m addrtype ! --dst-type LOCAL -m tcp --dport 7000 -j DNAT --to-destination 192.0.2.1:7002");
        let server = std::thread::spawn(move || {
            let (mut s, _) = l.accept().expect("accept");
            let mut b = [0u8; 5];
            s.read_exact(&mut b).expect("read");
            b
        });
        let mut c = TcpStream::connect_timeout(
            &format!("{LOCAL}:7000").parse().expect("addr"),
            Duration::from_secs(5),
        )
        .expect("connect through DNAT");
        std::io::Write::write_all(&mut c, b"hello").expect("write");
        assert_eq!(&server.join().expect("server"), b"hello");
        assert_eq!(x.counters("nat", "OUTPUT"), vec![1, 0], "addrtype DNAT");
    });
}

#[test]
fn extensions_act_on_packets_nf_tables() {
    lab(false);
}

#[test]
fn extensions_act_on_packets_x_tables() {
    lab(true);
}
