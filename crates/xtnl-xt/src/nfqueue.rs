//! `-j NFQUEUE` rev 3: `struct xt_NFQ_info_v3`.

use super::layout::xt_struct;

/// `NFQ_FLAG_BYPASS`: `--queue-bypass`, accept when no program listens.
pub const NFQ_FLAG_BYPASS: u16 = 0x01;
/// `NFQ_FLAG_CPU_FANOUT`: `--queue-cpu-fanout`, pick the queue by CPU.
pub const NFQ_FLAG_CPU_FANOUT: u16 = 0x02;

xt_struct!(
    /// Queue number, how many queues, flags.
    NfqueueV3, "xt_NFQ_info_v3", 6, {
    queuenum: u16 = 0,
    queues_total: u16 = 2,
    flags: u16 = 4,
});
