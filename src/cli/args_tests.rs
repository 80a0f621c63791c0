//! The clap grammar accepts every line the commands' own readers accept (the shapes the
//! tests and the docs use), and refuses with the bad word named.

use super::*;

fn v(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

fn accepts(line: &str) -> Cli {
    parse(&v(line)).unwrap_or_else(|e| panic!("{line}: {}", e.render()))
}

fn refusal(line: &str) -> String {
    match parse(&v(line)) {
        Ok(c) => panic!("{line}: accepted as {c:?}"),
        Err(e) => e.render().to_string(),
    }
}

#[test]
fn the_definitions_are_consistent() {
    command().debug_assert();
}

#[test]
fn every_line_the_readers_take_is_accepted() {
    for line in [
        "demo",
        "doctor",
        "version",
        "help",
        "help reservation setup",
        "list",
        "list ip nat vcld-5 --json",
        "list --json ip",
        "restore",
        "restore -w rules.txt",
        "restore -nc -Tfilter -w 5 -W 1000 -M /sbin/modprobe f",
        "restore --noflush --test -6 -v --counters --table=nat --wait=3",
        "save -t nat -c -f /tmp/out --json -6",
        "save --counters --table=raw",
        "apply",
        "apply -",
        "apply doc.json -w",
        "apply -w 3 doc.json",
        "serve --stdio",
        "serve --socket /run/x.sock --socket-mode 0660 --socket-owner root --socket-group 0 -w 5 \
         --max-request-bytes 100 --max-clients 3 --max-clients-per-uid 1 --idle-timeout 9 \
         --line-timeout 2 --queue 7 --no-group-commit",
        "reservation setup vcld-1 --forward tcp/80=192.0.2.1:80 --forward eth0:udp/53=192.0.2.2:53 \
         -i eth1 --entry PREROUTING --comment-prefix -x -t nat -w -6 -4 --json --layout map",
        "reservation setup vcld-1 --no-comments --in-interface eth0 --wait=1 --ipv6",
        "reservation setup -w vcld-1",
        "forward add vcld-1 tcp/80=192.0.2.1:80 -i eth0 --comment-prefix p --json",
        "forward remove vcld-1 tcp/80",
        "forward list --layout map --json",
        "teardown vcld-1 --entry PREROUTING -t nat -w 2",
        "teardown vcld-1 --layout map --forward tcp/80 --forward udp/53",
        "sweep --prefix vcld- --keep a,b --json",
        "sweep --prefix vcld- --keep @/tmp/keep",
        "host setup --public-interface eth0 --private-interface br0 --private-network \
         192.0.2.0/24 --public-address 198.51.100.1 --ports 1000:2000 --chain c \
         --comment-prefix p -6",
        "migrate --to map --prefix vcld- --entry PREROUTING --comment-prefix p --json",
        "migrate --to chains --no-comments -w",
    ] {
        accepts(line);
    }
}

#[test]
fn wait_takes_a_number_only() {
    let Cli {
        command: Command::Restore(r),
        ..
    } = accepts("restore -w rules.txt")
    else {
        panic!("not restore")
    };
    assert_eq!(r.wait.wait.as_deref(), Some(""));
    assert_eq!(r.file.as_deref(), Some("rules.txt"));
    let Cli {
        command: Command::Apply(a),
        ..
    } = accepts("apply -w 3 doc.json")
    else {
        panic!("not apply")
    };
    assert_eq!(a.wait.wait.as_deref(), Some("3"));
    assert_eq!(a.file.as_deref(), Some("doc.json"));
    // serve's --wait always takes its value.
    assert_eq!(join_wait(&v("serve -w 5")), v("serve -w 5"));
    assert_eq!(join_wait(&v("apply -w 5 -w x")), v("apply --wait=5 -w x"));
}

#[test]
fn refusals_name_the_bad_word_and_suggest_the_near_one() {
    for (line, named) in [
        ("demo extra", "unexpected argument 'extra'"),
        ("list --jsn", "a similar argument exists: '--json'"),
        ("list ip nat c more", "unexpected argument 'more'"),
        ("lsit", "unrecognized subcommand 'lsit'"),
        ("lsit", "a similar subcommand exists: 'list'"),
        (
            "reservation setup vcld-1 --keep a",
            "unexpected argument '--keep'",
        ),
        ("reservation stup x", "a similar subcommand exists: 'setup'"),
        (
            "teardown x --layout maps",
            "invalid value 'maps' for '--layout",
        ),
        ("doctor now", "unexpected argument 'now'"),
        ("save -t", "a value is required for '--table <TABLE>'"),
    ] {
        let e = refusal(line);
        assert!(e.contains(named), "{line}: {e}");
    }
}

#[test]
fn every_command_has_its_help() {
    for path in [
        &["list"][..],
        &["reservation", "setup"],
        &["serve"],
        &["host", "setup"],
    ] {
        let h = help_of(&path.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        assert!(
            h.contains(&format!("Usage: xtnl {}", path.join(" "))),
            "{h}"
        );
    }
    assert!(help_of(&v("nosuch")).is_none());
}

/// The part of a completion file generated from [`command`] by clap_complete, as it stands
/// between the file's markers: the own commands' function renamed so that the file's
/// dispatcher (iptables' grammar after a leading option, hand-written) can call it.
fn generated(shell: clap_complete::Shell) -> String {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut command(), "xtnl", &mut buf);
    let text = String::from_utf8(buf).expect("clap_complete writes UTF-8");
    use clap_complete::Shell;
    match shell {
        // The function becomes `_xtnl_own`; the file registers its dispatcher `_xtnl`.
        Shell::Bash => {
            let end = text
                .rfind("if [[ \"${BASH_VERSINFO[0]}\"")
                .unwrap_or(text.len());
            text[..end].replace("_xtnl() {", "_xtnl_own() {")
        }
        Shell::Zsh => {
            let start = text.find("autoload -U is-at-least").unwrap_or(0);
            let end = text
                .find("if [ \"$funcstack[1]\" = \"_xtnl\" ]")
                .unwrap_or(text.len());
            text[start..end].replace("_xtnl() {", "_xtnl_own() {")
        }
        // For both names: the `-c xtnl` lines again for xtnl6.
        Shell::Fish => {
            let six = text.replace("complete -c xtnl ", "complete -c xtnl6 ");
            format!("{text}{six}")
        }
        _ => text,
    }
}

const BEGIN: &str = "# BEGIN generated by clap_complete from src/cli/args.rs: `XTNL_BLESS=1 cargo test --bin xtnl cli::args` rewrites it\n";
const END: &str = "# END generated\n";

/// The completion files' generated parts are what clap_complete makes of the definitions
/// today (so every option of every command is offered: `reservation setup --layout -i -w
/// -4` were missing when they were written by hand).
#[test]
fn the_completions_are_generated_from_the_definitions() {
    use clap_complete::Shell;
    let root = env!("CARGO_MANIFEST_DIR");
    let bless = std::env::var_os("XTNL_BLESS").is_some();
    let mut stale = Vec::new();
    for (shell, file) in [
        (Shell::Bash, "completions/xtnl.bash"),
        (Shell::Zsh, "completions/_xtnl"),
        (Shell::Fish, "completions/xtnl.fish"),
    ] {
        let path = format!("{root}/{file}");
        let text = std::fs::read_to_string(&path).expect("completion file");
        let (Some(a), Some(b)) = (text.find(BEGIN), text.find(END)) else {
            panic!("{file}: no generated part between its markers");
        };
        let want = generated(shell);
        if text[a + BEGIN.len()..b] != want {
            if bless {
                let new = format!("{}{BEGIN}{want}{}", &text[..a], &text[b..]);
                std::fs::write(&path, new).expect("write");
            } else {
                stale.push(file);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale (XTNL_BLESS=1 cargo test --bin xtnl cli::args rewrites them): {stale:?}"
    );
}

/// Every option of every command: `--long` and `-s` spellings, with the command's path.
fn all_options() -> Vec<(String, String)> {
    fn walk(c: &clap::Command, path: &str, out: &mut Vec<(String, String)>) {
        for a in c.get_arguments() {
            if a.get_id() == "help" {
                continue;
            }
            if let Some(l) = a.get_long() {
                out.push((path.to_string(), format!("--{l}")));
            }
            if let Some(s) = a.get_short() {
                out.push((path.to_string(), format!("-{s}")));
            }
        }
        for s in c.get_subcommands() {
            walk(s, format!("{path} {}", s.get_name()).trim(), out);
        }
    }
    let mut cmd = command();
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, "", &mut out);
    out
}

/// The options the man page's sections on xtnl's own commands (GLOBAL OPTIONS to IPTABLES
/// COMMANDS) name, troff escapes undone.
fn man_options() -> Vec<String> {
    let man = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/man/xtnl.8"))
        .expect("docs/man/xtnl.8");
    let start = man.find(".SH GLOBAL OPTIONS").expect("GLOBAL OPTIONS");
    let end = man
        .find(".SH IPTABLES COMMANDS")
        .expect("IPTABLES COMMANDS");
    let plain = man[start..end]
        .replace("\\-", "-")
        .replace("\\fB", " ")
        .replace("\\fI", " ")
        .replace("\\fR", " ")
        .replace("\\fP", " ")
        .replace('"', " ");
    let mut out: Vec<String> = plain
        .split(|c: char| c.is_whitespace() || "[]|(),;=".contains(c))
        .filter(|w| {
            (w.starts_with("--")
                && w.len() > 2
                && w[2..]
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !w.ends_with('-'))
                || (w.len() == 2
                    && w.starts_with('-')
                    && w[1..].chars().all(|c| c.is_ascii_alphanumeric()))
        })
        .map(str::to_owned)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The man page and the definitions name the same options: every option of every command
/// is in xtnl.8, and xtnl.8 names no option of its own commands that none has (`-V`,
/// `--version`, `-h`, `--help` are the top level's, outside clap).
#[test]
fn the_man_page_names_exactly_the_options_of_the_definitions() {
    let defined = all_options();
    let man = man_options();
    let missing: Vec<String> = defined
        .iter()
        .filter(|(_, o)| !man.contains(o))
        .map(|(p, o)| format!("{p} {o}"))
        .collect();
    assert!(missing.is_empty(), "not in xtnl.8: {missing:?}");
    let unknown: Vec<&String> = man
        .iter()
        .filter(|o| !["-V", "--version", "-h", "--help"].contains(&o.as_str()))
        .filter(|o| !defined.iter().any(|(_, d)| d == *o))
        .collect();
    assert!(
        unknown.is_empty(),
        "in xtnl.8 but no command has it: {unknown:?}"
    );
}

#[test]
fn the_wait_option_becomes_the_lock_policy() {
    use std::time::Duration;
    let wait = |line: &str| match accepts(line).command {
        Command::Apply(a) => a.wait.policy().expect("a policy"),
        other => panic!("{other:?}"),
    };
    assert_eq!(wait("apply -w"), WaitPolicy::Forever);
    assert_eq!(
        wait("apply -w 7 d.json"),
        WaitPolicy::Timeout(Duration::from_secs(7))
    );
    assert_eq!(wait("apply --wait=0"), WaitPolicy::Timeout(Duration::ZERO));
    let Command::Apply(a) = accepts("apply --wait=x").command else {
        panic!("not apply")
    };
    let e = a.wait.policy().expect_err("refused").to_string();
    assert!(e.contains("--wait \"x\": not a number"), "{e}");
}
