//! Reads of named sets and their elements on a plan's [`Reader`] (so within the plan's
//! generation): one set, a table's sets, a set's elements (a dump, restarted while commits
//! interrupt it), elements by key (single-element gets, many per round trip).

#![deny(missing_docs)]

use super::Reader;
use super::refs::TableRef;
use super::session::{absent, dump_all};
use super::set::{GETS_PER_ROUND_TRIP, GETSET};
use crate::error::{Error, Result};
use crate::transport::Request;
use crate::wire::nftables::{msg, split_nfgenmsg};
use crate::wire::set::{ElemListRepr, ElemRepr, SetDefRepr, field, flags};

impl Reader<'_> {
    /// Pins the plan to a generation the caller already knows (state it cached from an
    /// earlier plan), without reading it: the commit carries it, and the kernel refuses the
    /// batch (ERESTART, and the plan runs again) if anything changed since. Does nothing if
    /// the plan has read already.
    pub fn pin_to(&mut self, generation: u32) {
        self.generation.get_or_insert(generation);
    }

    /// The generation the plan is pinned to, if it read anything or was pinned; reads nothing.
    pub fn pinned_generation(&self) -> Option<u32> {
        self.generation
    }

    /// The kernel's generation now (one round trip), whatever the plan is pinned to.
    pub fn current_generation(&mut self) -> Result<u32> {
        let payload = self.sock.request(
            msg::GETGEN,
            crate::wire::nftables::nfproto::UNSPEC,
            "read generation id",
        )?;
        let (_, attrs) = split_nfgenmsg(&payload)?;
        Ok(crate::wire::nftables::GenRepr::parse(attrs)?.id)
    }

    /// One set, by name: a single-object request. `None` when the table holds no such set.
    pub fn set(&mut self, table: &TableRef, name: &str) -> Result<Option<SetDefRepr>> {
        self.pin()?;
        let reply = absent(self.sock.request_with(
            GETSET,
            table.family.nfproto(),
            |w| {
                w.strz(field::SET_TABLE, &table.name)
                    .strz(field::SET_NAME, name);
            },
            "get set",
        ))?;
        let Some(payload) = reply else {
            return Ok(None);
        };
        let (fam, attrs) = split_nfgenmsg(&payload)?;
        Ok(Some(SetDefRepr::parse(fam, attrs)?))
    }

    /// The named sets and maps of a table (anonymous ones left out).
    pub fn sets(&mut self, table: &TableRef) -> Result<Vec<SetDefRepr>> {
        self.pin()?;
        let name = table.name.clone();
        dump_all(
            self.sock,
            &mut self.stats.dump_restarts,
            GETSET,
            table.family.nfproto(),
            &|w| {
                w.strz(field::SET_TABLE, &name);
            },
            |fam, attrs| {
                let s = SetDefRepr::parse(fam, attrs)?;
                Ok((s.table == name && s.flags & flags::ANONYMOUS == 0).then_some(s))
            },
        )
    }

    /// Every set and map of a table, the anonymous ones (`__set0`, which rules look up)
    /// included, in the kernel's order.
    pub fn all_sets(&mut self, table: &TableRef) -> Result<Vec<SetDefRepr>> {
        self.pin()?;
        let name = table.name.clone();
        dump_all(
            self.sock,
            &mut self.stats.dump_restarts,
            GETSET,
            table.family.nfproto(),
            &|w| {
                w.strz(field::SET_TABLE, &name);
            },
            |fam, attrs| {
                let s = SetDefRepr::parse(fam, attrs)?;
                Ok((s.table == name).then_some(s))
            },
        )
    }

    /// Every element of a set: a dump, restarted while commits interrupt it.
    pub fn elements(&mut self, table: &TableRef, set: &str) -> Result<Vec<ElemRepr>> {
        self.pin()?;
        let lists = dump_all(
            self.sock,
            &mut self.stats.dump_restarts,
            msg::GETSETELEM,
            table.family.nfproto(),
            &|w| {
                w.strz(field::LIST_TABLE, &table.name)
                    .strz(field::LIST_SET, set);
            },
            |fam, attrs| Ok(Some(ElemListRepr::parse(fam, attrs)?)),
        )?;
        Ok(lists.into_iter().flat_map(|l| l.elements).collect())
    }

    /// Whether the set exists and, if it does, the elements holding these keys: the
    /// generation (when not read yet), the set and the elements in one round trip (for up
    /// to a few hundred keys). `None` when the set is absent.
    pub fn set_elements_by_key(
        &mut self,
        table: &TableRef,
        set: &str,
        keys: &[Vec<u8>],
    ) -> Result<Option<Vec<Option<ElemRepr>>>> {
        if keys.len() + 2 > GETS_PER_ROUND_TRIP {
            return match self.set(table, set)? {
                None => Ok(None),
                Some(_) => self.elements_by_key(table, set, keys).map(Some),
            };
        }
        let pin = self.generation.is_none();
        let family = table.family.nfproto();
        let no_attrs = |_: &mut crate::wire::attr::AttrWriter<'_>| {};
        let set_attrs = |w: &mut crate::wire::attr::AttrWriter<'_>| {
            w.strz(field::SET_TABLE, &table.name)
                .strz(field::SET_NAME, set);
        };
        let elem_attrs: Vec<_> = keys
            .iter()
            .map(|k| {
                let list = ElemListRepr {
                    family,
                    table: table.name.clone(),
                    set: set.to_owned(),
                    set_id: None,
                    elements: vec![ElemRepr::key(k.clone())],
                };
                move |w: &mut crate::wire::attr::AttrWriter<'_>| list.emit(w)
            })
            .collect();
        let mut gets = Vec::with_capacity(keys.len() + 2);
        if pin {
            gets.push(Request {
                msg: msg::GETGEN,
                family: crate::wire::nftables::nfproto::UNSPEC,
                attrs: &no_attrs,
                what: "read generation id",
            });
        }
        gets.push(Request {
            msg: GETSET,
            family,
            attrs: &set_attrs,
            what: "get set",
        });
        for a in &elem_attrs {
            gets.push(Request {
                msg: msg::GETSETELEM,
                family,
                attrs: a,
                what: "get set element",
            });
        }
        let answers = self.sock.pipelined(&gets, None, |_, _| Ok(()))?;
        let mut replies = answers.replies.into_iter();
        let mut next = || {
            replies.next().unwrap_or_else(|| {
                Err(Error::Netlink {
                    context: "get set element",
                    source: std::io::Error::other("no answer"),
                })
            })
        };
        if pin {
            let payload = next()?;
            let (_, attrs) = split_nfgenmsg(&payload)?;
            self.generation = Some(crate::wire::nftables::GenRepr::parse(attrs)?.id);
        }
        if absent(next())?.is_none() {
            return Ok(None);
        }
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            let found = match absent(next())? {
                Some(payload) => {
                    let (fam, attrs) = split_nfgenmsg(&payload)?;
                    ElemListRepr::parse(fam, attrs)?.elements.into_iter().next()
                }
                None => None,
            };
            out.push(found.filter(|e| e.key == *key));
        }
        Ok(Some(out))
    }

    /// The elements holding these keys (`None` for an absent one), asked one by one with
    /// single-element gets, many per round trip: the cost is the keys', not the set's.
    pub fn elements_by_key(
        &mut self,
        table: &TableRef,
        set: &str,
        keys: &[Vec<u8>],
    ) -> Result<Vec<Option<ElemRepr>>> {
        self.pin()?;
        let mut out = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(GETS_PER_ROUND_TRIP) {
            let attrs: Vec<_> = chunk
                .iter()
                .map(|k| {
                    let list = ElemListRepr {
                        family: table.family.nfproto(),
                        table: table.name.clone(),
                        set: set.to_owned(),
                        set_id: None,
                        elements: vec![ElemRepr::key(k.clone())],
                    };
                    move |w: &mut crate::wire::attr::AttrWriter<'_>| list.emit(w)
                })
                .collect();
            let gets: Vec<Request<'_>> = attrs
                .iter()
                .map(|a| Request {
                    msg: msg::GETSETELEM,
                    family: table.family.nfproto(),
                    attrs: a,
                    what: "get set element",
                })
                .collect();
            let answers = self.sock.pipelined(&gets, None, |_, _| Ok(()))?;
            for (reply, key) in answers.replies.into_iter().zip(chunk) {
                let found = match absent(reply)? {
                    Some(payload) => {
                        let (fam, attrs) = split_nfgenmsg(&payload)?;
                        ElemListRepr::parse(fam, attrs)?.elements.into_iter().next()
                    }
                    None => None,
                };
                // Kernel 6.18 answers a get of an absent key in a hash set sized with
                // `policy memory` with another element (`nft get element` prints it too):
                // only an element holding the very key asked for counts.
                out.push(found.filter(|e| e.key == *key));
            }
        }
        Ok(out)
    }
}
