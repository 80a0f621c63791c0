//! The privileged helper attacked as issue 11 describes: every attack runs as uid 65534
//! against a setuid-root copy, a `cap_net_admin,cap_net_raw+ep` copy and a simulated sudo run
//! (real uid 0 with `SUDO_UID=65534`), each in a private mount namespace (its own /run and
//! /etc) inside a network namespace the test created, and must be refused or harmless.
//!
//! Each install lives in a [`Jail`]: a mount namespace held open by a sleeping process, where
//! /run is a fresh tmpfs holding the privileged copy (/run/bin/xtnl), /etc holds the test's
//! policy, and /run/systemd/journal/socket is a datagram socket the test reads: the audit
//! records arrive there as journald would receive them.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use common::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum How {
    Setuid,
    Capability,
    Sudo,
    /// Root with `PKEXEC_UID=65534`, as pkexec starts a program.
    Pkexec,
    /// Root with `DOAS_USER=nobody`, as doas starts a program.
    Doas,
}

const ALL: [How; 3] = [How::Setuid, How::Capability, How::Sudo];

/// Reservation chains: anything but jumps; PREROUTING: only jumps to reservation chains.
const POLICY: &str = common::nat_host_policy!(8);

fn scratch(name: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "xtnl-hard-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn all(&self) -> String {
        format!("status {}\n{}{}", self.code, self.stdout, self.stderr)
    }
}

/// Environment every caller run gets besides its own: a PATH whose first directory holds
/// programs named like every tool xtnl (or its benchmarks) may start, each of which leaves
/// a mark if run, and hostile values for what a program might read.
const TOOLS: &[&str] = &[
    "iptables",
    "iptables-nft",
    "iptables-nft-restore",
    "iptables-nft-save",
    "iptables-legacy",
    "iptables-legacy-restore",
    "iptables-legacy-save",
    "iptables-restore",
    "iptables-save",
    "ip6tables",
    "ip6tables-nft",
    "ip6tables-legacy",
    "ip6tables-restore",
    "ip6tables-save",
    "xtables-nft-multi",
    "xtables-legacy-multi",
    "nft",
    "ip",
    "flock",
    "modprobe",
    "sh",
    "xtnl",
];

const HOSTILE_ENV: &[(&str, &str)] = &[
    ("PATH", "/run/fakebin:/usr/sbin:/usr/bin:/sbin:/bin"),
    ("TMPDIR", "/run/caller/tmp"),
    ("HOME", "/run/caller/home"),
    ("XDG_RUNTIME_DIR", "/run/caller/xdg"),
    ("XDG_CONFIG_HOME", "/run/caller/xdg"),
    ("XDG_DATA_HOME", "/run/caller/xdg"),
    ("XDG_CACHE_HOME", "/run/caller/xdg"),
    ("LD_PRELOAD", "/run/caller/evil.so"),
    ("LD_LIBRARY_PATH", "/run/caller"),
    ("LD_AUDIT", "/run/caller/evil.so"),
    (
        "GLIBC_TUNABLES",
        "glibc.malloc.check=3:glibc.malloc.mmap_threshold=1",
    ),
    ("LANG", "xx_XX.UTF-8"),
    ("LC_ALL", "xx_XX.UTF-8"),
    ("LANGUAGE", "xx"),
    ("LOCPATH", "/run/caller"),
    ("XTABLES_LOCKFILE", "/run/caller/lock"),
    ("XTNL_POLICY", "/run/caller/policy.toml"),
    ("XTNL_AUDIT", "off"),
    ("IFS", "/"),
];

/// A private mount namespace with one privileged install of xtnl.
struct Jail {
    how: How,
    holder: Child,
    journal: UnixDatagram,
    dir: PathBuf,
    /// Every record received so far (the socket is drained after each run: a datagram
    /// socket's queue holds only a few).
    seen: std::cell::RefCell<Vec<String>>,
}

const JAIL_SCRIPT: &str = r#"
set -eu
mount -t tmpfs -o mode=0755 xtnl-test-run /run
mkdir -p /run/bin /run/systemd/journal /run/fakebin /run/marks /run/caller/tmp /run/caller/home /run/caller/xdg
chmod 1777 /run/marks
chown -R 65534:65534 /run/fakebin /run/caller
cp "$XTNL_SRC" /run/bin/xtnl
chown root:root /run/bin/xtnl
case "$XTNL_HOW" in
setuid) chmod 4755 /run/bin/xtnl ;;
capability)
    chmod 0755 /run/bin/xtnl
    setcap cap_net_admin,cap_net_raw+ep /run/bin/xtnl
    # The capability install's lock recipe: readable by the agent.
    install -m 0644 /dev/null /run/xtables.lock ;;
sudo) chmod 0755 /run/bin/xtnl ;;
esac
# What iptables creates: root's, mode 0600.
[ -e /run/xtables.lock ] || install -m 0600 /dev/null /run/xtables.lock
for t in $XTNL_TOOLS; do
    printf '#!/bin/sh\nid -u > /run/marks/%s\n' "$t" > /run/fakebin/$t
    chmod 0755 /run/fakebin/$t
done
touch /run/systemd/journal/socket
mount --bind "$XTNL_JOURNAL" /run/systemd/journal/socket
mount --bind "$XTNL_ETC" /etc
echo ready
exec sleep 100000
"#;

impl Jail {
    fn new(how: How, policy: &str) -> Jail {
        let dir = scratch("jail");
        let etc = dir.join("etc");
        std::fs::create_dir(&etc).unwrap();
        for f in [
            "protocols",
            "services",
            "ld.so.cache",
            "passwd",
            "group",
            "nsswitch.conf",
        ] {
            let src = Path::new("/etc").join(f);
            if src.exists() {
                std::fs::copy(&src, etc.join(f)).unwrap();
            }
        }
        std::fs::create_dir(etc.join("xtnl")).unwrap();
        std::fs::write(etc.join("xtnl/policy.toml"), policy).unwrap();
        for (p, m) in [
            (etc.clone(), 0o755),
            (etc.join("xtnl"), 0o755),
            (etc.join("xtnl/policy.toml"), 0o644),
        ] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
        }
        let sock = dir.join("journal");
        let journal = UnixDatagram::bind(&sock).unwrap();
        std::fs::set_permissions(&sock, std::fs::Permissions::from_mode(0o666)).unwrap();
        journal.set_nonblocking(true).unwrap();
        let how_s = match how {
            How::Setuid => "setuid",
            How::Capability => "capability",
            How::Sudo | How::Pkexec | How::Doas => "sudo",
        };
        let mut holder = Command::new("unshare")
            .args([
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                JAIL_SCRIPT,
            ])
            .env("XTNL_SRC", xtnl_bin())
            .env("XTNL_HOW", how_s)
            .env("XTNL_ETC", &etc)
            .env("XTNL_JOURNAL", &sock)
            .env("XTNL_TOOLS", TOOLS.join(" "))
            .stdout(Stdio::piped())
            .spawn()
            .expect("unshare (.ci/run installs util-linux)");
        let mut line = String::new();
        BufReader::new(holder.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready", "jail set-up failed");
        Jail {
            how,
            holder,
            journal,
            dir,
            seen: Default::default(),
        }
    }

    fn pid(&self) -> String {
        self.holder.id().to_string()
    }

    /// A command that runs `program args` in the jail as the caller would: as uid 65534 for
    /// the setuid and capability installs, as root with `SUDO_UID=65534` for sudo. Its
    /// environment is only `env` (plus sudo's variables).
    fn caller(&self, program: &str, args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut c = Command::new("nsenter");
        c.args(["-t", &self.pid(), "-m", "--"]);
        if matches!(self.how, How::Setuid | How::Capability) {
            c.args([
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
            ]);
        }
        c.arg(program).args(args).env_clear();
        c.env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        for (k, v) in env {
            c.env(k, v);
        }
        match self.how {
            How::Sudo => {
                c.env("SUDO_UID", "65534")
                    .env("SUDO_GID", "65534")
                    .env("SUDO_USER", "nobody");
            }
            How::Pkexec => {
                c.env("PKEXEC_UID", "65534");
            }
            How::Doas => {
                c.env("DOAS_USER", "nobody");
            }
            How::Setuid | How::Capability => {}
        }
        c
    }

    /// Runs xtnl as the caller with the hostile environment, `stdin` on standard input.
    fn xtnl(&self, args: &[&str], stdin: &[u8]) -> Run {
        let mut c = self.caller("/run/bin/xtnl", args, HOSTILE_ENV);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        let data = stdin.to_vec();
        let feeder = std::thread::spawn(move || {
            let _ = input.write_all(&data);
        });
        let out = child.wait_with_output().unwrap();
        let _ = feeder.join();
        self.drain();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// A root shell in the jail.
    fn root(&self, script: &str) -> Run {
        let out = Command::new("nsenter")
            .args(["-t", &self.pid(), "-m", "--", "sh", "-c", script])
            .output()
            .unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Every audit record received so far (the MESSAGE field of each datagram).
    fn records(&self) -> Vec<String> {
        self.drain();
        self.seen.borrow().clone()
    }

    fn drain(&self) {
        let mut out = self.seen.borrow_mut();
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = self.journal.recv(&mut buf) {
            let text = String::from_utf8_lossy(&buf[..n]).into_owned();
            let msg = text
                .lines()
                .find_map(|l| l.strip_prefix("MESSAGE="))
                .unwrap_or_default()
                .to_owned();
            assert!(
                text.contains("SYSLOG_IDENTIFIER=xtnl\n"),
                "not a native journal record: {text}"
            );
            out.push(msg);
        }
    }

    /// Programs of the caller's PATH that ran, and files created in the caller's
    /// directories.
    fn marks(&self) -> String {
        self.root("ls -A /run/marks /run/caller/tmp /run/caller/home /run/caller/xdg")
            .stdout
            .lines()
            .filter(|l| !l.is_empty() && !l.ends_with(':'))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl Drop for Jail {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn base_state() {
    for cmd in [
        "-t nat -N other",
        "-t nat -N vcld-1",
        "-t nat -A PREROUTING -j other",
        "-t nat -A PREROUTING -j vcld-1",
        "-t nat -A vcld-1 -j other",
        "-t nat -A vcld-1 -p tcp --dport 1 -j DNAT --to-destination 192.0.2.1",
    ] {
        let args: Vec<&str> = cmd.split(' ').collect();
        run_ok("iptables-nft", &args);
        run_ok("iptables-legacy", &args);
    }
}

fn state() -> String {
    format!(
        "{}\n{}",
        nft_ruleset(),
        run_ok("iptables-legacy-save", &["-t", "nat"])
            .lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

#[test]
fn delegated_runs_start_no_program_of_the_caller_and_refuse_unlisted_commands_first() {
    for how in ALL {
        in_netns(move || {
            let jail = Jail::new(how, POLICY);
            base_state();
            let before = nft_ruleset();
            // Not on the allow-list: refused with status 2 before anything else (no policy
            // read, no namespace made, no file or directory created, no program started).
            for args in [
                &["bench", "--quick", "--out", "/run/caller/out"][..],
                &["bench"][..],
                &["demo"][..],
                &["frobnicate"][..],
                &[][..],
            ] {
                let r = jail.xtnl(args, b"");
                assert_eq!(r.code, 2, "{how:?} {args:?}: {}", r.all());
                assert!(
                    r.stderr.contains("is not allowed in a privileged run"),
                    "{how:?} {args:?}: {}",
                    r.stderr
                );
                assert!(!r.stderr.contains("policy"), "{how:?}: {}", r.stderr);
            }
            assert_eq!(nft_ruleset(), before, "{how:?}");
            assert_eq!(
                jail.root("test -e /run/caller/out && echo EXISTS").stdout,
                ""
            );
            assert!(jail.records().is_empty(), "{how:?}");

            // Allowed commands under the hostile PATH and environment: they work, start
            // nothing of the caller's, create nothing in its directories, and are audited
            // (XTNL_AUDIT=off, XTNL_POLICY and XTABLES_LOCKFILE are ignored).
            let runs: &[(&[&str], &[u8])] = &[
                (&["-t", "nat", "-N", "vcld-2"], b""),
                (&["-v", "-t", "nat", "-I", "PREROUTING", "-j", "vcld-2"], b""),
                (
                    &["restore", "--noflush"],
                    b"*nat\n-A vcld-2 -p tcp --dport 2 -j DNAT --to-destination 192.0.2.2\nCOMMIT\n",
                ),
                (&["save", "-t", "nat"], b""),
                (&["-S", "-t", "nat"], b""),
                (&["list", "ip", "nat"], b""),
                (&["--backend", "auto", "-v", "-t", "nat", "-N", "vcld-3"], b""),
                (
                    &["apply"],
                    br#"{"transactions": [{"operations": [{"op": "create_chain", "table": "nat", "chain": "vcld-4"}]}]}"#,
                ),
                (&["teardown", "vcld-2"], b""),
                (&["--backend", "legacy", "-t", "nat", "-N", "vcld-5"], b""),
                (&["version"], b""),
                (&["help"], b""),
            ];
            for (args, stdin) in runs {
                let r = jail.xtnl(args, stdin);
                assert_eq!(r.code, 0, "{how:?} {args:?}: {}", r.all());
                assert!(
                    !r.stderr.contains("xtnl: audit:"),
                    "{how:?}: records go to the journal: {}",
                    r.stderr
                );
            }
            assert_eq!(
                jail.marks(),
                "",
                "{how:?}: the caller's programs ran or files appeared"
            );
            let nft = nft_ruleset();
            assert!(nft.contains("chain vcld-4"), "{how:?}");
            assert!(!nft.contains("chain vcld-2"), "{how:?}: torn down");
            assert!(run_ok("iptables-legacy-save", &["-t", "nat"]).contains(":vcld-5 -"));
            let records = jail.records();
            let via = match how {
                How::Setuid => "via=setuid",
                How::Capability => "via=capabilities",
                How::Sudo => "via=sudo",
                How::Pkexec => "via=pkexec",
                How::Doas => "via=doas",
            };
            for want in [
                "create chain ip nat vcld-2",
                "insert rule ip nat PREROUTING: -t nat -I PREROUTING -j vcld-2",
                // x_tables' change, recorded in the same words as nf_tables'.
                "create chain ip nat vcld-5",
            ] {
                for phase in ["attempt ", "result "] {
                    assert!(
                        records.iter().any(|r| r.starts_with(phase)
                            && r.contains(via)
                            && r.contains("uid=65534 ")
                            && r.contains(want)),
                        "{how:?}: no {phase}record of {want:?}: {records:#?}"
                    );
                }
            }
            let netns = std::fs::metadata("/proc/thread-self/ns/net")
                .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
                .unwrap();
            assert!(
                records
                    .iter()
                    .all(|r| r.contains(&format!("netns={netns} "))),
                "{how:?}: {records:#?}"
            );
        });
    }
}

#[test]
fn file_arguments_through_symbolic_links_at_root_only_files_are_never_opened() {
    for how in ALL {
        in_netns(move || {
            let jail = Jail::new(how, POLICY);
            let setup = jail.root(
                "printf 'SECRET-LINE\\n' > /run/secret && chmod 0600 /run/secret && \
                 ln -s /run/secret /run/caller/link && mkdir /run/caller/out && \
                 ln -s /run/secret /run/caller/out/results.md && \
                 chown -h 65534:65534 /run/caller/link /run/caller/out /run/caller/out/results.md",
            );
            assert_eq!(setup.code, 0, "{}", setup.all());
            let before = nft_ruleset();
            for args in [
                &["restore", "--noflush", "/run/caller/link"][..],
                &["apply", "/run/caller/link"][..],
                &["sweep", "--prefix", "vcld-", "--keep", "@/run/caller/link"][..],
                &["bench", "--quick", "--out", "/run/caller/out"][..],
                &["bench", "--quick", "--out", "/etc/x"][..],
            ] {
                let r = jail.xtnl(args, b"");
                assert_eq!(r.code, 2, "{how:?} {args:?}: {}", r.all());
                assert!(!r.all().contains("SECRET"), "{how:?} {args:?}: {}", r.all());
            }
            assert_eq!(nft_ruleset(), before);
            let after = jail
                .root("cat /run/secret; stat -c %a /run/secret; test -e /etc/x && echo CREATED");
            assert_eq!(after.stdout, "SECRET-LINE\n600\n", "{how:?}");
            assert_eq!(jail.marks(), "", "{how:?}");
        });
    }
}

#[test]
fn closed_standard_descriptors_do_not_redirect_output_into_files_xtnl_opens() {
    for how in ALL {
        in_netns(move || {
            let jail = Jail::new(how, POLICY);
            for (i, args) in [
                "-t nat -N vcld-6",
                "-S -t nat",
                "-v -t nat -A vcld-6 -j RETURN",
            ]
            .iter()
            .enumerate()
            {
                let script = format!("exec /run/bin/xtnl {args} <&- >&- 2>&-");
                let mut c = jail.caller("sh", &["-c", &script], &[]);
                let status = c.status().unwrap();
                jail.drain();
                assert!(status.success(), "{how:?} #{i} {args}: {status}");
            }
            let nft = nft_ruleset();
            assert!(nft.contains("chain vcld-6"), "{how:?}");
            // Nothing was written into the lock file (the first file xtnl opens).
            let lock = jail.root("stat -c %s /run/xtables.lock");
            assert_eq!(lock.stdout.trim(), "0", "{how:?}: {}", lock.all());
            assert!(
                jail.records()
                    .iter()
                    .any(|r| r.starts_with("result ") && r.contains("create chain ip nat vcld-6")),
                "{how:?}"
            );
        });
    }
}

#[test]
fn sigkill_at_swept_delays_leaves_no_commit_without_an_attempt_record() {
    for how in ALL {
        in_netns(move || {
            let jail = Jail::new(how, POLICY);
            let (mut committed, mut killed) = (0, 0);
            // Root's SIGKILL, which always lands (the caller's cannot reach a setuid run that
            // made its real uid root, nor sudo's; see the SIGSTOP test): the worst case.
            for i in 0..60u32 {
                let chain = format!("vcld-k{i}");
                let mut c = jail.caller("/run/bin/xtnl", &["-t", "nat", "-N", &chain], &[]);
                c.stdout(Stdio::null()).stderr(Stdio::null());
                let mut child = c.spawn().unwrap();
                std::thread::sleep(Duration::from_micros(u64::from(i) * 150));
                let _ = child.kill();
                let status = child.wait().unwrap();
                jail.drain();
                if status.code().is_none() {
                    killed += 1;
                }
                if nft_ruleset().contains(&format!("chain {chain} ")) {
                    committed += 1;
                    let records = jail.records();
                    assert!(
                        records.iter().any(|r| r.starts_with("attempt ")
                            && r.contains(&format!("create chain ip nat {chain}"))),
                        "{how:?}: {chain} was committed without an attempt record"
                    );
                }
            }
            eprintln!(
                "{how:?}: 60 runs, {killed} killed, {committed} committed, 0 without an attempt record"
            );
            assert!(
                killed > 0 && committed > 0,
                "{how:?}: the sweep hit neither side"
            );
        });
    }
}

#[test]
fn the_caller_cannot_stop_a_helper_nor_hold_the_lock_in_the_recommended_installs() {
    for how in ALL {
        in_netns(move || {
            let jail = Jail::new(how, POLICY);
            // Root holds the lock for a moment, so the helper waits (-w) with the lock
            // pending, then takes it.
            let mut holder = Command::new("nsenter")
                .args([
                    "-t",
                    &jail.pid(),
                    "-m",
                    "--",
                    "flock",
                    "/run/xtables.lock",
                    "sleep",
                    "0.5",
                ])
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(100));
            let mut c = jail.caller(
                "/run/bin/xtnl",
                &["-w", "5", "-t", "nat", "-N", "vcld-s"],
                &[],
            );
            let mut helper = c.spawn().unwrap();
            std::thread::sleep(Duration::from_millis(100));
            let pid = helper.id().to_string();
            // The caller (uid 65534) tries to stop it, and to kill it.
            let stop = |sig: &str| {
                Command::new("setpriv")
                    .args([
                        "--reuid=65534",
                        "--regid=65534",
                        "--clear-groups",
                        "kill",
                        sig,
                        &pid,
                    ])
                    .stderr(Stdio::null())
                    .status()
                    .unwrap()
                    .success()
            };
            let stopped = stop("-STOP");
            let tstp = stop("-TSTP");
            let _ = holder.wait();
            if stopped {
                // Only the capability install lets the caller signal its helper: its real
                // uid is the caller's (documented).
                assert_eq!(how, How::Capability);
                let _ = Command::new("kill").args(["-CONT", &pid]).status();
            } else {
                assert_ne!(how, How::Capability);
                assert!(!tstp, "{how:?}");
            }
            let status = helper.wait().unwrap();
            assert!(status.success(), "{how:?}: {status}");
            assert!(nft_ruleset().contains("chain vcld-s"), "{how:?}");
            // The lock is free again, and in the recommended installs the caller cannot even
            // open it (root's 0600 file), so it cannot hold it either.
            let free = jail.root("flock -n /run/xtables.lock true");
            assert_eq!(free.code, 0, "{how:?}: {}", free.all());
            let mut take = jail.caller("flock", &["-n", "/run/xtables.lock", "true"], &[]);
            take.stderr(Stdio::null());
            let took = take.status().unwrap().success();
            match how {
                How::Capability => assert!(took, "the capability recipe makes it readable"),
                How::Setuid => assert!(!took, "uid 65534 opened root's lock file"),
                // The simulated sudo caller is root itself; what matters is that the real
                // caller (uid 65534) cannot: checked as uid 65534 below.
                How::Sudo | How::Pkexec | How::Doas => {}
            }
            if how == How::Sudo {
                let r = Command::new("nsenter")
                    .args([
                        "-t",
                        &jail.pid(),
                        "-m",
                        "--",
                        "setpriv",
                        "--reuid=65534",
                        "--regid=65534",
                        "--clear-groups",
                        "flock",
                        "-n",
                        "/run/xtables.lock",
                        "true",
                    ])
                    .stderr(Stdio::null())
                    .status()
                    .unwrap();
                assert!(!r.success(), "uid 65534 opened root's lock file");
            }
        });
    }
}

/// Deletes and replaces of jumping rules by every route, on both backends: under an entry
/// with `jump_to` (PREROUTING: only jumps to vcld-*) and one without (vcld-*: no jumps).
#[test]
fn deletes_and_replaces_of_jumping_rules_are_judged_by_the_rule_s_real_target() {
    for how in ALL {
        in_netns(move || {
            let jail = Jail::new(how, POLICY);
            base_state();
            let json = |chain: &str, rule: &str| {
                format!(
                    r#"{{"transactions": [{{"operations": [{{"op": "delete_rule", "table": "nat", "chain": "{chain}", "rule": "{rule}"}}]}}]}}"#
                )
            };
            for backend in ["nft", "legacy"] {
                let mut denied: Vec<(Vec<String>, String)> = Vec::new();
                for (chain, jumping, replacement) in [
                    ("PREROUTING", "1", "-j vcld-1"),
                    ("vcld-1", "1", "-j ACCEPT"),
                ] {
                    let words = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
                    denied.push((
                        words(&format!("-t nat -D {chain} {jumping}")),
                        String::new(),
                    ));
                    denied.push((words(&format!("-t nat -D {chain} -j other")), String::new()));
                    denied.push((
                        words(&format!("-t nat -R {chain} {jumping} {replacement}")),
                        String::new(),
                    ));
                    denied.push((
                        words("restore --noflush"),
                        format!("*nat\n-D {chain} {jumping}\nCOMMIT\n"),
                    ));
                    denied.push((
                        words("restore --noflush"),
                        format!("*nat\n-R {chain} {jumping} {replacement}\nCOMMIT\n"),
                    ));
                    denied.push((words("apply"), json(chain, "-j other")));
                }
                for (args, stdin) in &denied {
                    let mut all = vec!["--backend", backend];
                    all.extend(args.iter().map(String::as_str));
                    let before = state();
                    let r = jail.xtnl(&all, stdin.as_bytes());
                    assert_eq!(r.code, 5, "{how:?} {all:?} {stdin}: {}", r.all());
                    assert!(
                        r.all().contains("(a rule jumping to other)"),
                        "{how:?} {all:?}: {}",
                        r.all()
                    );
                    assert_eq!(state(), before, "{how:?} {all:?}");
                }
                // Controls: the same routes for rules the policy allows to go.
                for args in [
                    &["-t", "nat", "-D", "vcld-1", "2"][..],
                    &["-t", "nat", "-D", "PREROUTING", "2"][..],
                ] {
                    let mut all = vec!["--backend", backend];
                    all.extend_from_slice(args);
                    let r = jail.xtnl(&all, b"");
                    assert_eq!(r.code, 0, "{how:?} {all:?}: {}", r.all());
                }
            }
        });
    }
}

#[test]
fn deleting_by_handle_through_the_library_reads_the_rule_s_target() {
    in_netns(|| {
        base_state();
        let policy = xtnl::policy::Policy::parse(POLICY, Path::new("p.toml")).unwrap();
        let mut s = xtnl::nft::Session::builder()
            .lock_mode(xtnl::lock::LockMode::Never)
            .guard(Some(std::sync::Arc::new(policy)))
            .open()
            .unwrap();
        let nat = xtnl::nft::TableRef::new(xtnl::model::Family::Ipv4, "nat");
        for chain in ["PREROUTING", "vcld-1"] {
            let c = nat.chain(chain);
            let first = s.list_rules(&c).unwrap()[0].handle;
            let mut tx = xtnl::nft::Transaction::new();
            tx.delete_rule(&c, first);
            let before = nft_ruleset();
            let e = s.commit(&tx).unwrap_err();
            assert_eq!(e.kind(), xtnl::ErrorKind::PolicyDenied, "{chain}: {e}");
            assert!(e.to_string().contains("(a rule jumping to other)"), "{e}");
            assert_eq!(nft_ruleset(), before);
        }
        // A handle the chain does not hold is the kernel's refusal, not the policy's.
        let mut tx = xtnl::nft::Transaction::new();
        tx.delete_rule(&nat.chain("PREROUTING"), 999_999);
        let e = s.commit(&tx).unwrap_err();
        assert_eq!(e.kind(), xtnl::ErrorKind::NotFound, "{e}");
    });
}

#[test]
fn teardown_under_a_policy_never_turns_a_wrong_jump_guess_into_a_denial() {
    in_netns(|| {
        let dir = scratch("guess");
        let policy = dir.join("policy.toml");
        std::fs::write(&policy, POLICY).unwrap();
        let lock = private_lock_path();
        let xtnl = |args: &[&str]| {
            let p = policy.to_str().unwrap();
            let mut all = vec!["--policy-file", p, "--audit", "off"];
            all.extend_from_slice(args);
            run_env(
                xtnl_bin(),
                &all,
                &[("XTABLES_LOCKFILE", lock.to_str().unwrap())],
            )
        };
        // The chain is created, then a foreign rule right after it (the handle a teardown
        // would guess is the jump), then the jump itself.
        run_ok("iptables-nft", &["-t", "nat", "-N", "vcld-9"]);
        run_ok(
            "iptables-nft",
            &["-t", "nat", "-A", "PREROUTING", "-p", "udp", "-j", "ACCEPT"],
        );
        run_ok(
            "iptables-nft",
            &["-t", "nat", "-A", "PREROUTING", "-j", "vcld-9"],
        );
        let out = xtnl(&["teardown", "vcld-9"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let after = nft_ruleset();
        assert!(!after.contains("vcld-9"), "{after}");
        assert!(after.contains("udp"), "the foreign rule stays: {after}");
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

/// A `-Z` line in a restore file zeroes the counters where it stands, as iptables-restore
/// does (firewalld's start restores `*TABLE -F -X -Z COMMIT`), on both backends, and the
/// file's other lines commit with it; a `-Z` of a chain that is not there changes nothing.
#[test]
fn zero_lines_in_a_restore_file_zero_counters_on_both_backends() {
    in_netns(|| {
        let counted = [
            "-t", "filter", "-A", "INPUT", "-j", "ACCEPT", "-c", "7", "700",
        ];
        run_ok("iptables-nft", &counted);
        run_ok("iptables-legacy", &counted);
        let lock = private_lock_path();
        let restore = |backend: &str, text: &[u8]| {
            let mut c = Command::new(xtnl_bin());
            c.args([
                "--audit",
                "off",
                "--backend",
                backend,
                "restore",
                "--noflush",
            ])
            .env("XTABLES_LOCKFILE", &lock)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
            let mut child = c.spawn().unwrap();
            child.stdin.take().unwrap().write_all(text).unwrap();
            child.wait_with_output().unwrap()
        };
        for (backend, save) in [
            ("nft", "iptables-nft-save"),
            ("legacy", "iptables-legacy-save"),
        ] {
            // A chain that is not there: refused, nothing changes.
            let out = restore(backend, b"*filter\n-A INPUT -j DROP\n-Z nochain\nCOMMIT\n");
            assert_ne!(
                out.status.code(),
                Some(0),
                "{backend}: -Z of a missing chain"
            );
            let before = run_ok(save, &["-c"]);
            assert!(before.contains("[7:700] -A INPUT -j ACCEPT"), "{before}");
            assert!(!before.contains("DROP"), "{before}");
            let out = restore(backend, b"*filter\n-A INPUT -j DROP\n-Z INPUT\nCOMMIT\n");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{backend}: {err}");
            let after = run_ok(save, &["-c"]);
            assert!(
                after.contains("[0:0] -A INPUT -j ACCEPT"),
                "{backend}: {after}"
            );
            assert!(after.contains("-A INPUT -j DROP"), "{backend}: {after}");
            assert!(!after.contains("[7:700]"), "{backend}: {after}");
        }
    });
}

/// A 64 MiB restore on standard input under `max_ops = 8`: refused (status 5) after a few
/// lines, with the memory of a small run, in every install.
#[test]
fn a_64_mib_restore_is_refused_early_under_max_ops_with_bounded_memory() {
    let mut big = Vec::with_capacity(64 << 20);
    big.extend_from_slice(b"*nat\n");
    let mut i = 0u64;
    while big.len() < 64 << 20 {
        big.extend_from_slice(
            format!("-A vcld-1 -p tcp --dport {} -j RETURN\n", 1 + i % 60000).as_bytes(),
        );
        i += 1;
    }
    big.extend_from_slice(b"COMMIT\n");
    let big = std::sync::Arc::new(big);
    for how in ALL {
        let big = big.clone();
        in_netns(move || {
            let jail = Jail::new(how, POLICY);
            run_ok("iptables-nft", &["-t", "nat", "-N", "vcld-1"]);
            let before = nft_ruleset();
            // /usr/bin/time reports the peak resident set of the program it runs (xtnl,
            // which it execs as the caller).
            let args = [
                "-f",
                "maxrss_kib=%M",
                "/run/bin/xtnl",
                "restore",
                "--noflush",
            ];
            let mut c = jail.caller("/usr/bin/time", &args, &[]);
            c.stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = c.spawn().unwrap();
            let mut input = child.stdin.take().unwrap();
            let feeder = std::thread::spawn(move || {
                let _ = input.write_all(&big);
            });
            let out = child.wait_with_output().unwrap();
            let _ = feeder.join();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("allows at most 8 operations per transaction"),
                "{how:?}: {err}"
            );
            assert!(
                err.contains("refused at line 10 of standard input"),
                "{how:?}: {err}"
            );
            let kib: u64 = err
                .lines()
                .find_map(|l| l.strip_prefix("maxrss_kib="))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no maxrss: {err}"));
            eprintln!("{how:?}: 64 MiB restore refused under max_ops with a peak of {kib} KiB");
            assert!(kib < 16 * 1024, "{how:?}: peak {kib} KiB");
            assert_eq!(nft_ruleset(), before);
            assert!(
                jail.records().iter().any(|r| r.contains("result=denied")),
                "{how:?}: the early refusal is audited"
            );
        });
    }
}

#[test]
fn pkexec_and_doas_runs_are_delegated_like_sudo() {
    for how in [How::Pkexec, How::Doas] {
        in_netns(move || {
            let jail = Jail::new(how, POLICY);
            base_state();
            let r = jail.xtnl(&["bench", "--quick"], b"");
            assert_eq!(r.code, 2, "{how:?}: {}", r.all());
            assert!(
                r.stderr.contains("not allowed in a privileged run"),
                "{}",
                r.stderr
            );
            let r = jail.xtnl(&["-t", "nat", "-N", "other9"], b"");
            assert_eq!(r.code, 5, "{how:?}: {}", r.all());
            let r = jail.xtnl(&["-t", "nat", "-N", "vcld-9"], b"");
            assert_eq!(r.code, 0, "{how:?}: {}", r.all());
            let via = if how == How::Pkexec {
                "via=pkexec"
            } else {
                "via=doas"
            };
            let records = jail.records();
            assert!(
                records.iter().any(|r| r.starts_with("result ")
                    && r.contains(via)
                    && r.contains("uid=65534 euid=0")
                    && r.contains("create chain ip nat vcld-9")),
                "{how:?}: {records:#?}"
            );
        });
    }
}

/// SIGSTOP from the caller at swept delays after the helper starts: in the recommended
/// installs (sudo, setuid) no stopped helper ever holds the lock (a stop that lands at all
/// lands before the helper has dropped the caller's uid, long before it takes the lock).
#[test]
fn sigstop_at_swept_delays_never_leaves_the_lock_held_in_the_recommended_installs() {
    for how in ALL {
        in_netns(move || {
            let jail = Jail::new(how, POLICY);
            let (mut stopped, mut held) = (0, 0);
            for i in 0..40u32 {
                let chain = format!("vcld-p{i}");
                let mut c = jail.caller("/run/bin/xtnl", &["-w", "-t", "nat", "-N", &chain], &[]);
                c.stdout(Stdio::null()).stderr(Stdio::null());
                let mut child = c.spawn().unwrap();
                let pid = child.id().to_string();
                std::thread::sleep(Duration::from_micros(u64::from(i) * 100));
                let landed = Command::new("setpriv")
                    .args([
                        "--reuid=65534",
                        "--regid=65534",
                        "--clear-groups",
                        "kill",
                        "-STOP",
                        &pid,
                    ])
                    .stderr(Stdio::null())
                    .status()
                    .unwrap()
                    .success();
                if landed {
                    // Delivery is asynchronous: wait until the helper shows as stopped.
                    let stat =
                        || std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                    let mut is_stopped = false;
                    for _ in 0..100 {
                        if stat().split(' ').nth(2) == Some("T") {
                            is_stopped = true;
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    if is_stopped {
                        stopped += 1;
                        if jail.root("flock -n /run/xtables.lock true").code != 0 {
                            held += 1;
                        }
                    }
                    let _ = Command::new("kill").args(["-CONT", &pid]).status();
                }
                assert!(child.wait().unwrap().success(), "{how:?} {chain}");
                jail.drain();
            }
            eprintln!(
                "{how:?}: 40 caller SIGSTOPs swept 0-4 ms: {stopped} stopped a helper, {held} while it held the lock"
            );
            if how != How::Capability {
                assert_eq!(held, 0, "{how:?}");
            }
        });
    }
}

/// A delegated caller's `xtnl apply` keeps the document bounds (8 MiB, 10,000 operations in
/// a transaction) in every install; root's own apply has no fixed cap
/// (tests/apply_linear.rs).
#[test]
fn delegated_apply_keeps_the_document_bounds() {
    let mut huge =
        br#"{"transactions": [{"operations": [{"op": "create_chain", "chain": ""#.to_vec();
    huge.extend(std::iter::repeat_n(b'x', 9 << 20));
    huge.extend_from_slice(br#""}]}]}"#);
    let ops = vec![r#"{"op": "create_chain", "table": "nat", "chain": "vcld-1"}"#; 10_001];
    let many = format!(
        r#"{{"transactions": [{{"operations": [{}]}}]}}"#,
        ops.join(", ")
    )
    .into_bytes();
    let (huge, many) = (std::sync::Arc::new(huge), std::sync::Arc::new(many));
    for how in ALL {
        let (huge, many) = (huge.clone(), many.clone());
        in_netns(move || {
            let jail = Jail::new(how, POLICY);
            let before = nft_ruleset();
            let r = jail.xtnl(&["apply"], &huge);
            assert_eq!(r.code, 2, "{how:?}: {}", r.all());
            assert!(
                r.all().contains("larger than the limit of 8388608 bytes"),
                "{how:?}: {}",
                r.all()
            );
            let r = jail.xtnl(&["apply"], &many);
            assert_eq!(r.code, 2, "{how:?}: {}", r.all());
            assert!(
                r.all()
                    .contains("10001 operations in one transaction; the limit is 10000"),
                "{how:?}: {}",
                r.all()
            );
            assert_eq!(nft_ruleset(), before, "{how:?}");
        });
    }
}
