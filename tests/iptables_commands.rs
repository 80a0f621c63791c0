//! Differential tests of the iptables commands beyond `-A/-D/-C` (those are covered by
//! `iptables_diff.rs`) against iptables-nft 1.8.9 (the oracle).
//!
//! Most tests replay one command sequence twice, through iptables-nft in one network
//! namespace and through xtnl in another. After every step the tables of both namespaces are
//! listed by iptables-nft (so a difference there is a difference of state, not of printing)
//! and must be equal; every step's exit status and the key phrase of its message must be the
//! expected ones, and a successful read (`-S`) must print the same in both.
//!
//! Where iptables-nft 1.8.9 is itself wrong, or where xtnl deliberately keeps
//! iptables-legacy's words and statuses, the step is written with [`differs`] and says why.
//! Everywhere else a test expects the oracle's behaviour; a test whose doc comment says what
//! xtnl does instead fails until xtnl is fixed, and its failure message lists every
//! difference it saw.

mod common;

use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{in_netns, private_lock_path, run, run_ok};

// ---------------------------------------------------------------------------------------------
// Running the tools

/// What one invocation did.
#[derive(Debug, Clone)]
struct Res {
    status: i32,
    stdout: String,
    stderr: String,
}

impl Res {
    fn new(o: Output) -> Res {
        Res {
            status: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    fn has(&self, status: i32, phrase: &str) -> bool {
        self.status == status && self.text().contains(phrase)
    }

    fn show(&self) -> String {
        let text = self.text();
        let text = text.trim_end();
        if text.is_empty() {
            format!("exit {}, no output", self.status)
        } else {
            format!("exit {}:\n{}", self.status, indent(text, 8))
        }
    }
}

fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.lines()
        .map(|l| format!("{pad}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Splits a command line as iptables-restore splits a rule line.
fn words(s: &str) -> Vec<String> {
    xtnl::ipt::parse::split_words(s).expect("the test's command line splits")
}

/// An iptables-compatible program: the oracle, or xtnl (with its private xtables lock).
#[derive(Debug, Clone)]
struct Tool {
    program: String,
    prefix: Vec<String>,
    /// xtnl only: the `XTABLES_LOCKFILE` it gets (never the real `/run/xtables.lock`).
    lock: Option<String>,
}

impl Tool {
    fn oracle(program: &str) -> Tool {
        Tool {
            program: program.into(),
            prefix: Vec::new(),
            lock: None,
        }
    }

    /// The built xtnl, with `prefix` before every command line (`-6` for IPv6).
    fn xtnl(prefix: &[&str]) -> Tool {
        Tool::xtnl_at(common::xtnl_bin(), prefix)
    }

    /// xtnl under another name (`xtnl6` is ip6tables).
    fn xtnl_at(program: &str, prefix: &[&str]) -> Tool {
        let lock = private_lock_path();
        Tool {
            program: program.into(),
            prefix: prefix.iter().map(|s| s.to_string()).collect(),
            lock: Some(lock.to_str().expect("UTF-8 temp path").to_owned()),
        }
    }

    fn label(&self) -> String {
        let name = Path::new(&self.program)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(&self.program);
        std::iter::once(name)
            .chain(self.prefix.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn run(&self, line: &str) -> Res {
        let mut args = self.prefix.clone();
        args.extend(words(line));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = self
            .lock
            .iter()
            .map(|l| ("XTABLES_LOCKFILE", l.as_str()))
            .collect();
        Res::new(common::run_env(&self.program, &args, &env))
    }

    /// Runs and panics unless it succeeds.
    fn must(&self, line: &str) -> Res {
        let r = self.run(line);
        assert_eq!(r.status, 0, "{} {line}: {}", self.label(), r.show());
        r
    }
}

/// Brings `lo` up and sends three UDP datagrams from this thread (which is in the test's
/// namespace) to a closed port on 127.0.0.1. Each draws an ICMP port-unreachable, so each is
/// two packets through OUTPUT and two through INPUT. Waiting for the refusal on the connected
/// socket makes sure the ICMP message has passed INPUT (and been counted) before returning.
fn traffic() {
    run_ok("ip", &["link", "set", "lo", "up"]);
    let sock = UdpSocket::bind("127.0.0.1:0").expect("bind a UDP socket on lo");
    sock.connect("127.0.0.1:9").expect("connect the UDP socket");
    sock.set_read_timeout(Some(Duration::from_secs(1)))
        .expect("set a read timeout");
    for _ in 0..3 {
        let _ = sock.send(b"hello");
        let mut buf = [0u8; 16];
        // ECONNREFUSED once the ICMP error is in; a timeout if a rule dropped something.
        let _ = sock.recv(&mut buf);
    }
}

// ---------------------------------------------------------------------------------------------
// Sequences replayed through both tools

/// What a step must do.
#[derive(Debug, Clone, Copy)]
enum Exp {
    /// Both succeed and print the same.
    Ok,
    /// Both succeed; what they print is not compared (the state afterwards still is).
    Succeeds,
    /// Both fail with this status and a message containing this phrase.
    Fails(i32, &'static str),
    /// A deliberate difference: each tool's own status and phrase. With `same_state` false the
    /// oracle has broken its table, and the tables are no longer compared from here on.
    Differs {
        oracle: (i32, &'static str),
        xtnl: (i32, &'static str),
        same_state: bool,
    },
}

#[derive(Debug, Clone, Copy)]
enum Step {
    /// A command line for the tool under test.
    Cmd(&'static str, Exp),
    /// Loopback traffic, see [`traffic`].
    Traffic,
}

const fn ok(line: &'static str) -> Step {
    Step::Cmd(line, Exp::Ok)
}

const fn succeeds(line: &'static str) -> Step {
    Step::Cmd(line, Exp::Succeeds)
}

const fn fails(line: &'static str, status: i32, phrase: &'static str) -> Step {
    Step::Cmd(line, Exp::Fails(status, phrase))
}

const fn differs(
    line: &'static str,
    oracle: (i32, &'static str),
    xtnl: (i32, &'static str),
) -> Step {
    Step::Cmd(
        line,
        Exp::Differs {
            oracle,
            xtnl,
            same_state: true,
        },
    )
}

const fn differs_and_breaks(
    line: &'static str,
    oracle: (i32, &'static str),
    xtnl: (i32, &'static str),
) -> Step {
    Step::Cmd(
        line,
        Exp::Differs {
            oracle,
            xtnl,
            same_state: false,
        },
    )
}

/// iptables-nft's answer when the kernel refuses to delete a chain (non-empty, referenced,
/// or a built-in with rules); iptables-legacy, and xtnl, say why instead, with status 1.
const CHAIN_BUSY: (i32, &str) = (4, "CHAIN_DEL failed (Device or resource busy)");
const NO_CHAIN: &str = "No chain/target/match by that name";

/// One step's result and the tables afterwards.
struct Played {
    res: Option<Res>,
    state: String,
}

fn snapshot(lister: &Tool, listings: &[&str]) -> String {
    listings
        .iter()
        .map(|l| {
            let r = lister.run(l);
            let status = if r.status == 0 {
                String::new()
            } else {
                format!(" (exit {})", r.status)
            };
            format!("$ {} {l}{status}\n{}", lister.label(), r.text())
        })
        .collect()
}

fn play(tool: &Tool, lister: &Tool, listings: &[&str], steps: &[Step]) -> Vec<Played> {
    steps
        .iter()
        .map(|step| {
            let res = match step {
                Step::Cmd(line, _) => Some(tool.run(line)),
                Step::Traffic => {
                    traffic();
                    None
                }
            };
            Played {
                res,
                state: snapshot(lister, listings),
            }
        })
        .collect()
}

fn expectation(who: &str, r: &Res, (status, phrase): (i32, &str)) -> Option<String> {
    if r.has(status, phrase) {
        return None;
    }
    let saying = if phrase.is_empty() {
        String::new()
    } else {
        format!(" saying {phrase:?}")
    };
    Some(format!(
        "    {who} should exit {status}{saying}; got {}",
        r.show()
    ))
}

fn compare(
    oracle: &str,
    label: &str,
    steps: &[Step],
    theirs: &[Played],
    ours: &[Played],
) -> Vec<String> {
    let mut out = Vec::new();
    let mut compare_state = true;
    let mut were_different = false;
    for (i, ((step, o), x)) in steps.iter().zip(theirs).zip(ours).enumerate() {
        let n = i + 1;
        let what = match step {
            Step::Cmd(line, _) => format!("`{line}`"),
            Step::Traffic => "(traffic over lo)".to_string(),
        };
        if let (Step::Cmd(_, exp), Some(ro), Some(rx)) = (step, &o.res, &x.res) {
            let mut problems = Vec::new();
            match *exp {
                Exp::Ok | Exp::Succeeds => {
                    problems.extend(expectation(oracle, ro, (0, "")));
                    problems.extend(expectation(label, rx, (0, "")));
                    if matches!(exp, Exp::Ok)
                        && ro.status == 0
                        && rx.status == 0
                        && ro.stdout != rx.stdout
                    {
                        problems.push(format!(
                            "    output differs\n      {oracle}:\n{}\n      {label}:\n{}",
                            indent(&ro.stdout, 8),
                            indent(&rx.stdout, 8)
                        ));
                    }
                }
                Exp::Fails(status, phrase) => {
                    problems.extend(expectation(oracle, ro, (status, phrase)));
                    problems.extend(expectation(label, rx, (status, phrase)));
                }
                Exp::Differs {
                    oracle: eo,
                    xtnl: ex,
                    same_state,
                } => {
                    problems.extend(expectation(oracle, ro, eo));
                    problems.extend(expectation(label, rx, ex));
                    compare_state &= same_state;
                }
            }
            if !problems.is_empty() {
                out.push(format!("step {n} {what}:\n{}", problems.join("\n")));
            }
        }
        if compare_state {
            let different = o.state != x.state;
            if different && !were_different {
                out.push(format!(
                    "after step {n} {what} the tables differ\n    in the {oracle} namespace:\n{}\n    in the {label} namespace:\n{}",
                    indent(&o.state, 8),
                    indent(&x.state, 8)
                ));
            } else if different {
                out.push(format!("after step {n} {what} the tables still differ"));
            } else if were_different {
                out.push(format!("after step {n} {what} the tables are equal again"));
            }
            were_different = different;
        }
    }
    out
}

/// Replays `steps` through `oracle` and through `xtnl`, each in a namespace of its own,
/// listing the tables with `oracle <listing>` after every step; returns every difference.
fn sequence_differences(
    oracle: &'static str,
    xtnl: Tool,
    listings: &'static [&'static str],
    steps: &'static [Step],
) -> Vec<String> {
    let theirs = in_netns(move || {
        let o = Tool::oracle(oracle);
        play(&o, &o, listings, steps)
    });
    let label = xtnl.label();
    let ours = in_netns(move || play(&xtnl, &Tool::oracle(oracle), listings, steps));
    compare(oracle, &label, steps, &theirs, &ours)
}

fn sequence_with(
    oracle: &'static str,
    xtnl: Tool,
    listings: &'static [&'static str],
    steps: &'static [Step],
) {
    let label = xtnl.label();
    let failures = sequence_differences(oracle, xtnl, listings, steps);
    assert!(
        failures.is_empty(),
        "{} difference(s) between {oracle} and {label}:\n\n{}\n",
        failures.len(),
        failures.join("\n\n")
    );
}

/// IPv4: iptables-nft against plain `xtnl`.
fn sequence(listings: &'static [&'static str], steps: &'static [Step]) {
    sequence_with("iptables-nft", Tool::xtnl(&[]), listings, steps);
}

const FILTER_NAT: &[&str] = &["-S", "-t nat -S"];

// ---------------------------------------------------------------------------------------------
// -I, -D n, -R n

#[test]
fn insert_at_every_kind_of_position() {
    common::require_kernel!();
    const STEPS: &[Step] = &[
        ok("-A INPUT -s 192.0.2.1 -j ACCEPT"),
        ok("-A INPUT -s 192.0.2.2 -j ACCEPT"),
        // Without a number: at the head.
        ok("-I INPUT -s 192.0.2.3 -j DROP"),
        ok("-I INPUT 1 -s 192.0.2.4 -j DROP"),
        // In the middle.
        ok("-I INPUT 3 -p tcp --dport 22 -j ACCEPT"),
        // One past the end (5 rules): appends.
        ok("-I INPUT 6 -s 192.0.2.5 -j RETURN"),
        fails("-I INPUT 8 -j DROP", 1, "Index of insertion too big"),
        fails("-I INPUT 0 -j DROP", 2, "Invalid rule number `0'"),
        // Empty chains: 1 works, 2 is too big.
        ok("-I FORWARD 1 -j DROP"),
        fails("-I OUTPUT 2 -j DROP", 1, "Index of insertion too big"),
        ok("-N user"),
        ok("-I user -j RETURN"),
        ok("-I user 2 -s 198.51.100.0/24 -j ACCEPT"),
        ok("-I user 2 -d 203.0.113.9 -m comment --comment middle -j DROP"),
        fails("-I user 5 -j DROP", 1, "Index of insertion too big"),
        fails("-I nope 1 -j DROP", 1, NO_CHAIN),
        ok("-t nat -I POSTROUTING -o eth1 -j MASQUERADE"),
        ok("-t nat -I POSTROUTING 2 -s 192.0.2.0/24 -j SNAT --to-source 198.51.100.1"),
        ok("-t nat -I POSTROUTING 1 -o eth0 -j RETURN"),
        fails(
            "-t nat -I POSTROUTING 5 -j RETURN",
            1,
            "Index of insertion too big",
        ),
        ok("-S INPUT"),
        ok("-S user"),
    ];
    sequence(FILTER_NAT, STEPS);
}

#[test]
fn delete_and_replace_by_number() {
    common::require_kernel!();
    const STEPS: &[Step] = &[
        ok("-A INPUT -s 192.0.2.1 -j ACCEPT"),
        ok("-A INPUT -s 192.0.2.2 -j ACCEPT"),
        ok("-A INPUT -p tcp --dport 22 -j ACCEPT"),
        ok("-A INPUT -s 192.0.2.4 -j DROP"),
        ok("-A INPUT -j LOG --log-prefix last"),
        ok("-D INPUT 2"),
        ok("-D INPUT 4"),
        ok("-D INPUT 1"),
        fails("-D INPUT 3", 1, "Index of deletion too big"),
        fails("-D INPUT 0", 2, "Invalid rule number `0'"),
        ok("-R INPUT 1 -p tcp --dport 443 -j ACCEPT"),
        ok("-R INPUT 2 -m comment --comment replaced -j REJECT"),
        fails("-R INPUT 3 -j DROP", 1, "Index of replacement too big"),
        fails("-R INPUT 0 -j DROP", 2, "Invalid rule number `0'"),
        // iptables-nft creates a built-in chain on first use (see
        // `built_in_chains_not_created_yet`): use FORWARD once, so that it is empty here.
        ok("-A FORWARD -j ACCEPT"),
        ok("-D FORWARD 1"),
        fails("-R FORWARD 1 -j DROP", 1, "Index of replacement too big"),
        fails("-D FORWARD 1", 1, "Index of deletion too big"),
        fails("-R nope 1 -j DROP", 1, NO_CHAIN),
        fails("-D nope 1", 1, NO_CHAIN),
        ok("-N user"),
        ok("-A user -j RETURN"),
        ok("-R user 1 -s 203.0.113.0/24 -j DROP"),
        ok("-t nat -A PREROUTING -p tcp --dport 80 -j DNAT --to-destination 192.0.2.10"),
        ok("-t nat -A PREROUTING -p udp --dport 53 -j DNAT --to-destination 192.0.2.11"),
        ok("-t nat -R PREROUTING 2 -p tcp --dport 8080 -j REDIRECT --to-ports 80"),
        ok("-t nat -D PREROUTING 1"),
        fails("-t nat -D PREROUTING 2", 1, "Index of deletion too big"),
        ok("-S"),
    ];
    sequence(FILTER_NAT, STEPS);
}

// ---------------------------------------------------------------------------------------------
// -N, -X

/// `-X` of a chain the kernel will not delete: iptables-nft 1.8.9 passes the kernel's EBUSY
/// through as `CHAIN_DEL failed (Device or resource busy)`, status 4; xtnl deliberately says
/// why with iptables-legacy's words and status 1 ("Too many links" when referenced,
/// "Directory not empty" when it has rules).
///
/// `-X` of a built-in chain: iptables-nft 1.8.9 deletes an empty built-in chain whose policy
/// is ACCEPT (exit 0; it lists it as before and recreates it when needed; `-X` without a
/// chain deletes those too), answers "Directory not empty" (1) when its policy is DROP and
/// CHAIN_DEL/EBUSY (4) when it has rules; iptables-legacy refuses all three (1). xtnl on
/// nf_tables does as iptables-nft in the first two (issue 24), and under its own name says
/// "Can't delete built-in chain" (1) for the third. The tables as iptables lists them stay
/// equal.
#[test]
fn new_chain_and_delete_chain() {
    common::require_kernel!();
    const STEPS: &[Step] = &[
        ok("-N A"),
        fails("-N A", 1, "Chain already exists"),
        fails("-N INPUT", 1, "Chain already exists"),
        fails("-N ACCEPT", 2, "chain name may not clash with target name"),
        fails("-N DNAT", 2, "chain name may not clash with target name"),
        fails(
            "-N abcdefghijklmnopqrstuvwxyz123",
            2,
            "chain name `abcdefghijklmnopqrstuvwxyz123' too long (must be under 29 chars)",
        ),
        ok("-N abcdefghijklmnopqrstuvwxyz12"),
        fails("-N \"a b\"", 2, "Invalid chain name `a b'"),
        ok("-N a-b_c.d"),
        // Empty and unreferenced: goes.
        ok("-N B"),
        ok("-X B"),
        fails("-X B", 1, NO_CHAIN),
        fails("-X nope", 1, NO_CHAIN),
        // Referenced.
        ok("-A INPUT -j A"),
        differs("-X A", CHAIN_BUSY, (1, "Too many links")),
        // Not empty.
        ok("-N C"),
        ok("-A C -j ACCEPT"),
        differs("-X C", CHAIN_BUSY, (1, "Directory not empty")),
        // All user chains while one is referenced: nothing goes.
        differs("-X", CHAIN_BUSY, (1, "Too many links")),
        ok("-D INPUT -j A"),
        ok("-F C"),
        // Built-in chains (see above); INPUT exists and is empty.
        // An empty one with policy ACCEPT goes, as iptables-nft deletes it (it comes back
        // with the next rule or policy); another policy is refused in iptables-nft's words.
        ok("-X INPUT"),
        ok("-P INPUT DROP"),
        fails("-X INPUT", 1, "Directory not empty"),
        ok("-P INPUT ACCEPT"),
        ok("-A INPUT -j ACCEPT"),
        differs("-X INPUT", CHAIN_BUSY, (1, "Can't delete built-in chain")),
        ok("-D INPUT 1"),
        // All user chains, none referenced or holding rules: all go.
        ok("-X"),
        ok("-S"),
        ok("-t nat -N N1"),
        ok("-t nat -N N2"),
        ok("-t nat -A PREROUTING -j N1"),
        differs("-t nat -X", CHAIN_BUSY, (1, "Too many links")),
        ok("-t nat -D PREROUTING 1"),
        ok("-t nat -X N1"),
        ok("-t nat -X"),
        ok("-t nat -S"),
    ];
    sequence(FILTER_NAT, STEPS);
}

/// What iptables refuses to delete, xtnl must refuse too, with iptables-legacy's words:
///
/// - `-X` without a chain deletes the user chains only if every one of them could be deleted
///   alone: iptables-nft refuses the whole command (CHAIN_DEL/EBUSY, 4) as soon as one of them
///   holds rules, and so does iptables-legacy ("Directory not empty", 1); the man page: "The
///   chain must be empty".
/// - A chain that is referenced and holds rules: iptables-legacy checks the references first
///   ("Too many links", 1).
#[test]
fn delete_chain_refusals_like_iptables() {
    common::require_kernel!();
    const STEPS: &[Step] = &[
        ok("-N A"),
        ok("-A A -s 192.0.2.1 -j ACCEPT"),
        ok("-N empty"),
        differs("-X", CHAIN_BUSY, (1, "Directory not empty")),
        ok("-F A"),
        // A chain that only other user chains jump to is still a chain with rules.
        ok("-N D"),
        ok("-N E"),
        ok("-A D -j E"),
        differs("-X", CHAIN_BUSY, (1, "Directory not empty")),
        ok("-F D"),
        ok("-X"),
        ok("-N R"),
        ok("-A R -j ACCEPT"),
        ok("-A INPUT -j R"),
        differs("-X R", CHAIN_BUSY, (1, "Too many links")),
        differs("-X", CHAIN_BUSY, (1, "Too many links")),
        ok("-S"),
    ];
    sequence(&["-S"], STEPS);
}

// ---------------------------------------------------------------------------------------------
// -F, -P, -E

#[test]
fn flush_a_chain_a_table_and_a_missing_chain() {
    common::require_kernel!();
    const STEPS: &[Step] = &[
        ok("-N A"),
        ok("-A A -j ACCEPT"),
        ok("-A A -s 192.0.2.1 -j DROP"),
        ok("-A INPUT -j A"),
        ok("-A INPUT -p tcp --dport 22 -j ACCEPT"),
        ok("-A OUTPUT -j DROP"),
        ok("-P FORWARD DROP"),
        ok("-t nat -A PREROUTING -p tcp --dport 80 -j DNAT --to-destination 192.0.2.10"),
        ok("-F A"),
        ok("-F A"),
        fails("-F nope", 1, NO_CHAIN),
        ok("-F OUTPUT"),
        ok("-A A -j RETURN"),
        ok("-A OUTPUT -j DROP"),
        // The whole filter table: every chain's rules go, chains and policies stay, nat is
        // untouched.
        ok("-F"),
        ok("-S"),
        ok("-t nat -F PREROUTING"),
        ok("-t nat -A POSTROUTING -o eth1 -j MASQUERADE"),
        ok("-t nat -F"),
        fails("-t nat -F nope", 1, NO_CHAIN),
        ok("-t mangle -F"),
        ok("-t raw -F"),
        ok("-t mangle -S"),
    ];
    sequence(FILTER_NAT, STEPS);
}

#[test]
fn policies_of_built_in_and_other_chains() {
    common::require_kernel!();
    const STEPS: &[Step] = &[
        ok("-P INPUT DROP"),
        ok("-S INPUT"),
        ok("-P FORWARD DROP"),
        ok("-P INPUT ACCEPT"),
        ok("-P OUTPUT ACCEPT"),
        ok("-N user"),
        fails("-P user DROP", 1, "Bad built-in chain name"),
        fails("-P nope DROP", 1, "Bad built-in chain name"),
        fails("-P INPUT", 2, "requires"),
        ok("-t nat -P PREROUTING ACCEPT"),
        ok("-t mangle -P FORWARD DROP"),
        ok("-t raw -P OUTPUT DROP"),
        // -F leaves the policies alone.
        ok("-A INPUT -j ACCEPT"),
        ok("-F"),
        ok("-P FORWARD ACCEPT"),
        ok("-S"),
        ok("-t mangle -S"),
        ok("-t raw -S"),
    ];
    sequence(&["-S", "-t nat -S", "-t mangle -S", "-t raw -S"], STEPS);
}

/// iptables (legacy and nft) forbids DROP in the nat table, as a policy and as a target:
/// status 2, `The "nat" table is not intended for filtering, the use of DROP is therefore
/// inhibited.` xtnl accepts both.
#[test]
fn nat_table_inhibits_drop_like_iptables_nft() {
    common::require_kernel!();
    const INHIBITED: &str =
        "The \"nat\" table is not intended for filtering, the use of DROP is therefore inhibited.";
    const STEPS: &[Step] = &[
        fails("-t nat -P PREROUTING DROP", 2, INHIBITED),
        fails("-t nat -P POSTROUTING DROP", 2, INHIBITED),
        fails("-t nat -A PREROUTING -j DROP", 2, INHIBITED),
        ok("-t nat -N user"),
        fails("-t nat -I user -s 192.0.2.1 -j DROP", 2, INHIBITED),
        ok("-t nat -P PREROUTING ACCEPT"),
        ok("-t nat -S"),
    ];
    sequence(&["-t nat -S"], STEPS);
}

/// `-E INPUT X`: iptables-nft 1.8.9 renames the base chain; afterwards its `-S` says "Table
/// `filter' contains incompatible base-chains" and no longer shows INPUT's rules. xtnl
/// deliberately refuses ("Can't rename built-in chain", 1).
///
/// `-E` to a name longer than 28 characters, which `-N` refuses ("too long", 2): iptables-nft
/// renames (exit 0), leaving a chain it cannot create; iptables-legacy refuses ("Invalid
/// argument", 1). xtnl deliberately refuses as `-N` does ("too long", 2).
#[test]
fn rename_chains() {
    common::require_kernel!();
    const STEPS: &[Step] = &[
        ok("-N old"),
        ok("-A old -s 192.0.2.1 -j ACCEPT"),
        ok("-A INPUT -j old"),
        ok("-I INPUT -p tcp -g old"),
        ok("-t nat -N old"),
        ok("-E old new"),
        ok("-S"),
        ok("-S new"),
        ok("-t nat -S"),
        // The rules that jumped to the chain jump to it under its new name.
        ok("-C INPUT -j new"),
        ok("-C INPUT -p tcp -g new"),
        ok("-N other"),
        fails("-E new other", 1, "File exists"),
        fails("-E new new", 1, "File exists"),
        fails("-E new INPUT", 1, "File exists"),
        fails("-E nope x", 1, NO_CHAIN),
        ok("-t nat -E old nat-new"),
        ok("-D INPUT -p tcp -g new"),
        ok("-E new again"),
        ok("-S"),
        differs_and_breaks(
            "-E again abcdefghijklmnopqrstuvwxyz1234567890",
            (0, ""),
            (2, "too long"),
        ),
        differs_and_breaks("-E INPUT X", (0, ""), (1, "Can't rename built-in chain")),
    ];
    sequence(FILTER_NAT, STEPS);
}

// ---------------------------------------------------------------------------------------------
// -Z and counters

/// Real packet counts: the same traffic in both namespaces gives the same counts, which the
/// oracle lists with `-S -v`; `-Z CHAIN` and `-Z` zero what they should.
#[test]
fn zero_counters_after_real_traffic() {
    common::require_kernel!();
    const STEPS: &[Step] = &[
        ok("-A INPUT -i lo -j ACCEPT"),
        ok("-A OUTPUT -o lo -j ACCEPT"),
        ok("-N C"),
        ok("-A C -p udp -j RETURN"),
        ok("-I OUTPUT -j C"),
        ok("-t nat -A OUTPUT -p udp -j RETURN"),
        Step::Traffic,
        ok("-Z OUTPUT"),
        ok("-Z C"),
        Step::Traffic,
        ok("-t nat -Z"),
        ok("-Z"),
        Step::Traffic,
        ok("-t nat -Z OUTPUT"),
        ok("-Z INPUT"),
        fails("-Z nope", 1, NO_CHAIN),
        fails("-t nat -Z nope", 1, NO_CHAIN),
    ];
    sequence(&["-S -v", "-t nat -S -v"], STEPS);
}

/// `-S -v` lines without their `-c packets bytes`, and those counts.
fn counters(listing: &str) -> Vec<(String, Option<(u64, u64)>)> {
    listing
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            match w.iter().position(|x| *x == "-c") {
                Some(i) if w.len() > i + 2 => {
                    let count = (w[i + 1].parse().ok(), w[i + 2].parse().ok());
                    let mut rest = w.clone();
                    rest.drain(i..i + 3);
                    match count {
                        (Some(p), Some(b)) => (rest.join(" "), Some((p, b))),
                        _ => (l.to_string(), None),
                    }
                }
                _ => (l.to_string(), None),
            }
        })
        .collect()
}

fn count_of(c: &[(String, Option<(u64, u64)>)], rule: &str) -> (u64, u64) {
    c.iter()
        .find(|(r, _)| r == rule)
        .and_then(|(_, n)| *n)
        .unwrap_or_else(|| panic!("no counters for `{rule}` in {c:?}"))
}

/// One namespace: xtnl reads the same counts iptables-nft reads (wherever each prints them,
/// see `list_rules_verbose_prints_counters_like_iptables_nft`), and xtnl's `-Z` zeroes what
/// iptables-nft then reads.
#[test]
fn xtnl_reads_and_zeroes_the_counters_iptables_nft_reads() {
    in_netns(|| {
        let ipt = Tool::oracle("iptables-nft");
        let x = Tool::xtnl(&[]);
        x.must("-A INPUT -i lo -j ACCEPT");
        x.must("-A OUTPUT -o lo -p udp -j ACCEPT");
        ipt.must("-A OUTPUT -o lo -j ACCEPT");
        x.must("-N C");
        ipt.must("-A C -j RETURN");
        x.must("-I INPUT -j C");
        traffic();

        let theirs = counters(&ipt.must("-S -v").stdout);
        let ours = counters(&x.must("-S -v").stdout);
        assert_eq!(ours, theirs, "xtnl -S -v and iptables-nft -S -v counts");
        for rule in [
            "-A INPUT -i lo -j ACCEPT",
            "-A INPUT -j C",
            "-A C -j RETURN",
            "-A OUTPUT -o lo -p udp -j ACCEPT",
            "-A OUTPUT -o lo -j ACCEPT",
        ] {
            let (p, b) = count_of(&theirs, rule);
            assert!(
                p > 0 && b > 0,
                "no traffic counted for `{rule}`: {theirs:?}"
            );
        }

        x.must("-Z INPUT");
        let after = counters(&ipt.must("-S -v").stdout);
        assert_eq!(count_of(&after, "-A INPUT -i lo -j ACCEPT"), (0, 0));
        assert_eq!(count_of(&after, "-A INPUT -j C"), (0, 0));
        assert_eq!(
            count_of(&after, "-A C -j RETURN"),
            count_of(&theirs, "-A C -j RETURN"),
            "-Z INPUT zeroes only INPUT"
        );
        assert_eq!(
            count_of(&after, "-A OUTPUT -o lo -j ACCEPT"),
            count_of(&theirs, "-A OUTPUT -o lo -j ACCEPT"),
            "-Z INPUT zeroes only INPUT"
        );

        x.must("-Z");
        let zeroed = counters(&ipt.must("-S -v").stdout);
        for (rule, n) in &zeroed {
            if let Some(n) = n {
                assert_eq!(*n, (0, 0), "`{rule}` after xtnl -Z: {zeroed:?}");
            }
        }
        assert_eq!(counters(&x.must("-S -v").stdout), zeroed);
    });
}

/// iptables (nft and legacy) prints `-c packets bytes` after the matches, right before the
/// target: `-A INPUT -i lo -c 6 282 -j ACCEPT`.
#[test]
fn list_rules_verbose_prints_counters_like_iptables_nft() {
    common::require_kernel!();
    let differences = in_netns(|| {
        let ipt = Tool::oracle("iptables-nft");
        let x = Tool::xtnl(&[]);
        for l in [
            "-A INPUT -i lo -j ACCEPT",
            "-A INPUT -s 192.0.2.0/24 -d 198.51.100.1 -j ACCEPT",
            "-A INPUT -p tcp --dport 22 -m comment --comment ssh -j ACCEPT",
            "-N C",
            "-A C -j RETURN",
            "-A OUTPUT -o lo -j C",
        ] {
            ipt.must(l);
        }
        traffic();
        let mut out = Vec::new();
        for cmd in ["-S -v", "-S INPUT -v"] {
            out.extend(line_differences(
                cmd,
                &ipt.must(cmd).stdout,
                &x.must(cmd).stdout,
                true,
            ));
        }
        out
    });
    assert!(
        differences.is_empty(),
        "{} line(s) differ:\n{}\n",
        differences.len(),
        differences.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// -S CHAIN

/// `-S` / `-L` of a missing chain: iptables-nft 1.8.9 says "chain `nope' in table `filter' is
/// incompatible, use 'nft' tool." (1) of a chain that does not exist; xtnl deliberately says
/// what iptables-legacy says, "No chain/target/match by that name" (1).
#[test]
fn list_rules_of_one_chain() {
    common::require_kernel!();
    const STEPS: &[Step] = &[
        ok("-S INPUT"),
        ok("-S FORWARD"),
        ok("-N user"),
        ok("-S user"),
        ok("-A user -s 192.0.2.0/24 -j RETURN"),
        ok("-A user -p udp -m multiport --dports 53,123 -j ACCEPT"),
        ok("-A INPUT -j user"),
        ok("-S INPUT"),
        ok("-S user"),
        ok("-S INPUT -v"),
        fails("-S -v INPUT", 2, "Bad argument `INPUT'"),
        ok("-t nat -A POSTROUTING -o eth1 -j MASQUERADE"),
        ok("-t nat -S POSTROUTING"),
        ok("-t nat -S PREROUTING"),
        ok("-t nat -S"),
        ok("-t mangle -S"),
        ok("-t raw -S OUTPUT"),
        differs(
            "-S nope",
            (
                1,
                "chain `nope' in table `filter' is incompatible, use 'nft' tool.",
            ),
            (1, NO_CHAIN),
        ),
        differs(
            "-t nat -S nope",
            (
                1,
                "chain `nope' in table `nat' is incompatible, use 'nft' tool.",
            ),
            (1, NO_CHAIN),
        ),
        differs(
            "-L nope",
            (
                1,
                "chain `nope' in table `filter' is incompatible, use 'nft' tool.",
            ),
            (1, NO_CHAIN),
        ),
    ];
    sequence(FILTER_NAT, STEPS);
}

// ---------------------------------------------------------------------------------------------
// -L

const REPRESENTATIVE: &[&str] = &[
    "-N web",
    "-A INPUT -s 192.0.2.0/24 -d 198.51.100.7 -j ACCEPT",
    "-A INPUT -p tcp --dport 22 -j ACCEPT",
    "-A INPUT -p tcp -m multiport --dports 80,443,8000:8080 -j web",
    "-A INPUT -m state --state RELATED,ESTABLISHED -j ACCEPT",
    "-A INPUT -i lo -m comment --comment \"allow lo\" -j ACCEPT",
    "-A INPUT -p udp ! --sport 53 -j REJECT",
    "-A INPUT -p tcp -j REJECT --reject-with tcp-reset",
    "-A INPUT -j LOG --log-prefix \"in: \" --log-level 4",
    "-A web -s 203.0.113.0/27 -j DROP",
    "-A web -j RETURN",
    "-A FORWARD -i eth0 -o eth1 -m conntrack --ctstate NEW -j ACCEPT",
    "-A FORWARD ! -p udp -s 192.0.2.0/24 -j DROP",
    "-A OUTPUT -o lo -j ACCEPT",
    "-P FORWARD DROP",
    "-t nat -A PREROUTING -p tcp --dport 80 -j DNAT --to-destination 192.0.2.10:8080",
    "-t nat -A PREROUTING -d 203.0.113.5 -j DNAT --to-destination 192.0.2.1",
    "-t nat -A PREROUTING -p tcp --dport 8080 -j REDIRECT --to-ports 80",
    "-t nat -A POSTROUTING -o eth1 -j MASQUERADE",
    "-t nat -A POSTROUTING -p tcp -j MASQUERADE --to-ports 1024-2048",
    "-t nat -A POSTROUTING -s 192.0.2.0/24 -j SNAT --to-source 198.51.100.1",
];

const REPRESENTATIVE_V6: &[&str] = &[
    "-A INPUT -s 2001:db8::1 -j ACCEPT",
    "-A INPUT -p ipv6-icmp -j ACCEPT",
    "-A INPUT -d 2001:db8::/32 -p tcp --dport 443 -j ACCEPT",
    "-A INPUT -j REJECT",
    "-t nat -A POSTROUTING -s 2001:db8::/64 -j SNAT --to-source 2001:db8::99",
];

/// Line by line; with `exact` false, runs of spaces count as one and ends are trimmed.
fn line_differences(cmd: &str, theirs: &str, ours: &str, exact: bool) -> Vec<String> {
    let norm = |l: &str| {
        if exact {
            l.to_string()
        } else {
            l.split_whitespace().collect::<Vec<_>>().join(" ")
        }
    };
    let (t, o): (Vec<&str>, Vec<&str>) = (theirs.lines().collect(), ours.lines().collect());
    let mut out = Vec::new();
    for i in 0..t.len().max(o.len()) {
        let (a, b) = (t.get(i).map(|l| norm(l)), o.get(i).map(|l| norm(l)));
        if a != b {
            out.push(format!(
                "`{cmd}` line {}:\n    iptables-nft: {}\n    xtnl:         {}",
                i + 1,
                a.map_or("(none)".into(), |l| format!("{l:?}")),
                b.map_or("(none)".into(), |l| format!("{l:?}")),
            ));
        }
    }
    out
}

/// Builds the representative table with the oracle in a fresh namespace (with some traffic
/// counted), then runs each listing through both tools.
fn listing_differences(
    oracle: &'static str,
    xtnl_prefix: &'static [&'static str],
    table: &'static [&'static str],
    listings: &'static [&'static str],
    exact: bool,
) -> Vec<String> {
    in_netns(move || {
        let ipt = Tool::oracle(oracle);
        let x = Tool::xtnl(xtnl_prefix);
        for l in table {
            ipt.must(l);
        }
        traffic();
        let mut out = Vec::new();
        for cmd in listings {
            let (o, r) = (ipt.run(cmd), x.run(cmd));
            if o.status != 0 || r.status != 0 {
                out.push(format!(
                    "`{cmd}`:\n    iptables-nft: {}\n    xtnl: {}",
                    o.show(),
                    r.show()
                ));
                continue;
            }
            out.extend(line_differences(cmd, &o.stdout, &r.stdout, exact));
        }
        out
    })
}

fn assert_no_listing_differences(differences: Vec<String>) {
    assert!(
        differences.is_empty(),
        "{} line(s) differ:\n{}\n",
        differences.len(),
        differences.join("\n")
    );
}

const NUMERIC_LISTINGS: &[&str] = &[
    "-L -n",
    "-L -n -v",
    "-L -n -v -x --line-numbers",
    "-L INPUT -n",
    "-L web -n",
    "-L FORWARD -n --line-numbers",
    "-t nat -L -n",
    "-t nat -L -n -v",
    "-t nat -L POSTROUTING -n -v -x --line-numbers",
];

/// `-L` with `-n`, compared line by line with runs of spaces counted as one. iptables-nft
/// 1.8.9 prints the protocol column as a number with `-n` (`0`, `6`, `17`, `!17`, `58`),
/// xtnl as a name (`all`, `tcp`, `udp`, `!udp`, `ipv6-icmp`).
#[test]
fn list_numeric_like_iptables_nft() {
    common::require_kernel!();
    let mut differences =
        listing_differences("iptables-nft", &[], REPRESENTATIVE, NUMERIC_LISTINGS, false);
    differences.extend(listing_differences(
        "ip6tables-nft",
        &["-6"],
        REPRESENTATIVE_V6,
        &["-L -n", "-L -n -v", "-t nat -L -n"],
        false,
    ));
    assert_no_listing_differences(differences);
}

/// `-L` without `-n`, runs of spaces counted as one. iptables-nft names ports by service
/// (`dpt:ssh`, `http,https,8000:http-alt`, `spt:!domain`), prints LOG as `LOG level warn
/// prefix "in: "` and a missing interface as `any` with `-v` (with `-n`: `dpt:22`,
/// `LOG flags 0 level 4 prefix "in: "` and `*`).
#[test]
fn list_with_names_like_iptables_nft() {
    common::require_kernel!();
    assert_no_listing_differences(listing_differences(
        "iptables-nft",
        &[],
        REPRESENTATIVE,
        &["-L", "-L -v", "-L INPUT", "-t nat -L"],
        false,
    ));
}

/// The same listings compared byte for byte: column widths (`num`, `out`, exact counts, a
/// 10-character target, a negated protocol) and the trailing spaces of the last column.
#[test]
fn list_columns_exactly_like_iptables_nft() {
    common::require_kernel!();
    let mut differences =
        listing_differences("iptables-nft", &[], REPRESENTATIVE, NUMERIC_LISTINGS, true);
    differences.extend(listing_differences(
        "iptables-nft",
        &[],
        REPRESENTATIVE,
        &["-L", "-L -v"],
        true,
    ));
    assert_no_listing_differences(differences);
}

/// `-L -Z` (the man page: "-Z ... may be used in combination with -L"): iptables lists the
/// counters, then zeroes them.
#[test]
fn list_and_zero_in_one_command_like_iptables_nft() {
    common::require_kernel!();
    const STEPS: &[Step] = &[
        ok("-A INPUT -i lo -j ACCEPT"),
        ok("-A OUTPUT -o lo -j ACCEPT"),
        Step::Traffic,
        succeeds("-L -n -Z"),
        Step::Traffic,
        succeeds("-L INPUT -n -v -Z"),
        Step::Traffic,
        succeeds("-Z -L OUTPUT -n"),
    ];
    sequence(&["-S -v"], STEPS);
}

// ---------------------------------------------------------------------------------------------
// IPv6

const V6_STEPS: &[Step] = &[
    ok("-N v6"),
    ok("-A INPUT -s 2001:db8::1 -j ACCEPT"),
    ok("-I INPUT -p tcp --dport 22 -j v6"),
    differs("-X v6", CHAIN_BUSY, (1, "Too many links")),
    ok("-A v6 -d 2001:db8::/32 -j REJECT"),
    ok("-I INPUT 2 -p ipv6-icmp -j ACCEPT"),
    fails("-I INPUT 9 -j DROP", 1, "Index of insertion too big"),
    ok("-R INPUT 3 -s 2001:db8::2 -j DROP"),
    fails("-R INPUT 9 -j DROP", 1, "Index of replacement too big"),
    ok("-t nat -A POSTROUTING -o eth1 -j MASQUERADE"),
    ok("-t nat -I PREROUTING -p tcp --dport 80 -j DNAT --to-destination [2001:db8::2]:8080"),
    ok("-S"),
    ok("-S v6"),
    ok("-t nat -S PREROUTING"),
    ok("-D INPUT 1"),
    fails("-D INPUT 9", 1, "Index of deletion too big"),
    ok("-E v6 v6b"),
    differs("-X v6b", CHAIN_BUSY, (1, "Directory not empty")),
    ok("-F v6b"),
    ok("-X v6b"),
    fails("-X v6b", 1, NO_CHAIN),
    ok("-P INPUT DROP"),
    fails("-P nope DROP", 1, "Bad built-in chain name"),
    fails(
        "-A INPUT -s 192.0.2.1 -j ACCEPT",
        2,
        "host/network `192.0.2.1'",
    ),
    ok("-Z"),
    ok("-t nat -F"),
    ok("-F"),
    ok("-P INPUT ACCEPT"),
    ok("-S"),
];

#[test]
fn ipv6_with_dash_6_like_ip6tables_nft() {
    common::require_kernel!();
    sequence_with("ip6tables-nft", Tool::xtnl(&["-6"]), FILTER_NAT, V6_STEPS);
}

/// A program name ending in 6 makes xtnl ip6tables.
#[test]
fn ipv6_as_xtnl6_like_ip6tables_nft() {
    common::require_kernel!();
    let dir = std::env::temp_dir().join(format!("xtnl-test-{}-bin", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create the temp dir");
    let link = dir.join("xtnl6");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(common::xtnl_bin(), &link).expect("symlink xtnl6");
    let xtnl6 = Tool::xtnl_at(link.to_str().expect("UTF-8 temp path"), &[]);
    let failures = sequence_differences("ip6tables-nft", xtnl6, FILTER_NAT, V6_STEPS);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "{} difference(s) between ip6tables-nft and xtnl6:\n\n{}\n",
        failures.len(),
        failures.join("\n\n")
    );
}

// ---------------------------------------------------------------------------------------------
// The xtables lock and -w

/// iptables-nft 1.8.9 does not take the xtables lock at all (nf_tables transactions need
/// none), so the oracle here is iptables-legacy's behaviour: a change waits `-w` seconds for
/// the lock and then fails with status 4; `-w 0` fails at once; without `-w` xtnl waits its
/// bounded default (iptables-legacy 1.8.9 waits forever there); reads never take it.
#[test]
fn wait_option_and_the_xtables_lock() {
    in_netns(|| {
        let x = Tool::xtnl(&[]);
        let lock = x.lock.clone().expect("xtnl has a lock path");
        x.must("-N kept");
        // 5 s: the three timed waits below take 3 s of it.
        let mut holder = Command::new("flock")
            .args(["-x", &lock, "sleep", "5"])
            .spawn()
            .expect("start flock (util-linux)");
        let start = Instant::now();
        while run("flock", &["-n", "-x", &lock, "true"]).status.success() {
            assert!(
                start.elapsed() < Duration::from_secs(2),
                "flock never took {lock}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let busy = "Another app is currently holding the xtables lock";

        for line in [
            "-w 1 -A INPUT -j ACCEPT",
            "-w 1 -W 100000 -A INPUT -j ACCEPT",
        ] {
            let t = Instant::now();
            let r = x.run(line);
            let took = t.elapsed();
            assert!(r.has(4, busy), "xtnl {line}: {}", r.show());
            assert!(
                took >= Duration::from_millis(900) && took < Duration::from_millis(2500),
                "xtnl {line} gave up after {took:?}, not after about 1 s"
            );
        }

        // Without -w xtnl waits its bounded default (shortened here to 1 s through
        // XTNL_LOCK_WAIT; tests/dropin_lock.rs covers the default itself), then fails.
        let t = Instant::now();
        let o = common::run_env(
            common::xtnl_bin(),
            &["-A", "INPUT", "-j", "ACCEPT"],
            &[("XTABLES_LOCKFILE", lock.as_str()), ("XTNL_LOCK_WAIT", "1")],
        );
        let took = t.elapsed();
        let r = Res::new(o);
        assert!(r.has(4, busy), "xtnl -A without -w: {}", r.show());
        assert!(
            took >= Duration::from_millis(900) && took < Duration::from_millis(2500),
            "xtnl -A without -w gave up after {took:?}, not after its 1 s default"
        );
        // `-w 0` asks to fail at once.
        let t = Instant::now();
        let r = x.run("-w 0 -A INPUT -j ACCEPT");
        assert!(r.has(4, busy), "xtnl -w 0 -A: {}", r.show());
        assert!(
            t.elapsed() < Duration::from_millis(500),
            "xtnl -w 0 -A waited {:?}",
            t.elapsed()
        );

        // Reads do not wait.
        let r = x.must("-S");
        assert_eq!(
            r.stdout,
            "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n-N kept\n"
        );
        x.must("-L -n");
        x.must("-S INPUT -v");
        let r = x.run("-C INPUT -j ACCEPT");
        assert!(r.has(1, "Bad rule"), "xtnl -C: {}", r.show());
        // The oracle ignores the lock (see above).
        Tool::oracle("iptables-nft").must("-A OUTPUT -j ACCEPT");

        // `-w` without a limit waits until the holder is gone.
        let t = Instant::now();
        let r = x.run("-w -A INPUT -j DROP");
        assert_eq!(r.status, 0, "xtnl -w -A: {}", r.show());
        assert!(
            t.elapsed() > Duration::from_millis(300),
            "xtnl -w did not wait for the lock ({:?})",
            t.elapsed()
        );
        holder.wait().expect("wait for flock");
        assert_eq!(
            Tool::oracle("iptables-nft").must("-S").stdout,
            "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n-N kept\n-A INPUT -j DROP\n-A OUTPUT -j ACCEPT\n"
        );
    });
}

// ---------------------------------------------------------------------------------------------
// Rules that iptables syntax cannot express

/// `nft -a list chain ip filter CHAIN` as (handle, rule text) pairs.
fn nft_rules(chain: &str) -> Vec<(u64, String)> {
    run_ok("nft", &["-a", "list", "chain", "ip", "filter", chain])
        .lines()
        .filter_map(|l| {
            let (rule, handle) = l.trim().rsplit_once(" # handle ")?;
            if rule.starts_with("chain ") {
                return None;
            }
            Some((handle.parse().ok()?, rule.to_string()))
        })
        .collect()
}

fn handle_where(rules: &[(u64, String)], pred: impl Fn(&str) -> bool) -> u64 {
    rules
        .iter()
        .find(|(_, r)| pred(r))
        .map(|(h, _)| *h)
        .unwrap_or_else(|| panic!("no such rule in {rules:?}"))
}

/// A rule written by nft into an iptables table. `meta cpu 1` has no iptables syntax at all:
/// iptables-nft refuses the whole table ("Parsing nftables rule failed", status 3, after
/// printing the rules before it) and refuses `-D` in that chain; xtnl prints every other
/// rule and a `#` line naming the rule's handle, and its `-D` skips the rule.
/// `meta pkttype host` is `-m pkttype --pkt-type unicast` to iptables-nft, which xtnl does
/// not know: xtnl prints a `#` line for it (a difference) and does not delete it either.
#[test]
fn rules_iptables_syntax_cannot_express() {
    in_netns(|| {
        let ipt = Tool::oracle("iptables-nft");
        let x = Tool::xtnl(&[]);
        ipt.must("-A INPUT -s 192.0.2.1 -j ACCEPT");
        run_ok(
            "nft",
            &[
                "add", "rule", "ip", "filter", "INPUT", "meta", "cpu", "1", "accept",
            ],
        );
        ipt.must("-A INPUT -j ACCEPT");
        ipt.must("-A INPUT -s 192.0.2.2 -j DROP");
        ipt.must("-N pkt");
        run_ok(
            "nft",
            &[
                "add", "rule", "ip", "filter", "pkt", "meta", "pkttype", "host", "accept",
            ],
        );

        let before = nft_rules("INPUT");
        let cpu = handle_where(&before, |r| r.contains("meta cpu"));
        let plain = handle_where(&before, |r| r == "counter packets 0 bytes 0 accept");
        let pkt_before = nft_rules("pkt");
        let pkt = handle_where(&pkt_before, |r| r.contains("pkttype"));

        // The oracle refuses the table.
        let o = ipt.run("-S");
        assert!(
            o.has(3, "Parsing nftables rule failed") && !o.stdout.contains("192.0.2.2"),
            "iptables-nft -S no longer refuses the table: {}",
            o.show()
        );
        // xtnl shows all of it.
        let expressible = [
            "-P INPUT ACCEPT",
            "-P FORWARD ACCEPT",
            "-P OUTPUT ACCEPT",
            "-N pkt",
            "-A INPUT -s 192.0.2.1/32 -j ACCEPT",
            "-A INPUT -j ACCEPT",
            "-A INPUT -s 192.0.2.2/32 -j DROP",
        ];
        let r = x.must("-S");
        let (hashes, rest): (Vec<&str>, Vec<&str>) =
            r.stdout.lines().partition(|l| l.starts_with('#'));
        assert_eq!(rest, expressible, "xtnl -S:\n{}", r.stdout);
        assert_eq!(hashes.len(), 2, "xtnl -S:\n{}", r.stdout);
        let lines: Vec<&str> = r.stdout.lines().collect();
        let cpu_line = format!("# handle {cpu}: a rule in chain INPUT ");
        let pkt_line = format!("# handle {pkt}: a rule in chain pkt ");
        assert!(
            lines[5].starts_with(&cpu_line) && lines[8].starts_with(&pkt_line),
            "xtnl -S: the # lines are not where the rules are, or do not name their handles \
             ({cpu}, {pkt}):\n{}",
            r.stdout
        );
        let r = x.must("-S INPUT");
        assert_eq!(r.stdout.lines().nth(2), Some(lines[5]), "xtnl -S INPUT");

        // pkttype: the oracle knows it.
        let o = ipt.must("-S pkt");
        assert_eq!(
            o.stdout,
            "-N pkt\n-A pkt -m pkttype --pkt-type unicast -j ACCEPT\n"
        );
        let r = x.must("-S pkt");
        assert!(
            r.stdout.starts_with("-N pkt\n") && r.stdout.lines().nth(1) == Some(lines[8]),
            "xtnl -S pkt:\n{}",
            r.stdout
        );

        // The oracle cannot delete in that chain at all.
        let o = ipt.run("-D INPUT -j ACCEPT");
        assert!(
            o.has(3, "Parsing nftables rule failed"),
            "iptables-nft -D: {}",
            o.show()
        );
        assert_eq!(nft_rules("INPUT"), before);

        // xtnl deletes the plain ACCEPT after the inexpressible one, never that one.
        x.must("-D INPUT -j ACCEPT");
        let after = nft_rules("INPUT");
        let expect: Vec<(u64, String)> = before
            .iter()
            .filter(|(h, _)| *h != plain)
            .cloned()
            .collect();
        assert_eq!(after, expect, "xtnl -D INPUT -j ACCEPT");
        assert!(after.iter().any(|(h, _)| *h == cpu));
        for line in ["-D INPUT -j ACCEPT", "-C INPUT -j ACCEPT"] {
            let r = x.run(line);
            assert!(r.has(1, "Bad rule"), "xtnl {line}: {}", r.show());
        }
        assert_eq!(nft_rules("INPUT"), after);
        let r = x.run("-D pkt -j ACCEPT");
        assert!(r.has(1, "Bad rule"), "xtnl -D pkt -j ACCEPT: {}", r.show());
        assert_eq!(nft_rules("pkt"), pkt_before);

        // Positions count the inexpressible rule: 2 is before it.
        x.must("-I INPUT 2 -s 192.0.2.3 -j DROP");
        let order: Vec<String> = nft_rules("INPUT").into_iter().map(|(_, r)| r).collect();
        assert!(
            order.len() == 4
                && order[1].contains("192.0.2.3")
                && order[2].contains("meta cpu")
                && order[3].contains("192.0.2.2"),
            "xtnl -I INPUT 2: {order:?}"
        );
    });
}

// ---------------------------------------------------------------------------------------------
// Tables no command has created yet

/// iptables-nft creates a table, and each of its built-in chains, on first use, yet lists a
/// missing built-in chain as if it existed; some commands then say the chain does not exist
/// (`-D INPUT 1`, `-R INPUT 1`, `-X INPUT`, `-Z INPUT`: status 1, "No chain/target/match by
/// that name") while `-S INPUT` lists it and `-I INPUT 2` says "Index of insertion too big". xtnl
/// deliberately answers as if the built-in chains existed, as iptables-legacy does, except for
/// `-X INPUT`, which follows iptables-nft (a built-in chain can be deleted there). (xtnl
/// also creates the table and all its built-in chains for `-F`, `-Z` and `-X`, which
/// iptables-nft does not; only `nft list ruleset` shows that.)
#[test]
fn built_in_chains_not_created_yet() {
    common::require_kernel!();
    const STEPS: &[Step] = &[
        ok("-S"),
        ok("-S INPUT"),
        ok("-t nat -S"),
        ok("-t nat -S POSTROUTING"),
        ok("-L -n"),
        ok("-t mangle -L -n"),
        fails("-D INPUT -j ACCEPT", 1, "Bad rule"),
        fails("-I INPUT 2 -j ACCEPT", 1, "Index of insertion too big"),
        differs(
            "-D INPUT 1",
            (1, NO_CHAIN),
            (1, "Index of deletion too big"),
        ),
        differs(
            "-R INPUT 1 -j ACCEPT",
            (1, NO_CHAIN),
            (1, "Index of replacement too big"),
        ),
        // -X of a built-in chain is iptables-nft's under every name (issue 24): here INPUT
        // is not in the kernel yet, so it does not exist.
        fails("-X INPUT", 1, NO_CHAIN),
        ok("-F"),
        ok("-t nat -Z"),
        ok("-X"),
        // The table exists, FORWARD does not yet (for iptables-nft).
        ok("-A INPUT -j ACCEPT"),
        differs(
            "-D FORWARD 1",
            (1, NO_CHAIN),
            (1, "Index of deletion too big"),
        ),
        differs("-Z FORWARD", (1, NO_CHAIN), (0, "")),
        differs("-t raw -Z OUTPUT", (1, NO_CHAIN), (0, "")),
        ok("-S"),
        ok("-t raw -S"),
    ];
    sequence(&["-S", "-t nat -S", "-t raw -S"], STEPS);
}

// ---------------------------------------------------------------------------------------------
// Statuses and phrases

#[test]
fn error_statuses_and_phrases_like_iptables_nft() {
    common::require_kernel!();
    const STEPS: &[Step] = &[
        // `-C` on a table not created yet: the built-in chain is empty, not missing (xtnl's own
        // `-D INPUT -j ACCEPT` says so).
        fails(
            "-C INPUT -j ACCEPT",
            1,
            "Bad rule (does a matching rule exist in that chain?)",
        ),
        fails(
            "-t nat -C POSTROUTING -o eth1 -j MASQUERADE",
            1,
            "Bad rule (does a matching rule exist in that chain?)",
        ),
        // A jump to a chain that does not exist is a bad argument (2) for -C and -D too.
        fails("-C INPUT -j nope", 2, "Chain 'nope' does not exist"),
        fails("-D INPUT -g nope", 2, "Chain 'nope' does not exist"),
        // A table iptables does not know: status 3 in both iptables.
        fails("-t foo -S", 3, "table 'foo' does not exist"),
        fails("-t foo -A INPUT -j ACCEPT", 3, "table 'foo' does not exist"),
        fails("-N -x", 2, "chain name not allowed to start with `-'"),
        // A policy iptables does not know is refused with status 1, as the kernel would.
        fails("-P INPUT REJECT", 1, "Bad policy name"),
        fails("-P INPUT RETURN", 1, "Bad policy name"),
        ok("-S"),
    ];
    sequence(&["-S"], STEPS);
}

/// `-v` with a change prints what iptables prints: the rule for `-A/-I`, "Flushing chain
/// `X'", "Zeroing chain `X'", "Deleting chain `X'".
#[test]
fn verbose_changes_print_like_iptables_nft() {
    common::require_kernel!();
    const STEPS: &[Step] = &[
        ok("-v -N A"),
        ok("-v -A INPUT -s 192.0.2.1 -j ACCEPT"),
        ok("-v -I INPUT -p tcp --dport 22 -j A"),
        ok("-v -P INPUT ACCEPT"),
        ok("-v -F A"),
        ok("-v -Z"),
        ok("-v -F"),
        ok("-v -X"),
    ];
    sequence(&["-S"], STEPS);
}
