//! `-m set` rev 4: `struct xt_set_info_match_v4` (include/uapi/linux/netfilter/xt_set.h):
//! the set's index (`ip_set_id_t`, from the ipset subsystem), its dimension and direction
//! flags, two counter matches (`struct ip_set_counter_match`: an aligned u64 and an op),
//! and the command flags.

use super::layout::xt_struct;

/// `match_set.flags`: the match is inverted (`! --match-set`).
pub const INV_MATCH: u8 = 0x01;
/// `flags` (`enum ipset_cmd_flags`).
pub const SKIP_COUNTER_UPDATE: u32 = 1 << 3;
/// `IPSET_FLAG_SKIP_SUBCOUNTER_UPDATE`: `! --update-subcounters`.
pub const SKIP_SUBCOUNTER_UPDATE: u32 = 1 << 4;
/// `IPSET_FLAG_RETURN_NOMATCH`: `--return-nomatch`.
pub const RETURN_NOMATCH: u32 = 1 << 7;
/// Counter ops (`enum ip_set_counter_op`).
pub const COUNTER_NONE: u8 = 0;
/// `IPSET_COUNTER_EQ`: `--packets-eq`/`--bytes-eq`.
pub const COUNTER_EQ: u8 = 1;
/// `IPSET_COUNTER_NE`: `! --packets-eq`/`! --bytes-eq`.
pub const COUNTER_NE: u8 = 2;
/// `IPSET_COUNTER_LT`: `--packets-lt`/`--bytes-lt`.
pub const COUNTER_LT: u8 = 3;
/// `IPSET_COUNTER_GT`: `--packets-gt`/`--bytes-gt`.
pub const COUNTER_GT: u8 = 4;
/// `IPSET_DIM_MAX`.
pub const DIM_MAX: u8 = 6;

xt_struct!(
    /// Direction `i` (1-based, up to `dim`) is the source when bit `i` of `set_flags` is set.
    SetMatchV4, "xt_set_info_match_v4", 48, {
    index: u16 = 0,
    dim: u8 = 2,
    set_flags: u8 = 3,
    packets_value: u64 = 8,
    packets_op: u8 = 16,
    bytes_value: u64 = 24,
    bytes_op: u8 = 32,
    flags: u32 = 40,
});

/// `IPSET_INVALID_ID`: no set in that slot of the target.
pub const INVALID_ID: u16 = 0xffff;
/// The target's `flags`.
pub const FLAG_EXIST: u32 = 1 << 0;
/// `IPSET_FLAG_MAP_SKBMARK`: `--map-mark`.
pub const MAP_SKBMARK: u32 = 1 << 8;
/// `IPSET_FLAG_MAP_SKBPRIO`: `--map-prio`.
pub const MAP_SKBPRIO: u32 = 1 << 9;
/// `IPSET_FLAG_MAP_SKBQUEUE`: `--map-queue`.
pub const MAP_SKBQUEUE: u32 = 1 << 10;

xt_struct!(
    /// `-j SET` rev 3 (`struct xt_set_info_target_v3`): three `struct xt_set_info` (index,
    /// dimension, direction flags) for add, del and map, then the flags and the timeout.
    SetTargetV3, "xt_set_info_target_v3", 20, {
    add_index: u16 = 0,
    add_dim: u8 = 2,
    add_flags: u8 = 3,
    del_index: u16 = 4,
    del_dim: u8 = 6,
    del_flags: u8 = 7,
    map_index: u16 = 8,
    map_dim: u8 = 10,
    map_flags: u8 = 11,
    flags: u32 = 12,
    timeout: u32 = 16,
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let m = SetMatchV4 {
            index: 3,
            dim: 2,
            set_flags: 0b10 | INV_MATCH,
            packets_value: 0,
            packets_op: COUNTER_NONE,
            bytes_value: 9,
            bytes_op: COUNTER_GT,
            flags: RETURN_NOMATCH,
        };
        let b = m.encode();
        assert_eq!(b.len(), 48);
        assert_eq!(&b[..4], &[3, 0, 2, 3]);
        assert_eq!(b[32], COUNTER_GT);
        assert_eq!(SetMatchV4::decode(&b).unwrap(), m);
    }
}
