//! One machine interface for every command: `--json` commands answer in JSON on failure too
//! (with `apply`'s error object), `CMD --help` for each subcommand, and the global options
//! that may come before or after the subcommand.

use std::io::Write;

use serde_json::json;

use xtnl::error::Result;

/// xtnl's own subcommands (everything else starting with `-` is an iptables command line).
pub(crate) const SUBCOMMANDS: [&str; 15] = [
    "demo",
    "list",
    "restore",
    "save",
    "apply",
    "serve",
    "bench",
    "reservation",
    "forward",
    "teardown",
    "sweep",
    "host",
    "migrate",
    "doctor",
    "version",
];

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

/// Refuses words after a command that takes none (`demo extra`), or more than `list`
/// takes, naming the first word too many (not the command).
pub(crate) fn check_arity(args: &[String]) -> Result<()> {
    let max = match args.first().map(String::as_str) {
        Some("demo") => 0,
        // FAMILY TABLE CHAIN, and --json anywhere.
        Some("list") => 3 + usize::from(args.iter().any(|a| a == "--json")),
        _ => return Ok(()),
    };
    match args.get(1 + max) {
        Some(extra) => Err(xtnl::Error::InvalidInput(format!(
            "{}: unexpected argument {extra:?}",
            args[0]
        ))),
        None => Ok(()),
    }
}

/// ` (did you mean "X"?)` for the candidate closest to `word` (at most two edits away, or
/// `word` without its leading dashes), else nothing.
pub(crate) fn did_you_mean(word: &str, candidates: &[&str]) -> String {
    candidates
        .iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, c)| *d <= 2 && *d < c.len())
        .min()
        .map(|(_, c)| format!(" (did you mean {c:?}?)"))
        .unwrap_or_default()
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The help of `xtnl CMD --help` (or `-h`), taken from the usage text: the entry of CMD.
pub(crate) fn help_for(args: &[String], usage: &str) -> Option<String> {
    let cmd = args.first()?;
    if cmd == "serve" || !SUBCOMMANDS.contains(&cmd.as_str()) {
        return None;
    }
    if !args[1..].iter().any(|a| a == "--help" || a == "-h") {
        return None;
    }
    // The NAT-host commands also take the options their section names once for all (its
    // heading) and `--layout`.
    let nathost = matches!(
        cmd.as_str(),
        "reservation" | "forward" | "teardown" | "sweep" | "host" | "migrate"
    );
    let mut out = Vec::new();
    let mut shared = Vec::new();
    let mut inside = false;
    let mut heading = false;
    for line in usage.lines() {
        if line.starts_with("NAT-host operations") {
            heading = true;
        }
        if heading {
            shared.push(line);
            heading = !line.ends_with(':');
            continue;
        }
        let starts_entry = line.starts_with("  ") && !line.starts_with("   ");
        if starts_entry {
            inside = line[2..].starts_with(cmd.as_str())
                || (nathost && line[2..].starts_with("--layout "));
        }
        if inside {
            out.push(line);
        }
    }
    if out.is_empty() {
        return None;
    }
    if !nathost {
        shared.clear();
    }
    shared.extend(out);
    Some(format!(
        "usage: xtnl [GLOBAL-OPTIONS]\n{}",
        shared.join("\n")
    ))
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

    #[test]
    fn usage_errors_name_the_bad_word_and_suggest() {
        let e = check_arity(&v(&["demo", "extra"])).unwrap_err().to_string();
        assert!(e.contains("demo: unexpected argument \"extra\""), "{e}");
        assert!(check_arity(&v(&["list", "ip", "nat", "c", "--json"])).is_ok());
        let e = check_arity(&v(&["list", "ip", "nat", "c", "d"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"d\""), "{e}");
        assert_eq!(
            did_you_mean("lsit", &SUBCOMMANDS),
            " (did you mean \"list\"?)"
        );
        assert_eq!(
            did_you_mean("--jsn", &["--json"]),
            " (did you mean \"--json\"?)"
        );
        assert_eq!(did_you_mean("frobnicate", &SUBCOMMANDS), "");
    }

    #[test]
    fn subcommand_help_is_its_usage_entry() {
        let usage = "usage: ...\n  list [FAMILY]   print\n                  more\n  save [-t T]     print saved\n";
        let h = help_for(&v(&["list", "--help"]), usage).unwrap();
        assert!(
            h.contains("list [FAMILY]") && h.contains("more") && !h.contains("save"),
            "{h}"
        );
        assert!(help_for(&v(&["list"]), usage).is_none());
        assert!(help_for(&v(&["-S", "--help"]), usage).is_none());
    }
}
