//! Scaling: every tool's five operations at every N, tools interleaved within each
//! iteration so that drift in the machine's load hits them alike.

use std::time::{Duration, Instant};

use super::process::{Exit, agent, binary_setup_args, ipt_program, must, p, settle, spawn};
use super::spec;
use super::{Config, Env, Floor, Op, Results, Tool, contention, floor};
use xtnl::error::{Error, Result};
use xtnl::ipt::{exec, listing, parse, restore};
use xtnl::lock::LockMode;
use xtnl::model::Family;
use xtnl::nathost::{self, Forward, ForwardProtocol, Reservation};
use xtnl::nft::{Session, TableRef, Transaction};
use xtnl::transport::NlSocket;

/// The populated reservation whose chain flush, insert and list work on.
pub const TARGET: usize = 7;
/// Interleaved library-flush / bare-batch pairs per iteration (on top of the library's
/// flush in the tools' loop).
const FLOOR_PAIRS: usize = 5;
/// Reservations set up and torn down by the timed set-up/teardown (one per tool).
const SETUP_BASE: usize = 900_000;

fn nat() -> TableRef {
    TableRef::new(Family::Ipv4, "nat")
}

fn library_reservation(id: usize) -> Result<Reservation> {
    let mut r = Reservation::new(spec::chain(id));
    r.jump_comment = Some(r.described_jump("VCL: "));
    for (port, to) in spec::forwards(id) {
        let mut f = Forward {
            protocol: ForwardProtocol::Tcp,
            public_port: port,
            to: to
                .parse()
                .map_err(|_| Error::InvalidInput(format!("bench: bad address {to}")))?,
            in_interface: Some("eth1".into()),
            comment: None,
        };
        f.comment = Some(f.described("VCL: "));
        r.forwards.push(f);
    }
    Ok(r)
}

impl Env<'_> {
    fn progress(&self, msg: &str) {
        if self.cfg.progress {
            eprintln!("xtnl bench: {msg}");
        }
    }

    /// Puts the target chain back as populated (flushed, its two forwards), untimed.
    fn refill(&mut self, tool: Tool) -> Result<()> {
        let text = spec::refill_file(TARGET);
        if tool.legacy() {
            must(
                p("iptables-legacy-restore"),
                &spec::words(&["-w", "--noflush"]),
                Some(&text),
                &self.lock,
            )?;
        } else {
            let blocks = restore::parse_file(&text, Family::Ipv4)?;
            restore::apply(&mut self.session, &blocks, Family::Ipv4, true)?;
        }
        Ok(())
    }

    fn xtnl(&self, args: &[String], input: Option<&str>) -> Result<Duration> {
        Ok(must(&self.cfg.xtnl, args, input, &self.lock)?.took)
    }

    fn tool(&self, program: &str, args: &[String], input: Option<&str>) -> Result<Exit> {
        must(p(program), args, input, &self.lock)
    }

    /// Times one operation of one tool; returns the time and what it printed (listings).
    fn op(&mut self, tool: Tool, op: Op, rt: &mut Option<u64>) -> Result<(Duration, String)> {
        let target = spec::chain(TARGET);
        let setup_id = SETUP_BASE + tool as usize;
        let setup_chain = spec::chain(setup_id);
        let ipt = |a: &[&str]| {
            let mut v = spec::words(&["-t", "nat"]);
            v.extend(spec::words(a));
            v
        };
        let mut insert_args = ipt(&["-I", &target]);
        insert_args.extend(spec::insert_words());
        let out = match tool {
            Tool::Library => {
                let s = &mut self.session;
                let before = s.socket().round_trips();
                let start = Instant::now();
                let text = match op {
                    Op::Flush => {
                        let mut tx = Transaction::new();
                        tx.flush_chain(&nat().chain(&target));
                        s.commit(&tx)?;
                        String::new()
                    }
                    Op::Insert => exec::execute(s, &self.insert)?,
                    Op::List => listing::list_rules(s, &nat(), Some(&target), false)?,
                    Op::Setup => {
                        nathost::setup(s, &library_reservation(setup_id)?)?;
                        String::new()
                    }
                    Op::Teardown => {
                        nathost::teardown(s, Family::Ipv4, "nat", &setup_chain, "PREROUTING")?;
                        String::new()
                    }
                };
                let took = start.elapsed();
                *rt = Some(s.socket().round_trips() - before);
                (took, text)
            }
            Tool::Binary => {
                let args = match op {
                    Op::Flush => ipt(&["-F", &target]),
                    Op::Insert => insert_args,
                    Op::List => ipt(&["-S", &target]),
                    Op::Setup => binary_setup_args(setup_id, &setup_chain),
                    Op::Teardown => spec::words(&["teardown", &setup_chain]),
                };
                let e = must(&self.cfg.xtnl, &args, None, &self.lock)?;
                (e.took, e.stdout)
            }
            Tool::IptablesNft | Tool::IptablesLegacy => {
                let legacy = tool == Tool::IptablesLegacy;
                let (program, mut args) = ipt_program(legacy);
                match op {
                    Op::Setup | Op::Teardown => {
                        let save = self.dir.join(format!("save-{}.rules", tool as usize));
                        let start = Instant::now();
                        let id = (op == Op::Setup).then_some(setup_id);
                        agent(legacy, id, &setup_chain, &self.lock, &save, None)?.map_err(|m| {
                            Error::Precondition(format!(
                                "xtnl bench: {} {:?} of {setup_chain} failed: {m}",
                                tool.label(),
                                op
                            ))
                        })?;
                        (start.elapsed(), String::new())
                    }
                    _ => {
                        args.extend(match op {
                            Op::Flush => ipt(&["-F", &target]),
                            Op::Insert => insert_args,
                            _ => ipt(&["-S", &target]),
                        });
                        let e = self.tool(program, &args, None)?;
                        (e.took, e.stdout)
                    }
                }
            }
            Tool::Nft => match op {
                Op::Flush => (
                    self.tool("nft", &spec::nft_flush(&target), None)?.took,
                    String::new(),
                ),
                Op::Insert => (
                    self.tool("nft", &spec::nft_insert(&target), None)?.took,
                    String::new(),
                ),
                Op::List => {
                    let e = self.tool("nft", &spec::nft_list(&target), None)?;
                    (e.took, e.stdout)
                }
                Op::Setup => {
                    let script = spec::nft_setup(setup_id, &setup_chain);
                    let e = self.tool("nft", &spec::words(&["-f", "-"]), Some(&script))?;
                    (e.took, String::new())
                }
                Op::Teardown => {
                    let start = Instant::now();
                    let listed = self.tool(
                        "nft",
                        &spec::words(&["-a", "list", "chain", "ip", "nat", "PREROUTING"]),
                        None,
                    )?;
                    let handle =
                        spec::nft_jump_handle(&listed.stdout, &setup_chain).ok_or_else(|| {
                            Error::Precondition(format!(
                                "xtnl bench: nft lists no jump to {setup_chain} in PREROUTING"
                            ))
                        })?;
                    let script = spec::nft_teardown(&setup_chain, handle);
                    self.tool("nft", &spec::words(&["-f", "-"]), Some(&script))?;
                    (start.elapsed(), String::new())
                }
            },
            Tool::NftRestore | Tool::LegacyRestore => {
                let (program, args) = if tool == Tool::NftRestore {
                    ("iptables-nft-restore", spec::words(&["--noflush"]))
                } else {
                    ("iptables-legacy-restore", spec::words(&["-w", "--noflush"]))
                };
                let input = match op {
                    Op::Flush => spec::restore_flush(&target),
                    Op::Insert => spec::restore_insert(&target),
                    Op::Setup => spec::restore_setup(setup_id, &setup_chain),
                    Op::Teardown => spec::restore_teardown(&setup_chain),
                    Op::List => return Ok((Duration::ZERO, String::new())),
                };
                (self.tool(program, &args, Some(&input))?.took, String::new())
            }
        };
        Ok(out)
    }

    /// A chain's listing on the tool's side, for the checks: `-S CHAIN` lines, or None when
    /// the chain does not exist.
    fn chain_listing(&mut self, legacy: bool, chain: &str) -> Result<Option<String>> {
        if legacy {
            let e = spawn(
                p("iptables-legacy"),
                &spec::words(&["-w", "-t", "nat", "-S", chain]),
                None,
                &self.lock,
            )?;
            return Ok(e.ok.then_some(e.stdout));
        }
        match listing::list_rules(&mut self.session, &nat(), Some(chain), false) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == xtnl::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Checks that an operation did what it says (first iteration at each N only).
    fn check(&mut self, tool: Tool, op: Op, listed: &str) -> Result<()> {
        let legacy = tool.legacy();
        let target = spec::chain(TARGET);
        let setup_chain = spec::chain(SETUP_BASE + tool as usize);
        let rules = |l: &Option<String>| {
            l.as_deref().map_or(0, |t| {
                t.lines()
                    .filter(|x| x.starts_with("-A ") || x.starts_with("# handle"))
                    .count()
            })
        };
        let words_of = |l: &Option<String>, w: &str| {
            l.as_deref()
                .is_some_and(|t| t.split_whitespace().any(|x| x.trim_matches('"') == w))
        };
        let fail = |what: &str| {
            Err(Error::Precondition(format!(
                "xtnl bench: check failed: {} {:?}: {what}",
                tool.label(),
                op
            )))
        };
        match op {
            Op::Flush => {
                let l = self.chain_listing(legacy, &target)?;
                if rules(&l) != 0 {
                    return fail("the chain still holds rules");
                }
            }
            Op::Insert => {
                let l = self.chain_listing(legacy, &target)?;
                let first = l.as_deref().and_then(|t| {
                    t.lines()
                        .find(|x| x.starts_with("-A ") || x.starts_with("# handle"))
                });
                if rules(&l) != 3
                    || !first.is_some_and(|f| f.contains(&spec::INSERT_PORT.to_string()))
                {
                    return fail("the inserted rule is not first of three");
                }
            }
            Op::List => {
                let port = spec::forwards(TARGET)[0].0.to_string();
                if tool.lists() && !listed.contains(&port) {
                    return fail("the listing does not show the chain's forward");
                }
            }
            Op::Setup | Op::Teardown => {
                let l = self.chain_listing(legacy, &setup_chain)?;
                let pre = self.chain_listing(legacy, "PREROUTING")?;
                let jumped = words_of(&pre, &setup_chain);
                let ok = if op == Op::Setup {
                    rules(&l) == 2 && jumped
                } else {
                    l.is_none() && !jumped
                };
                if !ok {
                    return fail(if op == Op::Setup {
                        "the chain, its two forwards and the jump are not all there"
                    } else {
                        "the chain or the jump to it is still there"
                    });
                }
            }
        }
        Ok(())
    }

    fn floors(&mut self, r: &mut Results, n: usize, record: bool) -> Result<()> {
        let target = spec::chain(TARGET);
        // The library's flush against the bare batch, interleaved (order alternating) and
        // repeated: both cost microseconds, so more samples than the process-level tools
        // get keep the ratio from resting on a handful of runs at large N.
        let mut bare = Vec::new();
        for i in 0..FLOOR_PAIRS {
            for library in [i % 2 == 0, i % 2 != 0] {
                settle()?;
                let start = Instant::now();
                if library {
                    let mut tx = Transaction::new();
                    tx.flush_chain(&nat().chain(&target));
                    self.session.commit(&tx)?;
                } else {
                    let bytes = floor::flush_bytes(&mut self.bare, &target)?;
                    floor::send_batch(&mut self.bare, &bytes)?;
                }
                let took = start.elapsed();
                self.refill(Tool::Library)?;
                if !record {
                    continue;
                }
                if library {
                    r.samples
                        .entry((Op::Flush, Tool::Library, n))
                        .or_default()
                        .push(took);
                } else {
                    bare.push(took);
                }
            }
        }
        settle()?;
        let start = Instant::now();
        let (bytes, seq) = floor::getgen_bytes(&mut self.bare);
        floor::getgen(&mut self.bare, &bytes, seq)?;
        let getgen = start.elapsed();
        let start = Instant::now();
        self.session.generation()?;
        let lib_getgen = start.elapsed();
        let t = must(p("/bin/true"), &[], None, &self.lock)?.took;
        let v = self.xtnl(&spec::words(&["version"]), None)?;
        if record {
            r.floors
                .entry((Floor::BareBatch, n))
                .or_default()
                .extend(bare);
            for (f, d) in [
                (Floor::BareGetgen, getgen),
                (Floor::LibraryGetgen, lib_getgen),
                (Floor::ProcessTrue, t),
                (Floor::XtnlVersion, v),
            ] {
                r.floors.entry((f, n)).or_default().push(d);
            }
        }
        Ok(())
    }

    fn populate(&mut self, r: &mut Results, from: usize, to: usize) -> Result<()> {
        let text = spec::populate_file(from, to);
        let nft = self
            .tool(
                "iptables-nft-restore",
                &spec::words(&["--noflush"]),
                Some(&text),
            )?
            .took;
        let legacy = self
            .tool(
                "iptables-legacy-restore",
                &spec::words(&["-w", "--noflush"]),
                Some(&text),
            )?
            .took;
        settle()?;
        r.notes.push(format!(
            "populate {from}..{to}: iptables-nft-restore {:.0} ms, iptables-legacy-restore {:.0} ms",
            nft.as_secs_f64() * 1e3,
            legacy.as_secs_f64() * 1e3
        ));
        Ok(())
    }
}

/// The whole run: populate, measure each N, contention at its N.
pub(super) fn run(cfg: &Config, r: &mut Results) -> Result<()> {
    let mut insert = spec::words(&["-t", "nat", "-I", &spec::chain(TARGET)]);
    insert.extend(spec::insert_words());
    let mut env = Env {
        cfg,
        lock: cfg.scratch.join("xtables.lock"),
        dir: cfg.scratch.clone(),
        session: Session::builder().lock_mode(LockMode::Never).open()?,
        bare: NlSocket::open()?,
        insert: parse::parse(&insert, Family::Ipv4)?,
    };
    let mut populated = 0;
    for &(n, iters) in &cfg.plan.sizes {
        env.progress(&format!("populating N = {n}"));
        env.populate(r, populated, n)?;
        populated = n;
        let start = Instant::now();
        // Iteration 0 checks every operation and is not recorded.
        for i in 0..=iters {
            let record = i > 0;
            for tool in super::Tool::ALL {
                for op in super::Op::ALL {
                    if op == Op::List && !tool.lists() {
                        continue;
                    }
                    settle()?;
                    let mut rt = None;
                    let (took, listed) = env.op(tool, op, &mut rt)?;
                    if !record {
                        env.check(tool, op, &listed)?;
                    }
                    if matches!(op, Op::Flush | Op::Insert) {
                        env.refill(tool)?;
                    }
                    if record {
                        r.samples.entry((op, tool, n)).or_default().push(took);
                        if let (Some(rt), Op::Setup | Op::Teardown) = (rt, op) {
                            let e = r.round_trips.entry(op).or_default();
                            *e = (*e).max(rt);
                        }
                    }
                }
            }
            env.floors(r, n, record)?;
        }
        r.notes.push(format!(
            "N = {n}: {iters} timed iterations (+1 checked, not timed) of every tool's \
             operations in {:.1} s",
            start.elapsed().as_secs_f64()
        ));
        env.progress(&format!(
            "N = {n} done in {:.1} s",
            start.elapsed().as_secs_f64()
        ));
        if n == cfg.plan.contention_at {
            let start = Instant::now();
            contention::run(&mut env, r)?;
            r.notes.push(format!(
                "contention (at N = {n}): {:.1} s",
                start.elapsed().as_secs_f64()
            ));
        }
    }
    Ok(())
}
