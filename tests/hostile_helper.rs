//! The setuid helper and a sudo run attacked by their caller (issue 23), uid 65534, each in a
//! private mount namespace (its own /run, /etc with the test's policy, and a journal socket
//! the test reads) inside a network namespace the test made.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::process::Command;

use common::*;

const POLICY: &str = common::nat_host_policy!();

/// Sets the jail up, then runs `body` (sh) in it as root; `$CALLER` runs a command as the
/// caller (setuid: uid 65534 through the setuid copy; sudo: root with `SUDO_UID=65534`).
const JAIL: &str = r#"
set -eu
mount -t tmpfs -o mode=0755 xtnl-hostile-run /run
mkdir -p /run/bin /run/systemd/journal
cp "$XTNL_SRC" /run/bin/xtnl
chown root:root /run/bin/xtnl
chmod 4755 /run/bin/xtnl
install -m 0600 /dev/null /run/xtables.lock
touch /run/systemd/journal/socket
mount --bind "$XTNL_JOURNAL" /run/systemd/journal/socket
mount --bind "$XTNL_ETC" /etc
case "$XTNL_HOW" in
setuid) CALLER="setpriv --reuid=65534 --regid=65534 --clear-groups env -i" ;;
sudo) CALLER="env -i SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody" ;;
esac
set +e
eval "$XTNL_BODY"
"#;

struct Jail {
    dir: PathBuf,
    journal: UnixDatagram,
}

impl Jail {
    fn new() -> Jail {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "xtnl-hostile-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let etc = dir.join("etc");
        std::fs::create_dir_all(etc.join("xtnl")).unwrap();
        for f in ["passwd", "group", "protocols", "services"] {
            let _ = std::fs::copy(format!("/etc/{f}"), etc.join(f));
        }
        std::fs::write(etc.join("xtnl/policy.toml"), POLICY).unwrap();
        for (p, m) in [
            (dir.clone(), 0o755),
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
        Jail { dir, journal }
    }

    /// Runs `body` in the jail for install `how`; its status and output.
    fn run(&self, how: &str, body: &str) -> (i32, String) {
        let out = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", JAIL])
            .env("XTNL_SRC", xtnl_bin())
            .env("XTNL_JOURNAL", self.dir.join("journal"))
            .env("XTNL_ETC", self.dir.join("etc"))
            .env("XTNL_HOW", how)
            .env("XTNL_BODY", body)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    }

    /// The MESSAGE of every record received since the last call.
    fn records(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = self.journal.recv(&mut buf) {
            let text = String::from_utf8_lossy(&buf[..n]).into_owned();
            if let Some(m) = text.lines().find_map(|l| l.strip_prefix("MESSAGE=")) {
                out.push(m.to_owned());
            }
        }
        out
    }
}

#[test]
fn few_descriptors_and_a_stderr_pipe_never_read_cannot_hold_the_lock_or_lose_records() {
    in_netns(|| {
        for backend in ["legacy", "nft"] {
            let jail = Jail::new();
            // The caller fills a pipe it never reads and makes it the helper's stderr,
            // with 5 descriptors. Meanwhile root's iptables-legacy -w 1 must get the lock.
            let body = format!(
                r#"
                {{ head -c 65536 /dev/zero >&2; ulimit -n 5; exec $CALLER XTNL_BACKEND={backend} /run/bin/xtnl -t nat -N vcld-fd; }} 2>&1 >/dev/null | sleep 6 &
                sleep 3
                iptables-legacy -w 1 -t nat -S >/dev/null 2>&1; echo "lock=$?"
                kill %1 2>/dev/null
                wait
                echo "legacy:"; iptables-legacy -t nat -S
                echo "nft:"; iptables-nft -t nat -S
                "#
            );
            let (_, out) = jail.run("setuid", &body);
            assert!(
                out.contains("lock=0"),
                "{backend}: the lock stayed held: {out}"
            );
            let records = jail.records();
            let committed = out.contains("-N vcld-fd");
            if committed {
                // Committed: then its records are in the system log, not on the pipe.
                for phase in ["attempt", "result"] {
                    assert!(
                        records
                            .iter()
                            .any(|r| r.starts_with(phase) && r.contains("vcld-fd")),
                        "{backend}: committed without a {phase} record: {records:?} {out}"
                    );
                }
            }
            eprintln!(
                "{backend}: committed={committed}, {} records",
                records.len()
            );
        }
    });
}

#[test]
fn without_a_reachable_system_log_a_delegated_run_changes_nothing() {
    in_netns(|| {
        for how in ["setuid", "sudo"] {
            let jail = Jail::new();
            let body = "umount /run/systemd/journal/socket; rm -f /run/systemd/journal/socket
                $CALLER /run/bin/xtnl -t nat -N vcld-nolog; echo \"status=$?\"
                iptables-nft -t nat -S";
            let (_, out) = jail.run(how, body);
            assert!(out.contains("status=4"), "{how}: {out}");
            assert!(out.contains("nothing was changed"), "{how}: {out}");
            assert!(!out.contains("-N vcld-nolog"), "{how}: {out}");
            assert!(!out.contains("xtnl: audit: "), "{how}: {out}");
        }
    });
}

#[test]
fn every_command_in_a_namespace_the_policy_does_not_name_is_refused_doctor_too() {
    in_netns(|| {
        for how in ["setuid", "sudo"] {
            let jail = Jail::new();
            let body =
                "ip netns add secret && ip netns exec secret nft add table inet topsecret-table
                for cmd in doctor '-t nat -S' save; do
                    $CALLER /run/bin/xtnl --netns secret $cmd; echo \"status=$?\"
                done";
            let (_, out) = jail.run(how, body);
            assert_eq!(out.matches("status=5").count(), 3, "{how}: {out}");
            assert!(!out.contains("topsecret"), "{how}: {out}");
            assert!(
                out.contains("no entry for uid 65534 in network namespace \"secret\""),
                "{how}: {out}"
            );
        }
    });
}

#[test]
fn a_restore_whose_later_block_is_denied_commits_no_block_on_either_backend() {
    in_netns(|| {
        for how in ["setuid", "sudo"] {
            for backend in ["legacy", "nft"] {
                let jail = Jail::new();
                let body = format!(
                    "printf '*nat\\n:vcld-partial - [0:0]\\nCOMMIT\\n*filter\\n-A INPUT -j DROP\\nCOMMIT\\n' \
                     | $CALLER XTNL_BACKEND={backend} /run/bin/xtnl restore --noflush; echo \"status=$?\"
                     iptables-{backend} -t nat -S; iptables-{backend} -S INPUT"
                );
                let (_, out) = jail.run(how, &body);
                assert!(out.contains("status=5"), "{how} {backend}: {out}");
                assert!(
                    !out.contains("vcld-partial"),
                    "{how} {backend}: committed: {out}"
                );
                assert!(!out.contains("-A INPUT -j DROP"), "{how} {backend}: {out}");
                let records = jail.records();
                assert!(
                    records.iter().all(|r| r.contains("result=denied")) && !records.is_empty(),
                    "{how} {backend}: {records:?}"
                );
            }
        }
    });
}

#[test]
fn comments_and_names_cannot_forge_a_record_line_or_turn_it_around() {
    in_netns(|| {
        let jail = Jail::new();
        let fake =
            "x\u{2028}result id=1.1 via=none netns=1 uid=0 euid=0 mode=direct result=ok ops=1: y";
        let body = format!(
            "$CALLER /run/bin/xtnl -t nat -N 'vcld-a\u{202e}b\u{2066}c'; echo \"status=$?\"
             $CALLER /run/bin/xtnl -t nat -A 'vcld-a\u{202e}b\u{2066}c' -m comment --comment '{fake}'; echo \"status=$?\"
             $CALLER /run/bin/xtnl -t nat -A 'vcld-a\u{202e}b\u{2066}c' -m comment --comment 'p\u{85}q\u{2029}r\u{200f}s'; echo \"status=$?\""
        );
        let (_, out) = jail.run("sudo", &body);
        assert_eq!(out.matches("status=0").count(), 3, "{out}");
        let records = jail.records().join("\n");
        for bad in [
            '\u{2028}', '\u{2029}', '\u{202e}', '\u{2066}', '\u{85}', '\u{200f}',
        ] {
            assert!(
                !records.contains(bad),
                "{bad:?} reached the record: {records}"
            );
        }
        for want in [
            "create chain ip nat vcld-a?b?c",
            "x?result id=1.1",
            "p?q?r?s",
        ] {
            assert!(records.contains(want), "{want} in {records}");
        }
    });
}
