//! One machine interface for every command: `--json` commands answer in JSON on failure too
//! (with `apply`'s error object), and the global options that may come before or after the
//! subcommand. (Each command's `--help` is clap's: `cli::args`.)

use std::io::Write;

use serde_json::json;

use xtnl::error::Result;

/// Whether this command line asks for JSON output.
pub(crate) fn wants_json(args: &[String]) -> bool {
    args.iter().any(|a| a == "--json")
}

/// Prints `{"version": 1, "ok": false, "error": {...}}` on standard output for a failed
/// `--json` command (standard error still gets the message), then passes the result on.
pub(crate) fn finish(json: bool, result: Result<i32>) -> Result<i32> {
    if json && let Err(e) = &result {
        let v = json!({"version": 1, "ok": false, "error": xtnl::json::error_value(e)});
        let _ = writeln!(std::io::stdout().lock(), "{v}");
    }
    result
}

/// Moves global options to where the dispatcher reads them: `--policy-file X` and
/// `--audit X` anywhere go to the front (neither is an iptables option), and a leading `-4`/`-6` before a
/// subcommand that takes it (`xtnl -6 reservation setup ...`) goes after it.
pub(crate) fn hoist(args: Vec<String>) -> Vec<String> {
    let mut front = Vec::new();
    let mut rest = Vec::with_capacity(args.len());
    let mut it = args.into_iter().peekable();
    while let Some(a) = it.next() {
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        if matches!(name, "--policy-file" | "--audit") {
            let inline = a.contains('=');
            front.push(a);
            if !inline && let Some(v) = it.next() {
                front.push(v);
            }
            continue;
        }
        rest.push(a);
    }
    front.extend(rest);
    let fam = |a: &str| matches!(a, "-4" | "-6" | "--ipv4" | "--ipv6");
    let takes_family = |c: &str| {
        matches!(
            c,
            "restore" | "save" | "reservation" | "forward" | "teardown" | "sweep" | "host"
        )
    };
    let mut i = 0;
    while i < front.len() {
        if matches!(front[i].as_str(), "--policy-file" | "--audit") {
            i += 2;
        } else if front[i].starts_with("--policy-file=") || front[i].starts_with("--audit=") {
            i += 1;
        } else {
            break;
        }
    }
    let mut fams = Vec::new();
    while front.get(i).is_some_and(|a| fam(a)) {
        fams.push(front.remove(i));
    }
    match front.get(i) {
        Some(c) if !fams.is_empty() && takes_family(c) => front.extend(fams),
        _ => {
            for (k, f) in fams.into_iter().enumerate() {
                front.insert(i + k, f);
            }
        }
    }
    front
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn globals_move_to_where_they_are_read() {
        assert_eq!(
            hoist(v(&["-6", "reservation", "setup", "vcld-1"])),
            v(&["reservation", "setup", "vcld-1", "-6"])
        );
        assert_eq!(
            hoist(v(&["save", "--json", "--audit", "off", "--policy-file=/p"])),
            v(&["--audit", "off", "--policy-file=/p", "save", "--json"])
        );
        // iptables command lines keep their -6 (and their own --policy).
        assert_eq!(
            hoist(v(&["-6", "-t", "nat", "-S"])),
            v(&["-6", "-t", "nat", "-S"])
        );
        assert_eq!(
            hoist(v(&["--audit", "off", "-6", "teardown", "x"])),
            v(&["--audit", "off", "teardown", "x", "-6"])
        );
    }
}
