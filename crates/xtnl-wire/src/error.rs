use std::fmt;

/// A message that could not be decoded, with the path of where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError {
    /// What went wrong.
    pub kind: WireErrorKind,
    /// Outermost first, e.g. `["rule", "expression #2 (payload)", "NFTA_PAYLOAD_LEN"]`.
    pub context: Vec<String>,
}

/// What went wrong in a [`WireError`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireErrorKind {
    /// Fewer bytes than the structure needs.
    Truncated {
        /// Bytes the structure needs.
        need: usize,
        /// Bytes there were.
        have: usize,
    },
    /// A length field that is impossible for where it stands.
    BadLength {
        /// The length the field gave, in bytes.
        len: usize,
    },
    /// A required attribute is absent.
    Missing {
        /// The attribute's kernel name, e.g. `NFTA_GEN_ID`.
        attr: &'static str,
    },
    /// A field holds a value outside what its meaning allows.
    BadValue {
        /// What is wrong with the value.
        detail: String,
    },
}

impl WireError {
    /// An error of this kind, with no context yet (callers add it with `within`).
    pub fn new(kind: WireErrorKind) -> Self {
        WireError {
            kind,
            context: Vec::new(),
        }
    }
    /// [`WireErrorKind::Truncated`]: `need` bytes were needed, `have` were there.
    pub fn truncated(need: usize, have: usize) -> Self {
        Self::new(WireErrorKind::Truncated { need, have })
    }
    /// [`WireErrorKind::Missing`]: the required attribute `attr` is absent.
    pub fn missing(attr: &'static str) -> Self {
        Self::new(WireErrorKind::Missing { attr })
    }
    /// [`WireErrorKind::BadValue`], saying what is wrong.
    pub fn bad_value(detail: impl Into<String>) -> Self {
        Self::new(WireErrorKind::BadValue {
            detail: detail.into(),
        })
    }
    /// Adds an outer context (called while unwinding out of nested structures).
    pub fn within(mut self, ctx: impl fmt::Display) -> Self {
        self.context.insert(0, ctx.to_string());
        self
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.context {
            write!(f, "{c}: ")?;
        }
        match &self.kind {
            WireErrorKind::Truncated { need, have } => {
                write!(f, "truncated: need {need} bytes, have {have}")
            }
            WireErrorKind::BadLength { len } => write!(f, "impossible length {len}"),
            WireErrorKind::Missing { attr } => write!(f, "missing attribute {attr}"),
            WireErrorKind::BadValue { detail } => write!(f, "{detail}"),
        }
    }
}

impl std::error::Error for WireError {}

/// Adds context to the error of a `Result` (`.within_ctx(|| ...)`).
pub trait ResultExt<T> {
    fn ctx(self, ctx: impl fmt::Display) -> Result<T, WireError>;
}

impl<T> ResultExt<T> for Result<T, WireError> {
    fn ctx(self, ctx: impl fmt::Display) -> Result<T, WireError> {
        self.map_err(|e| e.within(ctx))
    }
}
