//! The map layout of the NAT-host commands: `--layout chains|map` on each of them,
//! `forward list --layout map` and `migrate --to map|chains`.

use std::io::Write;

use super::io_error;
use xtnl::error::{Error, Result};
use xtnl::lock::{LockMode, WaitPolicy};
use xtnl::model::Family;
use xtnl::nathost::map::migrate::{ChainLayout, chains_to_map, map_to_chains};
use xtnl::nathost::map::{Layout, MapOp, list_forwards, run_one};
use xtnl::nathost::{ForwardKey, Operation, Report};
use xtnl::nft::Session;

pub const USAGE: &str =
    "  --layout chains|map           (on each NAT-host command) chains: a chain per reservation in
                                iptables' nat table (default); map: one element per forward
                                of a DNAT map in table xtnl_nat (cost flat in the host's size)
  teardown CHAIN --layout map [--forward [IFACE:]PROTO/PORT]...
                                with the reservation's forwards given: O(them), not O(host)
  forward list --layout map     every forward of the map, with its reservation and counters
  migrate --to map|chains [--prefix vcld-] [--entry PREROUTING] [--comment-prefix TEXT]
                                move every reservation between the layouts, one transaction";

type Rest = Vec<(String, Option<String>)>;

/// Removes `--layout` from the options; chains unless given.
pub(super) fn take_layout(rest: &mut Rest) -> Result<Layout> {
    let mut layout = Layout::Chains;
    let mut err = None;
    rest.retain(|(o, v)| {
        if o == "--layout" {
            match Layout::parse(v.as_deref().unwrap_or_default()) {
                Ok(l) => layout = l,
                Err(e) => err = Some(e),
            }
            false
        } else {
            true
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(layout),
    }
}

/// `teardown CHAIN --layout map --forward KEY...`: takes the keys out of the options.
pub(super) fn teardown_keys(
    layout: Layout,
    cmd: &str,
    rest: &mut Rest,
) -> Result<Option<Vec<ForwardKey>>> {
    if layout != Layout::Map || cmd != "teardown" {
        return Ok(None);
    }
    let mut keys = Vec::new();
    let mut err = None;
    rest.retain(|(o, v)| {
        if o == "--forward" {
            let spec = v.as_deref().unwrap_or_default();
            let key = spec.split_once('=').map_or(spec, |(k, _)| k);
            match ForwardKey::parse_spec(key) {
                Ok(k) => keys.push(k),
                Err(e) => err = Some(e),
            }
            false
        } else {
            true
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    Ok((!keys.is_empty()).then_some(keys))
}

fn open(wait: WaitPolicy, ctx: &super::context::Ctx) -> Result<Session> {
    ctx.session()
        .lock(ctx.lock(wait))
        .lock_mode(LockMode::Always)
        .open()
}

/// Runs a NAT-host operation in the map layout (whatever the iptables backend: the map
/// lives in nf_tables).
pub(super) fn run(
    op: &Operation,
    family: Family,
    wait: WaitPolicy,
    teardown_keys: Option<Vec<ForwardKey>>,
    ctx: &super::context::Ctx,
) -> Result<Report> {
    let mut m = MapOp::from_operation(op)?;
    if let (MapOp::Teardown { forwards, .. }, Some(k)) = (&mut m, teardown_keys) {
        *forwards = Some(k);
    }
    m.validate(family)?;
    let mut s = open(wait, ctx)?;
    let report = run_one(&mut s, family, m)?;
    s.close_detached()?;
    Ok(report)
}

fn value<'a>(rest: &'a Rest, name: &str) -> Option<&'a str> {
    rest.iter()
        .rev()
        .find(|(o, _)| o == name)
        .and_then(|(_, v)| v.as_deref())
}

/// `forward list --layout map` and `migrate`.
pub(super) fn run_other(
    out: &mut impl Write,
    cmd: &str,
    family: &Family,
    wait: WaitPolicy,
    json: bool,
    rest: &Rest,
    ctx: &super::context::Ctx,
) -> Result<()> {
    let family = *family;
    let allowed: &[&str] = if cmd == "migrate" {
        &[
            "--to",
            "--prefix",
            "--entry",
            "--comment-prefix",
            "--no-comments",
        ]
    } else {
        &[]
    };
    if let Some((o, v)) = rest.iter().find(|(o, _)| !allowed.contains(&o.as_str())) {
        let what = if o.is_empty() {
            v.as_deref().unwrap_or_default()
        } else {
            o
        };
        return Err(Error::InvalidInput(format!(
            "{what} does not apply to {cmd}"
        )));
    }
    let mut s = open(wait, ctx)?;
    if cmd != "migrate" {
        let forwards = list_forwards(&mut s, family)?;
        if json {
            let v: Vec<serde_json::Value> = forwards
                .iter()
                .map(|f| {
                    serde_json::json!({
                        "reservation": f.reservation,
                        "forward": f.forward.key().to_string(),
                        "to": f.forward.to.to_string(),
                        "comment": f.forward.comment,
                        "packets": f.packets,
                        "bytes": f.bytes,
                    })
                })
                .collect();
            writeln!(out, "{}", serde_json::json!({ "forwards": v })).map_err(io_error)?;
        } else {
            for f in &forwards {
                writeln!(
                    out,
                    "{} {}={} packets {} bytes {}",
                    f.reservation,
                    f.forward.key(),
                    f.forward.to,
                    f.packets,
                    f.bytes
                )
                .map_err(io_error)?;
            }
        }
        return Ok(());
    }
    let mut layout = ChainLayout::agent(family);
    if let Some(p) = value(rest, "--prefix") {
        layout.prefix = p.into();
    }
    if let Some(e) = value(rest, "--entry") {
        layout.entry = e.into();
    }
    if let Some(p) = value(rest, "--comment-prefix") {
        layout.comment_prefix = Some(p.into());
    }
    if rest.iter().any(|(o, _)| o == "--no-comments") {
        layout.comment_prefix = None;
    }
    let to = value(rest, "--to")
        .ok_or_else(|| Error::InvalidInput("migrate needs --to map or --to chains".into()))?;
    let m = match Layout::parse(to)? {
        Layout::Map => chains_to_map(&mut s, &layout)?,
        Layout::Chains => map_to_chains(&mut s, &layout)?,
    };
    s.close_detached()?;
    if json {
        writeln!(
            out,
            "{}",
            serde_json::json!({
                "to": to, "reservations": m.reservations, "forwards": m.forwards,
                "operations": m.ops, "attempts": m.attempts,
            })
        )
        .map_err(io_error)
    } else {
        writeln!(
            out,
            "{} reservations, {} forwards moved to the {to} layout",
            m.reservations, m.forwards
        )
        .map_err(io_error)
    }
}
