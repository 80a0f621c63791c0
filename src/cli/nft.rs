//! `xtnl nft ...` and the name `nft`: nft's JSON subset (issue 26). `-j -f FILE|-` applies a
//! document in one batch; `-j list ruleset|tables|table|chains|chain|sets|maps|set|map`
//! prints what `nft -j list` prints. nft's text syntax is refused, saying so.

use std::io::{Read, Write};

use xtnl::error::{Error, Result};
use xtnl::lock::LockMode;
use xtnl::model::Family;
use xtnl::nft::TableRef;
use xtnl::nftjson::{self, Listing};

use super::context::Ctx;
use super::io_error;

/// The usage line of `xtnl help`.
pub const USAGE: &str =
    "  nft -j -f FILE|-              apply an nft JSON document (libnftables-json(5)) as one
                                transaction, as `nft -j -f` does (also under the name nft)
  nft -j list ruleset|tables|chains|sets|maps [FAMILY]
  nft -j list table|chain|set|map [FAMILY] TABLE [NAME]
                                print what `nft -j list` prints";

const TEXT_REFUSED: &str = "nft's text syntax is not supported; use -j (JSON)";

/// The most bytes of a document read (nft's own limit is memory; 64 MiB holds a
/// 100,000-element set many times over).
const MAX_DOCUMENT: u64 = 64 << 20;

struct Opts {
    json: bool,
    file: Option<String>,
    words: Vec<String>,
}

fn parse(args: &[String]) -> Result<Opts> {
    let mut o = Opts {
        json: false,
        file: None,
        words: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-j" | "--json" => o.json = true,
            // Handles are always in nft's JSON, and priorities are numbers there: nft 1.0.6's
            // JSON is the same with these (measured).
            "-a" | "--handle" | "-y" | "--numeric-priority" => {}
            // These change nft's JSON (measured); not done yet, so refused, not ignored.
            "-n" | "-nn" | "-nnn" | "--numeric" | "-s" | "--stateless" | "-t" | "--terse" => {
                return Err(Error::InvalidInput(format!(
                    "nft option {a} is not supported by xtnl yet (it changes nft's JSON)"
                )));
            }
            "-f" | "--file" => {
                let f = it
                    .next()
                    .ok_or_else(|| Error::InvalidInput("-f needs a file name (or -)".into()))?;
                o.file = Some(f.clone());
            }
            s if s.starts_with("--file=") => o.file = Some(s["--file=".len()..].to_string()),
            s if s.starts_with('-') && s.len() > 1 && o.words.is_empty() => {
                // Combined short options: -ja, -jf FILE is not nft's either.
                let flags = &s[1..];
                if flags.chars().all(|c| matches!(c, 'j' | 'a' | 'y')) {
                    o.json |= flags.contains('j');
                } else {
                    return Err(Error::InvalidInput(format!(
                        "nft option {s} is not supported by xtnl (only -j, -a, -y, -f)"
                    )));
                }
            }
            w => o.words.push(w.to_string()),
        }
    }
    Ok(o)
}

fn family_word(w: &str) -> Option<Family> {
    match w {
        "ip" => Some(Family::Ipv4),
        "ip6" => Some(Family::Ipv6),
        "inet" => Some(Family::Inet),
        _ => None,
    }
}

fn listing(words: &[String]) -> Result<Listing> {
    let bad = || {
        Error::InvalidInput(format!(
            "list {}: not a listing xtnl supports (ruleset, tables, chains, sets, maps \
             [FAMILY]; table [FAMILY] NAME; chain|set|map [FAMILY] TABLE NAME)",
            words.join(" ")
        ))
    };
    let (what, rest) = words.split_first().ok_or_else(bad)?;
    let fam_rest = |rest: &[String]| -> Result<(Option<Family>, Vec<String>)> {
        match rest.first().map(String::as_str) {
            Some(f) if matches!(f, "arp" | "bridge" | "netdev") => Err(Error::InvalidInput(
                format!("family {f} is not supported by xtnl's nft front (ip, ip6, inet are)"),
            )),
            Some(f) => match family_word(f) {
                Some(fam) => Ok((Some(fam), rest[1..].to_vec())),
                None => Ok((None, rest.to_vec())),
            },
            None => Ok((None, Vec::new())),
        }
    };
    let (fam, names) = fam_rest(rest)?;
    Ok(match (what.as_str(), names.as_slice()) {
        ("ruleset", []) => Listing::Ruleset(fam),
        ("tables", []) => Listing::Tables(fam),
        ("chains", []) => Listing::Chains(fam),
        ("sets", []) => Listing::Sets(fam),
        ("maps", []) => Listing::Maps(fam),
        // nft's default family is ip.
        ("table", [t]) => Listing::Table(TableRef::new(fam.unwrap_or(Family::Ipv4), t.clone())),
        ("chain", [t, c]) => Listing::Chain(
            TableRef::new(fam.unwrap_or(Family::Ipv4), t.clone()),
            c.clone(),
        ),
        ("set" | "map", [t, s]) => Listing::Set(
            TableRef::new(fam.unwrap_or(Family::Ipv4), t.clone()),
            s.clone(),
        ),
        _ => return Err(bad()),
    })
}

/// Runs `nft ARGS` (JSON only). Every failure is exit status 1, as nft's.
pub fn run(out: &mut impl Write, args: &[String], ctx: &Ctx) -> Result<i32> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        let text =
            super::args::help_of(&["nft".to_string()]).unwrap_or_else(|| format!("{USAGE}\n"));
        write!(out, "{text}").map_err(io_error)?;
        return Ok(0);
    }
    let o = parse(args)?;
    if !o.json {
        return Err(Error::InvalidInput(TEXT_REFUSED.into()));
    }
    let mut session = ctx.session().lock_mode(LockMode::Never).open()?;
    if let Some(file) = &o.file {
        if !o.words.is_empty() {
            return Err(Error::InvalidInput(format!(
                "-f FILE takes no command words (got {:?})",
                o.words.join(" ")
            )));
        }
        // A delegated caller is held to apply's bound, and names no file for root to open.
        let max = if ctx.delegated {
            xtnl::limits::MAX_JSON_DOCUMENT_BYTES as u64
        } else {
            MAX_DOCUMENT
        };
        if file != "-" {
            super::privileged::caller_file(file)?;
        }
        let mut text = String::new();
        let read = match file.as_str() {
            "-" => std::io::stdin()
                .lock()
                .take(max + 1)
                .read_to_string(&mut text),
            path => std::fs::File::open(path)
                .map_err(|e| Error::InvalidInput(format!("cannot open {path}: {e}")))?
                .take(max + 1)
                .read_to_string(&mut text),
        };
        read.map_err(|e| Error::InvalidInput(format!("cannot read {file}: {e}")))?;
        if text.len() as u64 > max {
            return Err(Error::InvalidInput(format!(
                "{file}: a document of more than {max} bytes"
            )));
        }
        let doc = xtnl_nft_json::Document::from_json(&text)
            .map_err(|e| Error::InvalidInput(format!("{file}: not an nft JSON document: {e}")))?;
        nftjson::apply(&mut session, &doc)?;
        session.close_detached()?;
        return Ok(0);
    }
    match o.words.first().map(String::as_str) {
        Some("list") => {
            let what = listing(&o.words[1..])?;
            let doc = nftjson::list(&mut session, &what)?;
            let text = nftjson::to_nft_text(&doc)
                .map_err(|e| Error::InvalidInput(format!("cannot print the listing: {e}")))?;
            writeln!(out, "{text}").map_err(io_error)?;
            Ok(0)
        }
        Some(w) => Err(Error::InvalidInput(format!(
            "nft command {w:?} is not supported by xtnl (with -j: -f FILE and list)"
        ))),
        None => Err(Error::InvalidInput(
            "no command: with -j, give -f FILE or list ...".into(),
        )),
    }
}

/// Prints an error as `xtnl nft` reports it: one line on standard error, exit status 1.
pub fn report(err: &Error) -> i32 {
    let mut e = std::io::stderr().lock();
    let _ = match err {
        Error::InvalidInput(m) => writeln!(e, "xtnl: {m}"),
        other => writeln!(e, "xtnl: {other}"),
    };
    1
}
