//! `-m ipcomp` rev 0 (`struct xt_ipcomp`, include/uapi/linux/netfilter/xt_ipcomp.h): the
//! compression parameter index range, the inversion flag and the reserved-field test.

use super::layout::xt_struct;

xt_struct!(
    /// iptables sets no defaults: without `--ipcompspi` both ends are 0.
    Ipcomp, "xt_ipcomp", 12, {
    spi_min: u32 = 0,
    spi_max: u32 = 4,
    invflags: u8 = 8,
    hdrres: u8 = 9,
});

/// `XT_IPCOMP_INV_SPI`: `! --ipcompspi`.
pub const XT_IPCOMP_INV_SPI: u8 = 1;
