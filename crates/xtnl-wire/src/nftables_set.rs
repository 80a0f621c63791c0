//! Anonymous sets and their elements as iptables-nft writes them (a `{ ... }` literal of nft):
//! `NFT_MSG_NEWSET` and `NFT_MSG_NEWSETELEM`, attributes of `enum nft_set_attributes`,
//! `nft_set_elem_list_attributes` and `nft_set_elem_attributes`. Named sets and maps are
//! [`crate::set`].

use super::NFTA_LIST_ELEM;
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};
use crate::error::ResultExt;

mod set_attr {
    pub const TABLE: u16 = 1;
    pub const NAME: u16 = 2;
    pub const FLAGS: u16 = 3;
    pub const KEY_TYPE: u16 = 4;
    pub const KEY_LEN: u16 = 5;
    pub const DESC: u16 = 9;
    pub const DESC_SIZE: u16 = 1;
    pub const ID: u16 = 10;
}

pub(super) mod elem_list_attr {
    pub const TABLE: u16 = 1;
    pub const SET: u16 = 2;
    pub const ELEMENTS: u16 = 3;
    pub const SET_ID: u16 = 4;
}

mod elem_attr {
    pub const KEY: u16 = 1;
    pub const FLAGS: u16 = 3;
}

/// A set to create (anonymous sets are what nft's `{ ... }` literals are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetRepr {
    /// `NFTA_SET_TABLE`.
    pub table: String,
    /// `__set%d` for an anonymous set: the kernel picks the number.
    pub name: String,
    /// `NFTA_SET_FLAGS`: [`SetRepr::F_ANONYMOUS`] and the others below.
    pub flags: u32,
    /// `NFTA_SET_KEY_TYPE`: nft's datatype number, for nft to print the set (the kernel ignores it).
    pub key_type: u32,
    /// `NFTA_SET_KEY_LEN`: the key length in bytes (2 for a port).
    pub key_len: u32,
    /// `NFTA_SET_ID`: the batch-local id by which later messages of the same batch name the set.
    pub id: u32,
    /// `NFTA_SET_DESC_SIZE`: the number of elements, a sizing hint for the kernel.
    pub size: u32,
}

impl SetRepr {
    /// `NFT_SET_ANONYMOUS`: bound to the rule that uses it, and freed with it.
    pub const F_ANONYMOUS: u32 = 1;
    /// `NFT_SET_CONSTANT`: elements cannot change after the batch.
    pub const F_CONSTANT: u32 = 2;
    /// `NFT_SET_INTERVAL`: elements are ranges (an interval set).
    pub const F_INTERVAL: u32 = 4;
    /// nft's datatype number for `inet_service` (ports), which nft needs to print the set.
    pub const KEY_INET_SERVICE: u32 = 13;

    /// Encodes the set's attributes.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.strz(set_attr::TABLE, &self.table)
            .strz(set_attr::NAME, &self.name)
            .u32_be(set_attr::FLAGS, self.flags)
            .u32_be(set_attr::KEY_TYPE, self.key_type)
            .u32_be(set_attr::KEY_LEN, self.key_len)
            .nested(set_attr::DESC, |w| {
                w.u32_be(set_attr::DESC_SIZE, self.size);
            })
            .u32_be(set_attr::ID, self.id);
    }
}

/// One element: its key and `NFT_SET_ELEM_*` flags (1: the end of an interval).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetElem {
    /// The key bytes (`NFTA_DATA_VALUE` in `NFTA_SET_ELEM_KEY`), in network order for ports and addresses.
    pub key: Vec<u8>,
    /// `NFTA_SET_ELEM_FLAGS`.
    pub flags: u32,
}

impl SetElem {
    /// `NFT_SET_ELEM_INTERVAL_END`: this element closes the interval the previous one opened.
    pub const F_INTERVAL_END: u32 = 1;
}

/// Elements of a set: to add (naming a set of this batch by id), or as a dump lists them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SetElemsRepr {
    /// `NFTA_SET_ELEM_LIST_TABLE`.
    pub table: String,
    /// `NFTA_SET_ELEM_LIST_SET`: the set's name.
    pub set: String,
    /// `NFTA_SET_ELEM_LIST_SET_ID`: the batch-local id of a set created in the same batch.
    pub set_id: Option<u32>,
    /// `NFTA_SET_ELEM_LIST_ELEMENTS`.
    pub elements: Vec<SetElem>,
}

impl SetElemsRepr {
    /// Encodes the element list.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.strz(elem_list_attr::TABLE, &self.table)
            .strz(elem_list_attr::SET, &self.set);
        if let Some(id) = self.set_id {
            w.u32_be(elem_list_attr::SET_ID, id);
        }
        w.nested(elem_list_attr::ELEMENTS, |w| {
            for e in &self.elements {
                w.nested(NFTA_LIST_ELEM, |w| {
                    w.nested(elem_attr::KEY, |w| {
                        w.bytes(1, &e.key);
                    });
                    if e.flags != 0 {
                        w.u32_be(elem_attr::FLAGS, e.flags);
                    }
                });
            }
        });
    }

    /// Decodes an element list; attributes it does not know are skipped.
    pub fn parse(attrs: &[u8]) -> Result<Self, WireError> {
        let mut r = SetElemsRepr::default();
        for a in Attrs::new(attrs) {
            let a = a.ctx("set elements")?;
            match a.ty {
                elem_list_attr::TABLE => r.table = a.string("NFTA_SET_ELEM_LIST_TABLE")?,
                elem_list_attr::SET => r.set = a.string("NFTA_SET_ELEM_LIST_SET")?,
                elem_list_attr::SET_ID => r.set_id = Some(a.u32_be("NFTA_SET_ELEM_LIST_SET_ID")?),
                elem_list_attr::ELEMENTS => {
                    for e in a.nested() {
                        let e = e.ctx("set element")?;
                        let mut elem = SetElem {
                            key: Vec::new(),
                            flags: 0,
                        };
                        for f in e.nested() {
                            let f = f.ctx("set element")?;
                            match f.ty {
                                elem_attr::KEY => {
                                    for v in f.nested() {
                                        let v = v.ctx("set element key")?;
                                        if v.ty == 1 {
                                            elem.key = v.payload.to_vec();
                                        }
                                    }
                                }
                                elem_attr::FLAGS => elem.flags = f.u32_be("NFTA_SET_ELEM_FLAGS")?,
                                _ => {}
                            }
                        }
                        r.elements.push(elem);
                    }
                }
                _ => {}
            }
        }
        Ok(r)
    }
}
