//! Usage errors of xtnl's own commands name the bad word and suggest the near one; every
//! command's `--help` answers with status 0 (issue 21). These refuse before anything reaches
//! the kernel; they run in a scratch namespace all the same.

mod common;

use std::process::Output;

use common::{in_netns, run, xtnl_bin};

fn xtnl(args: &[&str]) -> Output {
    run(xtnl_bin(), args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn every_command_has_its_help_with_status_0() {
    in_netns(|| {
        for cmd in [
            &["doctor"][..],
            &["list"],
            &["save"],
            &["restore"],
            &["apply"],
            &["demo"],
            &["serve"],
            &["reservation"],
            &["reservation", "setup"],
            &["forward", "add"],
            &["forward", "remove"],
            &["teardown"],
            &["sweep"],
            &["host", "setup"],
            &["migrate"],
        ] {
            let name = cmd.join(" ");
            for help in ["--help", "-h"] {
                let mut line = cmd.to_vec();
                line.push(help);
                let o = xtnl(&line);
                let out = String::from_utf8_lossy(&o.stdout);
                assert_eq!(o.status.code(), Some(0), "{name} {help}: {}", stderr(&o));
                assert!(
                    out.contains(&format!("Usage: xtnl {name}")),
                    "{name} {help}: {out}"
                );
                assert!(stderr(&o).is_empty(), "{name} {help}: {}", stderr(&o));
            }
            // `xtnl help CMD...` says the same.
            let mut line = vec!["help"];
            line.extend(cmd.iter());
            let o = xtnl(&line);
            assert_eq!(o.status.code(), Some(0), "help {name}: {}", stderr(&o));
            assert_eq!(
                o.stdout,
                xtnl(&[cmd, &["--help"][..]].concat()).stdout,
                "help {name}"
            );
        }
    });
}

#[test]
fn usage_errors_name_the_bad_word_with_status_2() {
    in_netns(|| {
        for (args, named, not) in [
            (
                &["demo", "extra"][..],
                &["unexpected argument 'extra'"][..],
                "'demo'",
            ),
            (
                &["list", "--jsn"][..],
                &[
                    "unexpected argument '--jsn'",
                    "tip: a similar argument exists: '--json'",
                ][..],
                "family",
            ),
            (
                &["list", "ip", "nat", "c", "more"][..],
                &["unexpected argument 'more'"][..],
                "family",
            ),
            (
                &["lsit"][..],
                &[
                    "unrecognized subcommand 'lsit'",
                    "tip: a similar subcommand exists: 'list'",
                ][..],
                "arguments",
            ),
            (
                &["reservation", "setup", "vcld-1", "--layuot", "map"][..],
                &[
                    "unexpected argument '--layuot'",
                    "tip: a similar argument exists: '--layout'",
                ][..],
                "vcld-1",
            ),
            (
                &["doctor", "now"][..],
                &["unexpected argument 'now'"][..],
                "'doctor'",
            ),
        ] {
            let o = xtnl(args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            for n in named {
                assert!(err.contains(n), "{args:?}: {err}");
            }
            assert!(!err.contains(not), "{args:?}: {err}");
            assert!(o.stdout.is_empty(), "{args:?}");
        }
        // With --json the refusal is also the JSON error object on standard output.
        let o = xtnl(&["list", "--jsn", "--json"]);
        assert_eq!(o.status.code(), Some(2));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        assert_eq!(v["ok"], false, "{v}");
        assert!(v["error"].to_string().contains("--jsn"), "{v}");
    });
}

/// The options of `xtnl CMD... --help` (a NAT-host command's help includes the options they
/// all take: `[-4|-6] [-t TABLE] [-w [SECS]] [--json]`, `--layout`).
fn help_options(path: &[&str]) -> Vec<String> {
    let cmd = path[0];
    let o = xtnl(&[path, &["--help"][..]].concat());
    assert_eq!(o.status.code(), Some(0), "{cmd} --help");
    let help = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut opts: Vec<String> = help
        .split(|c: char| c.is_whitespace() || "[]|,".contains(c))
        .filter(|w| w.len() > 1 && w.starts_with('-') && w.chars().nth(1) != Some(' '))
        .filter(|w| !w.ends_with('-') && !w.contains('='))
        .map(str::to_owned)
        .collect();
    if [
        "reservation",
        "forward",
        "teardown",
        "sweep",
        "host",
        "migrate",
    ]
    .contains(&cmd)
    {
        // The NAT-host commands' help names the options they all take.
        for o in ["-4", "-6", "-t", "-w", "--json", "--layout"] {
            assert!(
                opts.iter().any(|x| x == o),
                "{cmd} --help lacks {o}:\n{help}"
            );
        }
    }
    opts.sort();
    opts.dedup();
    opts
}

fn shell(program: &str, script: &str) -> String {
    let out = std::process::Command::new(program)
        .args(["-c", script])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e} (.ci/run installs it)"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every option of a command's help is offered by the bash, zsh and fish completions for
/// that command (`reservation setup --layout` was missing from bash and zsh, `migrate`
/// from zsh altogether).
#[test]
fn the_completions_offer_every_option_of_each_commands_help() {
    // (the command's path, the words after it on the line completed)
    let commands: &[(&[&str], &[&str])] = &[
        (&["reservation", "setup"], &["vcld-1"]),
        (&["forward", "add"], &["vcld-1"]),
        (&["forward", "remove"], &["vcld-1"]),
        (&["forward", "list"], &[]),
        (&["teardown"], &["vcld-1"]),
        (&["sweep"], &[]),
        (&["host", "setup"], &[]),
        (&["migrate"], &[]),
        (&["restore"], &[]),
        (&["save"], &[]),
        (&["apply"], &[]),
        (&["serve"], &[]),
        (&["list"], &[]),
        (&["doctor"], &[]),
        (&["demo"], &[]),
    ];
    let zsh = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/completions/_xtnl"))
        .expect("completions/_xtnl");
    let mut missing = Vec::new();
    for (path, words) in commands {
        let cmd = path.join(" ");
        let opts = help_options(path);
        assert!(!opts.is_empty(), "{cmd}: no options in its help");
        let mut line = vec!["xtnl"];
        line.extend(path.iter());
        line.extend(words.iter());
        line.push("-");
        let quoted: Vec<String> = line.iter().map(|w| format!("'{w}'")).collect();
        let bash = shell(
            "bash",
            &format!(
                "source completions/xtnl.bash; COMP_WORDS=({}); COMP_CWORD={}; _xtnl; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                quoted.join(" "),
                line.len() - 1
            ),
        );
        let fish = shell(
            "fish",
            &format!(
                "source completions/xtnl.fish; complete -C'{}'",
                line.join(" ")
            ),
        );
        let branch = zsh_options(&zsh, path);
        for o in &opts {
            if !bash.lines().any(|l| l == o) {
                missing.push(format!("bash: {cmd} {o}"));
            }
            if !fish
                .lines()
                .any(|l| l.split('\t').next() == Some(o.as_str()))
            {
                missing.push(format!("fish: {cmd} {o}"));
            }
            if !branch.contains(o) {
                missing.push(format!("zsh: {cmd} {o}"));
            }
        }
    }
    assert!(missing.is_empty(), "not offered:\n{}", missing.join("\n"));
}

/// The options zsh's `_arguments` offers for a command: the lines (`'--entry=[...`,
/// `'-i+[...`, `'*--forward=[...`, `'(-6 --ipv6)-4[...`) of the command's block in the
/// `_xtnl_own` function that clap_complete generated.
fn zsh_options(zsh: &str, path: &[&str]) -> Vec<String> {
    let Some(mut at) = zsh.find("_xtnl_own() {") else {
        return Vec::new();
    };
    for (k, w) in path.iter().enumerate() {
        if k > 0 {
            let ctx = format!(":xtnl-{}-command-$line[1]:", path[..k].join("-"));
            match zsh[at..].find(&ctx) {
                Some(i) => at += i,
                None => return Vec::new(),
            }
        }
        match zsh[at..].find(&format!("({w})\n_arguments")) {
            Some(i) => at += i,
            None => return Vec::new(),
        }
    }
    let block = &zsh[at..];
    let block = &block[..block.find("&& ret=0").unwrap_or(block.len())];
    block
        .lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix('\'')?;
            let l = match l.strip_prefix('(') {
                Some(g) => &g[g.find(')')? + 1..],
                None => l,
            };
            let l = l.trim_start_matches('*');
            let end = l.find(['=', '+', '['])?;
            l.starts_with('-').then(|| l[..end].to_string())
        })
        .collect()
}

/// The options a text names: `--word` and `-x` (troff escapes of a man page undone).
fn options_in(text: &str) -> Vec<String> {
    let plain = text
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

/// The man page's sections on xtnl's own commands name no option that the help (`xtnl
/// help`, each command's `--help`) does not have: the other direction of packaging.rs's check
/// that every option of the help is in the man page.
#[test]
fn every_option_of_the_man_pages_own_commands_is_in_the_help() {
    let man = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/man/xtnl.8"))
        .expect("xtnl.8");
    let start = man.find(".SH GLOBAL OPTIONS").expect("GLOBAL OPTIONS");
    let end = man
        .find(".SH IPTABLES COMMANDS")
        .expect("IPTABLES COMMANDS");
    let in_man = options_in(&man[start..end]);
    assert!(in_man.len() > 20, "man parse found too little: {in_man:?}");
    let mut help = String::from_utf8_lossy(&xtnl(&["help"]).stdout).into_owned();
    for cmd in [
        &["list"][..],
        &["restore"],
        &["save"],
        &["apply"],
        &["nft"],
        &["serve"],
        &["reservation", "setup"],
        &["forward", "add"],
        &["forward", "remove"],
        &["teardown"],
        &["sweep"],
        &["host", "setup"],
        &["migrate"],
    ] {
        let o = xtnl(&[cmd, &["--help"][..]].concat());
        help.push_str(&String::from_utf8_lossy(&o.stdout));
    }
    let in_help = options_in(&help);
    let missing: Vec<&String> = in_man.iter().filter(|o| !in_help.contains(o)).collect();
    assert!(
        missing.is_empty(),
        "in xtnl.8 but not in the help: {missing:?}"
    );
}
