//! Set and map elements (`NEWSETELEM`/`DELSETELEM`/`GETSETELEM`): one element, a list of
//! them, and how a map element's data prints.

use super::*;

/// What a map element maps its key to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElemData {
    /// A value (`: 192.0.2.3 . 3389`), in the map's data layout.
    Value(Vec<u8>),
    /// A verdict (`: drop`, `: jump chain`) of a verdict map.
    Verdict(Verdict),
}

/// One element of a set or map.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ElemRepr {
    /// The key in the set's layout (each field of a concatenation padded to 4 bytes).
    pub key: Vec<u8>,
    /// The end of a range (sets with interval and concatenation, kernel 5.6+).
    pub key_end: Option<Vec<u8>>,
    /// `NFTA_SET_ELEM_DATA`: maps only, the element's value or verdict.
    pub data: Option<ElemData>,
    /// `NFT_SET_ELEM_*` ([`elem_flags`]).
    pub flags: u32,
    /// Milliseconds the element lives (sets with the timeout flag).
    pub timeout_ms: Option<u64>,
    /// Reported: milliseconds left.
    pub expiration_ms: Option<u64>,
    /// `NFTA_SET_ELEM_USERDATA`: libnftnl's TLVs (see [`udata`]).
    pub userdata: Option<Vec<u8>>,
    /// Stateful expressions of the element (its counter).
    pub exprs: Vec<Expr>,
    /// Object maps: the object's name.
    pub objref: Option<String>,
    /// Attribute types this parser does not know.
    pub unknown: Vec<u16>,
}

impl ElemRepr {
    /// An element with only a key.
    pub fn key(key: Vec<u8>) -> Self {
        ElemRepr {
            key,
            ..Default::default()
        }
    }

    /// The comment (`comment "..."`) from the userdata.
    pub fn comment(&self) -> Option<String> {
        udata::string(self.userdata.as_deref()?, udata::ELEM_COMMENT)
    }

    /// Sets the comment; `None` if it does not fit in a userdata TLV (254 bytes).
    pub fn with_comment(mut self, comment: &str) -> Option<Self> {
        let mut u = Vec::with_capacity(comment.len() + 3);
        udata::push_string(&mut u, udata::ELEM_COMMENT, comment)?;
        self.userdata = Some(u);
        Some(self)
    }

    /// The element's counter, `(packets, bytes)`, when it has one.
    pub fn counter(&self) -> Option<(u64, u64)> {
        self.exprs.iter().find_map(|e| match e {
            Expr::Counter(c) => Some((c.packets, c.bytes)),
            _ => None,
        })
    }

    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        let mut e = ElemRepr::default();
        let mut key = None;
        for a in Attrs::new(buf) {
            let a = a?;
            match a.ty {
                field::ELEM_KEY => key = Some(data_value(&a, "NFTA_SET_ELEM_KEY")?),
                field::ELEM_KEY_END => e.key_end = Some(data_value(&a, "NFTA_SET_ELEM_KEY_END")?),
                field::ELEM_DATA => e.data = Some(parse_data(&a)?),
                field::ELEM_FLAGS => e.flags = a.u32_be("NFTA_SET_ELEM_FLAGS")?,
                field::ELEM_TIMEOUT => e.timeout_ms = Some(a.u64_be("NFTA_SET_ELEM_TIMEOUT")?),
                field::ELEM_EXPIRATION => {
                    e.expiration_ms = Some(a.u64_be("NFTA_SET_ELEM_EXPIRATION")?)
                }
                field::ELEM_USERDATA => e.userdata = Some(a.payload.to_vec()),
                field::ELEM_OBJREF => e.objref = Some(a.string("NFTA_SET_ELEM_OBJREF")?),
                field::ELEM_EXPR => e
                    .exprs
                    .push(Expr::parse(a.payload).ctx("NFTA_SET_ELEM_EXPR")?),
                field::ELEM_EXPRESSIONS => {
                    e.exprs = parse_expr_list(&a).ctx("NFTA_SET_ELEM_EXPRESSIONS")?
                }
                other => e.unknown.push(other),
            }
        }
        // The catch-all element has no key.
        e.key = match key {
            Some(k) => k,
            None if e.flags & elem_flags::CATCHALL != 0 => Vec::new(),
            None => return Err(WireError::missing("NFTA_SET_ELEM_KEY")),
        };
        Ok(e)
    }

    fn emit(&self, w: &mut AttrWriter<'_>) {
        if !self.key.is_empty() || self.flags & elem_flags::CATCHALL == 0 {
            crate::expr::data::emit_value(w, field::ELEM_KEY, &self.key);
        }
        if let Some(k) = &self.key_end {
            crate::expr::data::emit_value(w, field::ELEM_KEY_END, k);
        }
        if self.flags != 0 {
            w.u32_be(field::ELEM_FLAGS, self.flags);
        }
        if let Some(t) = self.timeout_ms {
            w.u64_be(field::ELEM_TIMEOUT, t);
        }
        if let Some(t) = self.expiration_ms {
            w.u64_be(field::ELEM_EXPIRATION, t);
        }
        match &self.data {
            None => {}
            Some(ElemData::Value(v)) => crate::expr::data::emit_value(w, field::ELEM_DATA, v),
            Some(ElemData::Verdict(v)) => {
                w.nested(field::ELEM_DATA, |w| emit_verdict(w, v));
            }
        }
        if let Some(u) = &self.userdata {
            w.bytes(field::ELEM_USERDATA, u);
        }
        if let Some(o) = &self.objref {
            w.strz(field::ELEM_OBJREF, o);
        }
        emit_exprs(w, &self.exprs, field::ELEM_EXPR, field::ELEM_EXPRESSIONS);
    }
}

fn data_value(a: &Attr<'_>, name: &'static str) -> Result<Vec<u8>, WireError> {
    crate::expr::data::value(a, name)
}

fn parse_data(a: &Attr<'_>) -> Result<ElemData, WireError> {
    for d in a.nested() {
        let d = d.ctx("NFTA_SET_ELEM_DATA")?;
        match d.ty {
            NFTA_DATA_VALUE => return Ok(ElemData::Value(d.payload.to_vec())),
            crate::expr::data::NFTA_DATA_VERDICT => {
                return Ok(ElemData::Verdict(
                    parse_verdict(d.payload).ctx("NFTA_SET_ELEM_DATA")?,
                ));
            }
            _ => {}
        }
    }
    Err(WireError::missing("NFTA_DATA_VALUE").within("NFTA_SET_ELEM_DATA"))
}

/// Elements of one set: what `NEWSETELEM`/`DELSETELEM` carry, `GETSETELEM` asks for (one
/// element by key) and a dump reports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ElemListRepr {
    /// The `nfgenmsg` family.
    pub family: u8,
    /// `NFTA_SET_ELEM_LIST_TABLE`.
    pub table: String,
    /// `NFTA_SET_ELEM_LIST_SET`: the set's name.
    pub set: String,
    /// Requests: the set created earlier in the same batch.
    pub set_id: Option<u32>,
    /// `NFTA_SET_ELEM_LIST_ELEMENTS`.
    pub elements: Vec<ElemRepr>,
}

impl ElemListRepr {
    /// Decodes an element list; each element's unknown attributes go to its `unknown`.
    pub fn parse(family: u8, attrs: &[u8]) -> Result<Self, WireError> {
        let mut r = ElemListRepr {
            family,
            ..Default::default()
        };
        let (mut table, mut set) = (None, None);
        for a in Attrs::new(attrs) {
            let a = a.ctx("set elements")?;
            match a.ty {
                field::LIST_TABLE => table = Some(a.string("NFTA_SET_ELEM_LIST_TABLE")?),
                field::LIST_SET => set = Some(a.string("NFTA_SET_ELEM_LIST_SET")?),
                field::LIST_SET_ID => r.set_id = Some(a.u32_be("NFTA_SET_ELEM_LIST_SET_ID")?),
                field::LIST_ELEMENTS => {
                    for (i, e) in a.nested().enumerate() {
                        let e = e.ctx("set elements")?;
                        r.elements.push(
                            ElemRepr::parse(e.payload)
                                .ctx(format_args!("element #{i}"))
                                .ctx("set elements")?,
                        );
                    }
                }
                _ => {}
            }
        }
        r.table = table
            .ok_or_else(|| WireError::missing("NFTA_SET_ELEM_LIST_TABLE").within("set elements"))?;
        r.set = set.unwrap_or_default();
        if r.set.is_empty() && r.set_id.is_none() {
            return Err(WireError::missing("NFTA_SET_ELEM_LIST_SET").within("set elements"));
        }
        Ok(r)
    }

    /// Encodes the element list.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.strz(field::LIST_TABLE, &self.table);
        if !self.set.is_empty() {
            w.strz(field::LIST_SET, &self.set);
        }
        if let Some(id) = self.set_id {
            w.u32_be(field::LIST_SET_ID, id);
        }
        if !self.elements.is_empty() {
            // libnftnl numbers the elements 1, 2, ...; the kernel reads any type here.
            w.nested(field::LIST_ELEMENTS, |w| {
                for (i, e) in self.elements.iter().enumerate() {
                    let ty = u16::try_from(i + 1).unwrap_or(NFTA_LIST_ELEM) & 0x3fff;
                    w.nested(ty.max(1), |w| e.emit(w));
                }
            });
        }
    }
}

/// Prints an element in the style of `nft --debug=netlink`'s element lines:
/// `element 31687465 00000000 ... : c0000203 00003d0d 0 [end]`.
impl fmt::Display for ElemRepr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "element {}", hex(&self.key))?;
        match &self.data {
            None => {}
            Some(ElemData::Value(v)) => write!(f, " : {}", hex(v))?,
            Some(ElemData::Verdict(v)) => write!(f, " : {}", verdict_word(v))?,
        }
        write!(f, " {}", self.flags)
    }
}

/// A verdict in nft's words (`drop`, `jump chain`).
pub fn verdict_word(v: &Verdict) -> String {
    match v {
        Verdict::Accept => "accept".into(),
        Verdict::Drop => "drop".into(),
        Verdict::Return => "return".into(),
        Verdict::Continue => "continue".into(),
        Verdict::Break => "break".into(),
        Verdict::Jump(c) => format!("jump {c}"),
        Verdict::Goto(c) => format!("goto {c}"),
        Verdict::Unknown(n) => format!("verdict {n}"),
    }
}
