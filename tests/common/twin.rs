//! The twin-namespace harness of the drop-in tests, for both backends: xtnl installed under
//! iptables' names (symbolic links), and twin namespaces in which the same command lines run
//! through the real iptables (iptables-nft or iptables-legacy, [`Side`]) and through xtnl.

use std::path::{Path, PathBuf};
use std::process::Output;

use super::{in_netns, run_env, xtnl_bin};

/// A directory of links to the built xtnl named `names` (`iptables`, `ip6tables-legacy`,
/// ...); returns the directory.
pub fn links(tag: &str, names: &[&str]) -> PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dropin-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create link dir");
    for n in names {
        let path = dir.join(n);
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink(xtnl_bin(), &path).expect("symlink xtnl");
    }
    dir
}

pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}stderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Which backend a twin run compares: xtnl's nf_tables backend against iptables-nft, or its
/// x_tables backend against iptables-legacy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Nft,
    Legacy,
}

impl Side {
    /// The real program for `tool` (`iptables`, `ip6tables-save`, ...).
    pub fn oracle(self, tool: &str) -> String {
        let (base, rest) = match tool.split_once('-') {
            Some((b, r)) => (b, format!("-{r}")),
            None => (tool, String::new()),
        };
        match self {
            Side::Nft => format!("{base}-nft{rest}"),
            Side::Legacy => format!("{base}-legacy{rest}"),
        }
    }

    /// The xtnl link for `tool` (the name chooses the backend for legacy; nft is chosen
    /// through XTNL_BACKEND so that the plain names are exercised too).
    pub fn ours(self, dir: &Path, tool: &str) -> (PathBuf, Vec<(&'static str, &'static str)>) {
        match self {
            Side::Nft => (dir.join(tool), vec![("XTNL_BACKEND", "nft")]),
            Side::Legacy => (dir.join(self.oracle(tool)), Vec::new()),
        }
    }

    pub fn link_names(self) -> Vec<String> {
        let tools = [
            "iptables",
            "ip6tables",
            "iptables-save",
            "ip6tables-save",
            "iptables-restore",
            "ip6tables-restore",
        ];
        match self {
            Side::Nft => tools.iter().map(|t| t.to_string()).collect(),
            Side::Legacy => tools.iter().map(|t| self.oracle(t)).collect(),
        }
    }
}

/// One command of a twin run.
#[derive(Debug, Clone)]
pub struct Step {
    pub tool: String,
    pub args: Vec<String>,
    pub stdin: Option<String>,
    /// Run by the real iptables on both sides (preparing what the compared steps act on).
    pub setup: bool,
}

impl Step {
    pub fn new(tool: &str, args: Vec<String>) -> Step {
        Step {
            tool: tool.into(),
            args,
            stdin: None,
            setup: false,
        }
    }
}

/// Runs `steps` in a fresh namespace through the real iptables (`ours == false`) or through
/// xtnl, then the saved rulesets of both families; returns each compared step's output and
/// the saved state.
pub fn twin_run(
    side: Side,
    dir: PathBuf,
    ours: bool,
    lock: PathBuf,
    steps: Vec<Step>,
) -> (Vec<String>, String) {
    in_netns(move || {
        let lock = lock.to_str().expect("UTF-8").to_owned();
        let mut outs = Vec::new();
        for Step {
            tool,
            args,
            stdin,
            setup,
        } in &steps
        {
            let mut owned_env: Vec<(String, String)> = Vec::new();
            let (program, mut env) = if tool == "sh" {
                // A shell line: $IPT, $SAVE, $RESTORE (and $IP6T...) name this side's tools.
                for (var, t) in [
                    ("IPT", "iptables"),
                    ("SAVE", "iptables-save"),
                    ("RESTORE", "iptables-restore"),
                    ("IP6T", "ip6tables"),
                    ("SAVE6", "ip6tables-save"),
                    ("RESTORE6", "ip6tables-restore"),
                ] {
                    let p = if ours && !setup {
                        side.ours(&dir, t).0.to_str().expect("UTF-8").to_owned()
                    } else {
                        side.oracle(t)
                    };
                    owned_env.push((var.into(), p));
                    // $REAL_IPT, $REAL_SAVE, ...: the real tool on both sides (the other
                    // tool reading what this side's wrote).
                    owned_env.push((format!("REAL_{var}"), side.oracle(t)));
                }
                let e = if ours && !setup {
                    side.ours(&dir, "iptables").1
                } else {
                    Vec::new()
                };
                ("sh".to_owned(), e)
            } else if ours && !setup {
                let (p, e) = side.ours(&dir, tool);
                (p.to_str().expect("UTF-8").to_owned(), e)
            } else {
                (side.oracle(tool), Vec::new())
            };
            env.push(("XTABLES_LOCKFILE", lock.as_str()));
            for (k, v) in &owned_env {
                env.push((k.as_str(), v.as_str()));
            }
            let o = match stdin {
                None => {
                    let a: Vec<&str> = args.iter().map(String::as_str).collect();
                    run_env(&program, &a, &env)
                }
                Some(input) => {
                    use std::io::Write;
                    let mut cmd = std::process::Command::new(&program);
                    cmd.args(args)
                        .stdin(std::process::Stdio::piped())
                        .stdout(std::process::Stdio::piped())
                        .stderr(std::process::Stdio::piped());
                    for (k, v) in &env {
                        cmd.env(k, v);
                    }
                    let mut child = cmd.spawn().expect("spawn");
                    child
                        .stdin
                        .take()
                        .expect("stdin")
                        .write_all(input.as_bytes())
                        .expect("write stdin");
                    child.wait_with_output().expect("wait")
                }
            };
            if *setup {
                assert!(o.status.success(), "setup {program} {args:?}: {}", text(&o));
            } else {
                outs.push(text(&o));
            }
        }
        let mut state = String::new();
        for save in ["iptables-save", "ip6tables-save"] {
            let o = run_env(
                &side.oracle(save),
                &[],
                &[("XTABLES_LOCKFILE", lock.as_str())],
            );
            for l in String::from_utf8_lossy(&o.stdout).lines() {
                if !l.starts_with('#') {
                    state.push_str(l);
                    state.push('\n');
                }
            }
        }
        (outs, state)
    })
}

/// Runs `steps` in twin namespaces, through the real tool and through xtnl: `None` when both
/// saw the same (every compared step's output, then the saved rulesets), else the report
/// `LABEL:\n--- ORACLE:\n...--- xtnl:\n...`. `adjust` rewrites the real tool's outputs
/// first (where it names itself differently from xtnl under the same link name).
pub fn twin_difference(
    side: Side,
    dir: &Path,
    label: &str,
    oracle: &str,
    steps: Vec<Step>,
    adjust: impl Fn(&mut String),
) -> Option<String> {
    let mut theirs = twin_run(
        side,
        dir.to_path_buf(),
        false,
        super::private_lock_path(),
        steps.clone(),
    );
    for out in &mut theirs.0 {
        adjust(out);
    }
    let ours = twin_run(
        side,
        dir.to_path_buf(),
        true,
        super::private_lock_path(),
        steps,
    );
    (theirs != ours).then(|| {
        format!(
            "{label}:\n--- {oracle}:\n{}{}--- xtnl:\n{}{}",
            theirs.0.join(""),
            theirs.1,
            ours.0.join(""),
            ours.1
        )
    })
}
