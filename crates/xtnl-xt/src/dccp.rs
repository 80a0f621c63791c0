//! `-m dccp` (`struct xt_dccp_info`, include/uapi/linux/netfilter/xt_dccp.h): port ranges,
//! a packet-type mask and one option number, each enabled by a bit of `flags`.

use super::layout::xt_struct;

xt_struct!(
    /// `struct xt_dccp_info`.
    Dccp, "xt_dccp_info", 15, {
    dpt_min: u16 = 0,
    dpt_max: u16 = 2,
    spt_min: u16 = 4,
    spt_max: u16 = 6,
    flags: u16 = 8,
    invflags: u16 = 10,
    typemask: u16 = 12,
    option: u8 = 14,
});

impl Dccp {
    /// `XT_DCCP_SRC_PORTS`: `--sport` is tested.
    pub const SRC_PORTS: u16 = 0x01;
    /// `XT_DCCP_DEST_PORTS`: `--dport` is tested.
    pub const DEST_PORTS: u16 = 0x02;
    /// `XT_DCCP_TYPE`: `--dccp-types` is tested.
    pub const TYPE: u16 = 0x04;
    /// `XT_DCCP_OPTION`: `--dccp-option` is tested.
    pub const OPTION: u16 = 0x08;
    /// `XT_DCCP_VALID_FLAGS`: every bit the kernel accepts.
    pub const VALID: u16 = 0x0f;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-p dccp -m dccp ! --sport 1 --dport 2:3 --dccp-types INVALID --dccp-option 255`.
    #[test]
    fn layout_and_round_trip() {
        let d = Dccp {
            spt_min: 1,
            spt_max: 1,
            dpt_min: 2,
            dpt_max: 3,
            flags: 0x0f,
            invflags: Dccp::SRC_PORTS,
            typemask: 0xfc00,
            option: 255,
        };
        let b = d.encode();
        let mut want = Vec::new();
        for v in [2u16, 3, 1, 1, 0x0f, 1, 0xfc00] {
            want.extend_from_slice(&v.to_ne_bytes());
        }
        want.extend_from_slice(&[255, 0]);
        assert_eq!(b, want);
        assert_eq!(Dccp::decode(&b).unwrap(), d);
        assert!(Dccp::decode(&b[..8]).is_err());
    }
}
