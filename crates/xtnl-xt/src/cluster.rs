//! `-m cluster` rev 0 (`struct xt_cluster_match_info`,
//! include/uapi/linux/netfilter/xt_cluster.h): the node count, the mask of the local nodes
//! (bit N-1 for node N), the hash seed and the inversion flag.

use super::layout::xt_struct;

xt_struct!(
    /// 16 bytes, no padding.
    Cluster, "xt_cluster_match_info", 16, {
    total_nodes: u32 = 0,
    node_mask: u32 = 4,
    hash_seed: u32 = 8,
    flags: u32 = 12,
});

/// `XT_CLUSTER_F_INV`: `! --cluster-local-node(mask)`.
pub const XT_CLUSTER_F_INV: u32 = 1;
/// `XT_CLUSTER_NODES_MAX`.
pub const XT_CLUSTER_NODES_MAX: u32 = 32;
