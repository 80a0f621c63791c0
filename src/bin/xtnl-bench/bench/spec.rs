//! The workload: reservation names, the agent's rules in iptables words, restore files, nft
//! scripts, and the agent's shell-out sequences (docs: shared notes, nat-host-workload.md).

use std::fmt::Write as _;

/// The reservation chain of reservation `id` (the agent's naming).
pub fn chain(id: usize) -> String {
    format!("vcld-{id}")
}

/// A contention worker's own chain (a prefix of its own, so a sweep finds exactly these).
pub fn worker_chain(w: usize) -> String {
    format!("vcw-{w}")
}

pub const WORKER_PREFIX: &str = "vcw-";

fn host(id: usize) -> String {
    format!("10.{}.{}.{}", (id >> 16) & 255, (id >> 8) & 255, id & 255)
}

/// The reservation's two forwards: (public port, private address:port).
pub fn forwards(id: usize) -> [(u16, String); 2] {
    let base = 10_000 + 2 * (id % 25_000) as u16;
    [
        (base, format!("{}:3389", host(id))),
        (base + 1, format!("{}:22", host(id))),
    ]
}

pub fn jump_comment(chain: &str) -> String {
    format!("VCL: jump from nat table PREROUTING chain to reservation NAT chain {chain}")
}

pub fn forward_comment(port: u16, to: &str) -> String {
    format!("VCL: forward eth1:tcp/{port} --> {to}")
}

/// The jump from PREROUTING, in iptables words after `-I PREROUTING`.
pub fn jump_words(chain: &str) -> Vec<String> {
    words(&[
        "-m",
        "comment",
        "--comment",
        &jump_comment(chain),
        "-j",
        chain,
    ])
}

/// A forward's DNAT rule, in iptables words after `-I CHAIN`.
pub fn dnat_words(port: u16, to: &str) -> Vec<String> {
    words(&[
        "-i",
        "eth1",
        "-p",
        "tcp",
        "-m",
        "comment",
        "--comment",
        &forward_comment(port, to),
        "-m",
        "tcp",
        "--dport",
        &port.to_string(),
        "-j",
        "DNAT",
        "--to-destination",
        to,
    ])
}

/// The rule every tool inserts at the head of the target chain (and that is removed again).
pub const INSERT_PORT: u16 = 50_443;
pub const INSERT_TO: &str = "192.0.2.3:3389";

pub fn insert_words() -> Vec<String> {
    words(&[
        "-i",
        "eth1",
        "-p",
        "tcp",
        "-m",
        "tcp",
        "--dport",
        &INSERT_PORT.to_string(),
        "-j",
        "DNAT",
        "--to-destination",
        INSERT_TO,
    ])
}

pub fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

/// A restore line: words joined, those with blanks double-quoted (iptables-restore's
/// quoting; the comments here hold no quotes).
pub fn line(w: &[String]) -> String {
    w.iter()
        .map(|s| {
            if s.contains(' ') {
                format!("\"{s}\"")
            } else {
                s.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Restore input adding reservations `from..to` to table nat.
pub fn populate_file(from: usize, to: usize) -> String {
    let mut s = String::from("*nat\n");
    for i in from..to {
        let _ = writeln!(s, ":{} - [0:0]", chain(i));
    }
    for i in from..to {
        let c = chain(i);
        let _ = writeln!(s, "-A PREROUTING {}", line(&jump_words(&c)));
        for (port, to) in forwards(i) {
            let _ = writeln!(s, "-A {c} {}", line(&dnat_words(port, &to)));
        }
    }
    s.push_str("COMMIT\n");
    s
}

/// Restore input that puts `chain` of reservation `id` back as populated: flushed, then its
/// two forwards.
pub fn refill_file(id: usize) -> String {
    let c = chain(id);
    let mut s = format!("*nat\n-F {c}\n");
    for (port, to) in forwards(id) {
        let _ = writeln!(s, "-A {c} {}", line(&dnat_words(port, &to)));
    }
    s.push_str("COMMIT\n");
    s
}

/// Restore input of each operation, for the batch tools.
pub fn restore_flush(chain: &str) -> String {
    format!("*nat\n-F {chain}\nCOMMIT\n")
}

pub fn restore_insert(chain: &str) -> String {
    format!("*nat\n-I {chain} {}\nCOMMIT\n", line(&insert_words()))
}

pub fn restore_setup(id: usize, c: &str) -> String {
    let mut s = format!(
        "*nat\n:{c} - [0:0]\n-I PREROUTING {}\n",
        line(&jump_words(c))
    );
    for (port, to) in forwards(id) {
        let _ = writeln!(s, "-I {c} {}", line(&dnat_words(port, &to)));
    }
    s.push_str("COMMIT\n");
    s
}

pub fn restore_teardown(c: &str) -> String {
    format!(
        "*nat\n-D PREROUTING {}\n-F {c}\n-X {c}\nCOMMIT\n",
        line(&jump_words(c))
    )
}

/// nft's own syntax for the same operations (`nft -f -` scripts and argument lists).
pub fn nft_flush(chain: &str) -> Vec<String> {
    words(&["flush", "chain", "ip", "nat", chain])
}

pub fn nft_insert(chain: &str) -> Vec<String> {
    words(&[
        "insert",
        "rule",
        "ip",
        "nat",
        chain,
        "iifname",
        "eth1",
        "tcp",
        "dport",
        &INSERT_PORT.to_string(),
        "counter",
        "dnat",
        "to",
        INSERT_TO,
    ])
}

pub fn nft_list(chain: &str) -> Vec<String> {
    words(&["list", "chain", "ip", "nat", chain])
}

pub fn nft_setup(id: usize, c: &str) -> String {
    let mut s = format!(
        "add chain ip nat {c}\ninsert rule ip nat PREROUTING counter jump {c} comment \"{}\"\n",
        jump_comment(c)
    );
    for (port, to) in forwards(id) {
        let _ = writeln!(
            s,
            "insert rule ip nat {c} iifname \"eth1\" tcp dport {port} counter dnat to {to} \
             comment \"{}\"",
            forward_comment(port, &to)
        );
    }
    s
}

/// The handle of the rule in `nft -a list chain` output that jumps to `chain`.
pub fn nft_jump_handle(listing: &str, chain: &str) -> Option<u64> {
    let jump = format!("jump {chain}");
    listing.lines().find_map(|l| {
        let (rule, handle) = l.rsplit_once("# handle ")?;
        let hit = rule
            .split_whitespace()
            .collect::<Vec<_>>()
            .windows(2)
            .any(|w| format!("{} {}", w[0], w[1]) == jump);
        if hit {
            handle.trim().parse().ok()
        } else {
            None
        }
    })
}

pub fn nft_teardown(chain: &str, jump_handle: u64) -> String {
    format!(
        "delete rule ip nat PREROUTING handle {jump_handle}\nflush chain ip nat {chain}\n\
         delete chain ip nat {chain}\n"
    )
}

/// One step of the agent's shell-out sequences.
pub enum Step {
    /// An iptables command (arguments after the program and `-w`).
    Ipt(Vec<String>),
    /// `iptables-save -t nat`, written to the agent's save file.
    Save,
}

/// Runs the agent's set-up of reservation `id` in `chain` (workload note: list; create the
/// chain unless present; list; insert the jump unless one exists; per forward: list, insert
/// the DNAT rule unless an equal one exists; save). `run` runs one step and returns its
/// standard output, or the tool's error; the first error ends the sequence.
pub fn agent_setup<E>(
    id: usize,
    chain: &str,
    run: &mut impl FnMut(Step) -> Result<String, E>,
) -> Result<(), E> {
    let list = || Step::Ipt(words(&["--list-rules", "--table", "nat"]));
    let listed = run(list())?;
    if !has_chain(&listed, chain) {
        run(Step::Ipt(words(&["--new-chain", chain, "--table", "nat"])))?;
    }
    let listed = run(list())?;
    if !has_jump(&listed, chain) {
        let mut a = words(&["--insert", "PREROUTING", "--table", "nat"]);
        a.extend(jump_words(chain));
        run(Step::Ipt(a))?;
    }
    for (port, to) in forwards(id) {
        let listed = run(list())?;
        let dport = format!("--dport {port} ");
        let present = listed
            .lines()
            .any(|l| l.starts_with(&format!("-A {chain} ")) && l.contains(&dport));
        if !present {
            let mut a = words(&["--insert", chain, "--table", "nat"]);
            a.extend(dnat_words(port, &to));
            run(Step::Ipt(a))?;
        }
    }
    run(Step::Save)?;
    Ok(())
}

/// The agent's teardown: list; flush; list; delete the jump; delete the chain (a missing
/// chain or jump is skipped, as the agent treats "not there" as done).
pub fn agent_teardown<E>(
    chain: &str,
    run: &mut impl FnMut(Step) -> Result<String, E>,
) -> Result<(), E> {
    let list = || Step::Ipt(words(&["--list-rules", "--table", "nat"]));
    let listed = run(list())?;
    let present = has_chain(&listed, chain);
    if present {
        run(Step::Ipt(words(&["--flush", chain, "--table", "nat"])))?;
    }
    let listed = run(list())?;
    if has_jump(&listed, chain) {
        let mut a = words(&["--delete", "PREROUTING", "--table", "nat"]);
        a.extend(jump_words(chain));
        run(Step::Ipt(a))?;
    }
    if present {
        run(Step::Ipt(words(&[
            "--delete-chain",
            chain,
            "--table",
            "nat",
        ])))?;
    }
    Ok(())
}

pub fn has_chain(listing: &str, chain: &str) -> bool {
    let want = format!("-N {chain}");
    listing.lines().any(|l| l == want)
}

pub fn has_jump(listing: &str, chain: &str) -> bool {
    let tail = format!(" -j {chain}");
    listing
        .lines()
        .any(|l| l.starts_with("-A PREROUTING ") && l.ends_with(&tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jump_handle_is_found_by_target_only() {
        let listing = "table ip nat {\n\tchain PREROUTING {\n\t\tcounter jump vcld-10 # handle 4\n\
                       \t\tcounter jump vcld-1 comment \"x\" # handle 9\n\t}\n}\n";
        assert_eq!(nft_jump_handle(listing, "vcld-1"), Some(9));
        assert_eq!(nft_jump_handle(listing, "vcld-10"), Some(4));
        assert_eq!(nft_jump_handle(listing, "vcld-2"), None);
    }

    #[test]
    fn listing_checks_match_whole_names() {
        let l = "-N vcld-10\n-A PREROUTING -m comment --comment \"x\" -j vcld-10\n";
        assert!(has_chain(l, "vcld-10") && !has_chain(l, "vcld-1"));
        assert!(has_jump(l, "vcld-10") && !has_jump(l, "vcld-1"));
    }

    #[test]
    fn restore_lines_quote_comments() {
        let l = line(&jump_words("vcld-3"));
        assert_eq!(
            l,
            "-m comment --comment \"VCL: jump from nat table PREROUTING chain to reservation \
             NAT chain vcld-3\" -j vcld-3"
        );
    }
}
