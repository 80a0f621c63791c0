//! [`Pending`]: a `-m NAME`/`-j NAME` whose options the command-line parser is still
//! collecting, in iptables' words for the options it refuses (inverted where it may not be,
//! a missing or an extra argument), until [`Pending::finish`] makes the payload.

use super::{Arg, Ctx, Ext, Given, Opt, bad};
use crate::error::Result;
use crate::ipt::rule::XtPayload;

/// A module or target being filled in by the command-line parser.
#[derive(Clone)]
pub(crate) struct Pending {
    pub ext: &'static dyn Ext,
    pub given: Vec<Given>,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("ext", &self.ext.name())
            .field("given", &self.given)
            .finish()
    }
}

impl Pending {
    pub fn new(ext: &'static dyn Ext) -> Self {
        Pending {
            ext,
            given: Vec::new(),
        }
    }

    /// The option's table entry, if this extension has `opt` (`--opt`).
    pub fn knows(&self, opt: &str) -> Option<Opt> {
        let name = opt.strip_prefix("--")?;
        self.ext.options().iter().copied().find(|o| o.name == name)
    }

    /// Takes `opt` with its arguments from `next` (which yields the following words).
    pub fn take<'a>(
        &mut self,
        o: Opt,
        neg: bool,
        inline: Option<&'a str>,
        mut next: impl FnMut() -> Option<&'a str>,
    ) -> Result<()> {
        if neg && !o.invert {
            return Err(bad(format!(
                "{}: option \"--{}\" cannot be inverted",
                self.ext.name(),
                o.name
            )));
        }
        let want = match o.arg {
            Arg::None | Arg::Optional => 0,
            Arg::One => 1,
            Arg::Two => 2,
        };
        let mut args = Vec::new();
        let mut inline = inline;
        for i in 0..want {
            let v = inline
                .take()
                .or_else(&mut next)
                .ok_or_else(|| bad(format!("option \"--{}\" requires an argument", o.name)))?;
            // iptables takes the second word of a two-word option only if it is no option.
            if i == 1 && (v.starts_with('-') || v == "!") {
                return Err(bad(format!("--{} requires two args.", o.name)));
            }
            args.push(v.to_string());
        }
        if inline.is_some() {
            return Err(bad(format!(
                "option \"--{}\" doesn't allow an argument",
                o.name
            )));
        }
        self.given.push(Given {
            opt: o.name,
            args,
            neg,
        });
        Ok(())
    }

    /// The payload, or iptables' complaint.
    pub fn finish(&self, ctx: &Ctx<'_>) -> Result<XtPayload> {
        let info = self.ext.parse(&self.given, ctx)?;
        Ok(XtPayload {
            name: self.ext.wire_name().to_string(),
            rev: self.ext.payload_revision(&info),
            info,
            family: ctx.family,
        })
    }
}
