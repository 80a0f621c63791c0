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
            "doctor",
            "list",
            "save",
            "restore",
            "apply",
            "demo",
            "reservation",
        ] {
            let o = xtnl(&[cmd, "--help"]);
            let out = String::from_utf8_lossy(&o.stdout);
            assert_eq!(o.status.code(), Some(0), "{cmd} --help: {}", stderr(&o));
            assert!(out.contains(cmd), "{cmd} --help: {out}");
            assert!(stderr(&o).is_empty(), "{cmd} --help: {}", stderr(&o));
        }
    });
}

#[test]
fn usage_errors_name_the_bad_word_with_status_2() {
    in_netns(|| {
        for (args, named, not) in [
            (
                &["demo", "extra"][..],
                "unexpected argument \"extra\"",
                "\"demo\"",
            ),
            (
                &["list", "--jsn"][..],
                "unknown option \"--jsn\" (did you mean \"--json\"?)",
                "family",
            ),
            (
                &["list", "ip", "nat", "c", "more"][..],
                "unexpected argument \"more\"",
                "family",
            ),
            (
                &["lsit"][..],
                "unknown command \"lsit\" (did you mean \"list\"?)",
                "arguments",
            ),
        ] {
            let o = xtnl(args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains(named), "{args:?}: {err}");
            assert!(!err.contains(not), "{args:?}: {err}");
            assert!(o.stdout.is_empty(), "{args:?}");
        }
    });
}
