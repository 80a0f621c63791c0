//! The port words shared by the `-L` printers of tcp, sctp and dccp.

use std::fmt::Write;

/// iptables' `print_ports` (tcp, sctp, dccp) in `-L`: ` spt:N` or ` spts:A:B` with `!`
/// after the colon, each port by its service name for `proto` unless `numeric`; nothing
/// for the whole range uninverted.
pub(crate) fn list_ports(
    out: &mut String,
    label: &str,
    [lo, hi]: [u16; 2],
    invert: bool,
    numeric: bool,
    proto: &str,
) {
    if (lo, hi) == (0, u16::MAX) && !invert {
        return;
    }
    let port = |p: u16| {
        Some(p)
            .filter(|_| !numeric)
            .and_then(|p| crate::ipt::protocols::service_of(p, proto))
            .unwrap_or_else(|| p.to_string())
    };
    let inv = if invert { "!" } else { "" };
    if lo == hi {
        let _ = write!(out, " {label}:{inv}{}", port(lo));
    } else {
        let _ = write!(out, " {label}s:{inv}{}:{}", port(lo), port(hi));
    }
}
