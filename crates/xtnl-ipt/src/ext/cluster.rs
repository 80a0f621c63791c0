//! `-m cluster --cluster-total-nodes N [!] --cluster-local-node K | [!]
//! --cluster-local-nodemask M --cluster-hash-seed S` (revision 0, IPv4 and IPv6): the
//! payload of [`crate::xt::cluster`], through nft_compat in iptables-nft. `-S` prints the
//! node as its mask (`--cluster-local-node 2` is `--cluster-local-nodemask 0x00000002`), in
//! iptables' order and words.
//!
//! iptables' option table limits `--cluster-local-nodemask` to 1-32, so that it refuses
//! the mask it prints itself for a local node from 7 up (`0x00000040`); xtnl takes any mask
//! below `1 << total nodes` (the kernel's own bound), so that what `-S` prints reads back.

use super::*;
use crate::xt::cluster::{Cluster as Info, XT_CLUSTER_F_INV, XT_CLUSTER_NODES_MAX};

pub(crate) struct Cluster;

fn nodes(s: &str, opt: &str) -> Result<u32> {
    let n = num(s, u64::from(u32::MAX), &format!("cluster --{opt}"))?;
    if !(1..=u64::from(XT_CLUSTER_NODES_MAX)).contains(&n) {
        return Err(bad(format!(
            "cluster: value {n} for option \"--{opt}\" is out of range (1 to {XT_CLUSTER_NODES_MAX})"
        )));
    }
    Ok(n as u32)
}

impl Ext for Cluster {
    fn name(&self) -> &'static str {
        "cluster"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("cluster-total-nodes", Arg::One, false),
            opt("cluster-local-node", Arg::One, true),
            opt("cluster-local-nodemask", Arg::One, true),
            opt("cluster-hash-seed", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "cluster")?;
        let mut c = Info::default();
        let mut local = None;
        for g in given {
            match g.opt {
                "cluster-total-nodes" => c.total_nodes = nodes(g.arg(), g.opt)?,
                "cluster-hash-seed" => {
                    c.hash_seed =
                        num(g.arg(), u64::from(u32::MAX), "cluster --cluster-hash-seed")? as u32
                }
                _ => {
                    local = Some(g.opt);
                    c.node_mask = if g.opt == "cluster-local-node" {
                        1 << (nodes(g.arg(), g.opt)? - 1)
                    } else {
                        let m = num(
                            g.arg(),
                            u64::from(u32::MAX),
                            "cluster --cluster-local-nodemask",
                        )?;
                        if m == 0 {
                            return Err(bad("cluster: --cluster-local-nodemask 0 names no node"));
                        }
                        m as u32
                    };
                    if g.neg {
                        c.flags |= XT_CLUSTER_F_INV;
                    }
                }
            }
        }
        exclusive(
            "cluster",
            given,
            &["cluster-local-node", "cluster-local-nodemask"],
        )?;
        for must in ["cluster-total-nodes", "cluster-hash-seed"] {
            if get(given, must).is_none() {
                return Err(bad(format!(
                    "cluster: option \"--{must}\" must be specified"
                )));
            }
        }
        let Some(local) = local else {
            return Err(bad(
                "cluster match: `--cluster-local-node' or `--cluster-local-nodemask' is missing",
            ));
        };
        if u64::from(c.node_mask) >= 1u64 << c.total_nodes {
            return Err(bad(if local == "cluster-local-node" {
                "cluster match: `--cluster-local-node' must be <= `--cluster-total-nodes'"
            } else {
                "cluster match: `--cluster-local-nodemask' too big for `--cluster-total-nodes'"
            }));
        }
        Ok(c.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let c = Info::decode(info).ok()?;
        let ok = c.flags & !XT_CLUSTER_F_INV == 0
            && (1..=XT_CLUSTER_NODES_MAX).contains(&c.total_nodes)
            && c.node_mask != 0
            && u64::from(c.node_mask) < 1u64 << c.total_nodes;
        if !ok {
            return None;
        }
        bang(out, c.flags != 0);
        let _ = write!(
            out,
            " --cluster-local-nodemask 0x{:08x} --cluster-total-nodes {} --cluster-hash-seed 0x{:08x}",
            c.node_mask, c.total_nodes, c.hash_seed
        );
        Some(())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        self.save(info, family, &mut String::new())?;
        let c = Info::decode(info).ok()?;
        let inv = if c.flags != 0 { "!" } else { "" };
        let _ = write!(
            out,
            " cluster {inv}node_mask=0x{:08x} total_nodes={} hash_seed=0x{:08x}",
            c.node_mask, c.total_nodes, c.hash_seed
        );
        Some(())
    }
    canonical_via!(Info);
}
