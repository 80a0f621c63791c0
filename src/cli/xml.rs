//! `iptables-xml`: iptables-save text to iptables' XML, byte for byte as iptables 1.8.9's
//! `iptables-xml` writes it (issue 24). A text filter: no kernel access, no privilege.
//!
//! Options as iptables' getopt takes them: `-c`/`--combine` merges the actions of
//! consecutive rules with the same conditions, `-v`/`--verbose` echoes each line as a
//! comment, `-h`/`--help` prints the usage (status 1). One file operand, else stdin.

use std::io::{Read, Write};

/// What a run writes and returns: stdout, stderr, exit status.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Output {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub status: i32,
}

const USAGE: &str = "Usage: iptables-xml [-c] [-v] [-h]\n          [--combine ]\n\t   [ --verbose ]\n\t   [ --help ]\n";

/// Runs `iptables-xml ARGS` on the process's stdin/stdout/stderr; returns the exit status.
///
/// In a delegated run (setuid, file capabilities, sudo for another user...) it refuses to
/// run: it needs no privilege, and a file operand would be read with root's rights (a link
/// named `iptables-xml` to a setuid xtnl would print any file).
pub fn main(program: &str, args: &[String]) -> i32 {
    if xtnl::privilege::delegated() {
        eprintln!(
            "{program}: not run in a privileged run (setuid, file capabilities, sudo, run0, \
             doas or pkexec): it needs no privilege; run it as yourself"
        );
        return 1;
    }
    let mut stdin = Vec::new();
    let reads_stdin = operands(args).is_empty();
    if reads_stdin && std::io::stdin().read_to_end(&mut stdin).is_err() {
        stdin.clear();
    }
    // fopen and fgets: a file that opens but cannot be read (a directory) reads as empty.
    let out = run(program, args, &stdin, |p| {
        let mut text = Vec::new();
        let _ = std::fs::File::open(p)?.read_to_end(&mut text);
        Ok(text)
    });
    let _ = std::io::stdout().write_all(&out.stdout);
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().write_all(&out.stderr);
    out.status
}

fn operands(args: &[String]) -> Vec<&String> {
    let mut ops = Vec::new();
    let mut rest = false;
    for a in args {
        if rest || a == "-" || !a.starts_with('-') {
            ops.push(a);
        } else if a == "--" {
            rest = true;
        }
    }
    ops
}

/// Converts as `iptables-xml ARGS` would, with `stdin` as standard input and `open` to read
/// a file operand.
pub fn run(
    program: &str,
    args: &[String],
    stdin: &[u8],
    open: impl Fn(&str) -> std::io::Result<Vec<u8>>,
) -> Output {
    let mut out = Output::default();
    let (mut combine, mut verbose) = (false, false);
    let mut rest = false;
    for a in args {
        if rest || a == "-" || !a.starts_with('-') {
            continue;
        }
        if a == "--" {
            rest = true;
            continue;
        }
        let opts: Vec<char> = if let Some(long) = a.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or("");
            let hits: Vec<&str> = ["verbose", "combine", "help"]
                .into_iter()
                .filter(|o| o.starts_with(name))
                .collect();
            match hits.as_slice() {
                [o] if long.contains('=') => {
                    let _ = writeln!(
                        out.stderr,
                        "{program}: option '--{o}' doesn't allow an argument"
                    );
                    continue;
                }
                [o] => vec![o.chars().next().unwrap_or('?')],
                _ => {
                    let _ = writeln!(out.stderr, "{program}: unrecognized option '{a}'");
                    continue;
                }
            }
        } else {
            a.chars().skip(1).collect()
        };
        for c in opts {
            match c {
                'c' => combine = true,
                'v' => {
                    out.stdout.extend_from_slice(b"xptables-xml\n");
                    verbose = true;
                }
                'h' => {
                    out.stderr.extend_from_slice(USAGE.as_bytes());
                    out.status = 1;
                    return out;
                }
                c => {
                    let _ = writeln!(out.stderr, "{program}: invalid option -- '{c}'");
                }
            }
        }
    }
    let ops = operands(args);
    let input = match ops.as_slice() {
        [] => stdin.to_vec(),
        [file] => match open(file) {
            Ok(text) => text,
            Err(e) => {
                let msg = e.to_string();
                let msg = msg.split(" (os error").next().unwrap_or(&msg);
                let _ = write!(out.stderr, "Can't open {file}: {msg}");
                out.status = 1;
                return out;
            }
        },
        _ => {
            out.stderr
                .extend_from_slice(b"Unknown arguments found on commandline");
            out.status = 1;
            return out;
        }
    };
    let mut conv = super::xml_convert::Converter::new(combine, verbose);
    out.stdout
        .extend_from_slice(b"<iptables-rules version=\"1.0\">\n");
    match conv.convert(&input, &mut out.stdout) {
        Ok(()) => out.stdout.extend_from_slice(b"</iptables-rules>\n"),
        Err(e) => {
            out.stderr.extend_from_slice(&e.message);
            out.status = e.status;
        }
    }
    out
}
