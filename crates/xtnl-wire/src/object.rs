//! Named stateful objects (`NFT_MSG_NEWOBJ`/`GETOBJ`/`DELOBJ`): counters, quotas, limits and
//! ct helpers, typed; any other object type kept with its raw data.
//!
//! Attribute numbers are `enum nft_object_attributes`, `nft_counter_attributes`,
//! `nft_quota_attributes`, `nft_limit_attributes` and `nft_ct_helper_attributes` of
//! `linux/netfilter/nf_tables.h`.

use super::WireError;
use super::attr::{AttrWriter, Attrs};
use super::error::ResultExt;

/// `NFT_MSG_NEWOBJ`.
pub const NEWOBJ: u8 = 18;
/// `NFT_MSG_GETOBJ`.
pub const GETOBJ: u8 = 19;
/// `NFT_MSG_DELOBJ`.
pub const DELOBJ: u8 = 20;
/// `NFT_MSG_DESTROYOBJ` (kernel 6.3+).
pub const DESTROYOBJ: u8 = 31;

/// `NFTA_OBJ_*`.
pub mod attr {
    /// `NFTA_OBJ_TABLE`.
    pub const TABLE: u16 = 1;
    /// `NFTA_OBJ_NAME`.
    pub const NAME: u16 = 2;
    /// `NFTA_OBJ_TYPE`.
    pub const TYPE: u16 = 3;
    /// `NFTA_OBJ_DATA`.
    pub const DATA: u16 = 4;
    /// `NFTA_OBJ_USE`.
    pub const USE: u16 = 5;
    /// `NFTA_OBJ_HANDLE`.
    pub const HANDLE: u16 = 6;
    /// `NFTA_OBJ_USERDATA`.
    pub const USERDATA: u16 = 8;
}

/// `NFT_OBJECT_*`.
pub mod kind {
    /// `NFT_OBJECT_COUNTER`.
    pub const COUNTER: u32 = 1;
    /// `NFT_OBJECT_QUOTA`.
    pub const QUOTA: u32 = 2;
    /// `NFT_OBJECT_CT_HELPER`.
    pub const CT_HELPER: u32 = 3;
    /// `NFT_OBJECT_LIMIT`.
    pub const LIMIT: u32 = 4;
}

/// What a named object holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjData {
    /// A counter: packets and bytes.
    Counter {
        /// `NFTA_COUNTER_PACKETS`.
        packets: u64,
        /// `NFTA_COUNTER_BYTES`.
        bytes: u64,
    },
    /// A quota.
    Quota {
        /// `NFTA_QUOTA_BYTES`: the quota.
        bytes: u64,
        /// `NFTA_QUOTA_CONSUMED`: bytes used so far.
        consumed: u64,
        /// `NFTA_QUOTA_FLAGS` (`NFT_QUOTA_F_INV` = 1: match over the quota).
        flags: u32,
    },
    /// A limit.
    Limit {
        /// `NFTA_LIMIT_RATE`.
        rate: u64,
        /// `NFTA_LIMIT_UNIT`: the period in seconds.
        unit: u64,
        /// `NFTA_LIMIT_BURST`.
        burst: u32,
        /// `NFTA_LIMIT_TYPE`: packets (0) or bytes (1).
        kind: u32,
        /// `NFTA_LIMIT_FLAGS` (`NFT_LIMIT_F_INV` = 1).
        flags: u32,
    },
    /// A ct helper.
    CtHelper {
        /// `NFTA_CT_HELPER_NAME`: the kernel helper (`ftp`).
        name: String,
        /// `NFTA_CT_HELPER_L3PROTO` (an `NFPROTO_*`, host order u16).
        l3proto: u16,
        /// `NFTA_CT_HELPER_L4PROTO`.
        l4proto: u8,
    },
    /// Another type, with its raw `NFTA_OBJ_DATA`.
    Other {
        /// `NFTA_OBJ_TYPE`.
        kind: u32,
        /// `NFTA_OBJ_DATA`'s payload.
        data: Vec<u8>,
    },
}

impl ObjData {
    /// `NFTA_OBJ_TYPE` of this data.
    pub fn kind(&self) -> u32 {
        match self {
            ObjData::Counter { .. } => kind::COUNTER,
            ObjData::Quota { .. } => kind::QUOTA,
            ObjData::Limit { .. } => kind::LIMIT,
            ObjData::CtHelper { .. } => kind::CT_HELPER,
            ObjData::Other { kind, .. } => *kind,
        }
    }
}

/// A named object as the kernel reports it, or as a request describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjRepr {
    /// The `nfgenmsg` family.
    pub family: u8,
    /// `NFTA_OBJ_TABLE`.
    pub table: String,
    /// `NFTA_OBJ_NAME`.
    pub name: String,
    /// `NFTA_OBJ_HANDLE` (reported).
    pub handle: Option<u64>,
    /// `NFTA_OBJ_DATA`: `None` in a delete (only the type is sent).
    pub data: Option<ObjData>,
    /// `NFTA_OBJ_TYPE` (the data's, or the type of the object a delete names).
    pub kind: u32,
    /// `NFTA_OBJ_USERDATA` (libnftnl's TLVs: the comment).
    pub userdata: Option<Vec<u8>>,
}

fn u16_of(payload: &[u8], name: &'static str) -> Result<u16, WireError> {
    match payload {
        [a, b, ..] => Ok(u16::from_be_bytes([*a, *b])),
        _ => Err(WireError::missing(name)),
    }
}

impl ObjRepr {
    /// Decodes an object message's attributes.
    pub fn parse(family: u8, attrs: &[u8]) -> Result<Self, WireError> {
        let (mut table, mut name, mut kind, mut data) = (None, None, None, None);
        let (mut handle, mut userdata) = (None, None);
        for a in Attrs::new(attrs) {
            let a = a.ctx("object")?;
            match a.ty {
                attr::TABLE => table = Some(a.string("NFTA_OBJ_TABLE")?),
                attr::NAME => name = Some(a.string("NFTA_OBJ_NAME")?),
                attr::TYPE => kind = Some(a.u32_be("NFTA_OBJ_TYPE")?),
                attr::HANDLE => handle = Some(a.u64_be("NFTA_OBJ_HANDLE")?),
                attr::USERDATA => userdata = Some(a.payload.to_vec()),
                attr::DATA => data = Some(a.payload),
                _ => {}
            }
        }
        let kind = kind.ok_or_else(|| WireError::missing("NFTA_OBJ_TYPE").within("object"))?;
        let data = match data {
            None => None,
            Some(d) => Some(parse_data(kind, d).ctx("object").ctx("NFTA_OBJ_DATA")?),
        };
        Ok(ObjRepr {
            family,
            table: table.ok_or_else(|| WireError::missing("NFTA_OBJ_TABLE").within("object"))?,
            name: name.ok_or_else(|| WireError::missing("NFTA_OBJ_NAME").within("object"))?,
            handle,
            data,
            kind,
            userdata,
        })
    }

    /// Encodes the object: table, name, type, then its data and userdata when set.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.strz(attr::TABLE, &self.table)
            .strz(attr::NAME, &self.name)
            .u32_be(attr::TYPE, self.kind);
        if let Some(d) = &self.data {
            w.nested(attr::DATA, |w| emit_data(d, w));
        }
        if let Some(u) = &self.userdata {
            w.bytes(attr::USERDATA, u);
        }
    }
}

fn parse_data(kind: u32, data: &[u8]) -> Result<ObjData, WireError> {
    let mut n = [0u64; 6];
    let mut s = String::new();
    for a in Attrs::new(data) {
        let a = a?;
        let i = usize::from(a.ty);
        match (kind, a.ty) {
            (kind::CT_HELPER, 1) => s = a.string("NFTA_CT_HELPER_NAME")?,
            (kind::CT_HELPER, 2) => n[2] = u64::from(u16_of(a.payload, "NFTA_CT_HELPER_L3PROTO")?),
            (kind::CT_HELPER, 3) => n[3] = u64::from(a.u8("NFTA_CT_HELPER_L4PROTO")?),
            (kind::COUNTER | kind::QUOTA, 1 | 2 | 4) if i < n.len() => {
                n[i] = if kind == kind::QUOTA && a.ty == 2 {
                    u64::from(a.u32_be("NFTA_QUOTA_FLAGS")?)
                } else {
                    a.u64_be("NFTA_COUNTER/QUOTA value")?
                }
            }
            (kind::LIMIT, 1 | 2) => n[i] = a.u64_be("NFTA_LIMIT_RATE/UNIT")?,
            (kind::LIMIT, 3..=5) => n[i] = u64::from(a.u32_be("NFTA_LIMIT_BURST/TYPE/FLAGS")?),
            _ => {}
        }
    }
    let u32_of = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    Ok(match kind {
        kind::COUNTER => ObjData::Counter {
            bytes: n[1],
            packets: n[2],
        },
        kind::QUOTA => ObjData::Quota {
            bytes: n[1],
            flags: u32_of(n[2]),
            consumed: n[4],
        },
        kind::LIMIT => ObjData::Limit {
            rate: n[1],
            unit: n[2],
            burst: u32_of(n[3]),
            kind: u32_of(n[4]),
            flags: u32_of(n[5]),
        },
        kind::CT_HELPER => ObjData::CtHelper {
            name: s,
            l3proto: u16::try_from(n[2]).unwrap_or(0),
            l4proto: u8::try_from(n[3]).unwrap_or(0),
        },
        other => ObjData::Other {
            kind: other,
            data: data.to_vec(),
        },
    })
}

fn emit_data(d: &ObjData, w: &mut AttrWriter<'_>) {
    match d {
        ObjData::Counter { packets, bytes } => {
            w.u64_be(1, *bytes).u64_be(2, *packets);
        }
        ObjData::Quota {
            bytes,
            consumed,
            flags,
        } => {
            w.u64_be(1, *bytes).u32_be(2, *flags);
            if *consumed != 0 {
                w.u64_be(4, *consumed);
            }
        }
        ObjData::Limit {
            rate,
            unit,
            burst,
            kind,
            flags,
        } => {
            w.u64_be(1, *rate)
                .u64_be(2, *unit)
                .u32_be(3, *burst)
                .u32_be(4, *kind)
                .u32_be(5, *flags);
        }
        ObjData::CtHelper {
            name,
            l3proto,
            l4proto,
        } => {
            w.strz(1, name)
                .bytes(2, &l3proto.to_be_bytes())
                .u8(3, *l4proto);
        }
        // Written back attribute by attribute, as they were read.
        ObjData::Other { data, .. } => {
            for a in Attrs::new(data).flatten() {
                w.bytes(a.ty, a.payload);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_round_trip() {
        for data in [
            ObjData::Counter {
                packets: 3,
                bytes: 400,
            },
            ObjData::Quota {
                bytes: 100 << 20,
                consumed: 7,
                flags: 1,
            },
            ObjData::Limit {
                rate: 400,
                unit: 60,
                burst: 5,
                kind: 0,
                flags: 0,
            },
            ObjData::CtHelper {
                name: "ftp".into(),
                l3proto: 1,
                l4proto: 6,
            },
        ] {
            let o = ObjRepr {
                family: 1,
                table: "t".into(),
                name: "o".into(),
                handle: None,
                kind: data.kind(),
                data: Some(data),
                userdata: None,
            };
            let (mut bytes, mut overflow) = (Vec::new(), false);
            o.emit(&mut AttrWriter::new(&mut bytes, &mut overflow));
            assert!(!overflow);
            assert_eq!(ObjRepr::parse(1, &bytes).unwrap(), o);
        }
    }
}
