//! The engine of `xtnl serve`: one thread that owns the long-lived nf_tables sessions (one
//! per network namespace) and executes every request, so commits are serialised whatever the
//! number of clients. Each request runs under its caller's policy and audit identity: the
//! sessions' guard and auditor look them up in `Current`, which the engine sets before
//! each request.

mod dropin;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::request::{Body, Request, error_response, response};
use crate::backend::{Backend, BackendChoice, Opened};
use crate::error::{Error, ErrorKind, Result};
use crate::ipt::parse as ipt_parse;
use crate::lock::{LockMode, WaitPolicy, XtablesLock};
use crate::model::Family;
use crate::netns::Netns;
use crate::nft::{
    AuditOutcome, Auditor, Guard, Reader, Session, SessionBuilder, TableRef, Transaction,
};
use crate::policy::{Caller, Policy};

/// More namespaces than this with an open session: the idle ones are closed.
const MAX_SESSIONS: usize = 64;

/// Who sent a request, as the engine needs it.
#[derive(Debug, Clone)]
pub struct Peer {
    /// The caller (uid, groups); its `netns` is set per request.
    pub caller: Caller,
    /// Whether a policy applies (`false`: root's own service, or an undelegated stdio run
    /// without a policy file: everything is allowed).
    pub restricted: bool,
    /// Its audit lines' writer.
    pub auditor: Option<Arc<dyn Auditor>>,
}

/// The policy and auditor of the request being executed.
#[derive(Debug, Default)]
struct Current {
    policy: Option<Arc<Policy>>,
    auditor: Option<Arc<dyn Auditor>>,
}

#[derive(Debug, Clone)]
struct CurrentGuard(Arc<Mutex<Current>>);

impl CurrentGuard {
    fn policy(&self) -> Option<Arc<Policy>> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .policy
            .clone()
    }
}

impl Guard for CurrentGuard {
    fn check_transaction(&self, tx: &Transaction, reader: &mut Reader<'_>) -> Result<()> {
        match self.policy() {
            Some(p) => p.check_transaction(tx, reader),
            None => Ok(()),
        }
    }
    fn check_zero(&self, table: &TableRef, chain: Option<&str>) -> Result<()> {
        match self.policy() {
            Some(p) => crate::nft::Guard::check_zero(&*p, table, chain),
            None => Ok(()),
        }
    }
}

#[derive(Debug, Clone)]
struct CurrentAuditor(Arc<Mutex<Current>>);

impl Auditor for CurrentAuditor {
    fn record(
        &self,
        count: usize,
        ops: &mut dyn Iterator<Item = String>,
        outcome: AuditOutcome<'_>,
    ) {
        let a = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .auditor
            .clone();
        if let Some(a) = a {
            a.record(count, ops, outcome);
        }
    }
}

/// An auditor that does not record denials (a group commit's, see [`Engine::execute_group`]).
#[derive(Debug)]
struct NoDenials(Arc<dyn Auditor>);

impl Auditor for NoDenials {
    fn record(
        &self,
        count: usize,
        ops: &mut dyn Iterator<Item = String>,
        outcome: AuditOutcome<'_>,
    ) {
        if !matches!(outcome, AuditOutcome::Denied(_)) {
            self.0.record(count, ops, outcome);
        }
    }
    fn record_tx(&self, tx: &Transaction, outcome: AuditOutcome<'_>) {
        if !matches!(outcome, AuditOutcome::Denied(_)) {
            self.0.record_tx(tx, outcome);
        }
    }
}

/// The engine's settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// The backend of requests that name none (`--backend` of the service).
    pub backend: BackendChoice,
    /// How long a commit waits for the xtables lock.
    pub wait: WaitPolicy,
    /// The whole policy (filtered per caller and namespace for each request).
    pub policy: Option<Arc<Policy>>,
    /// The namespace of requests that name none (`--netns` of the service).
    pub default_netns: Option<Netns>,
    /// Open the xtables lock with `O_NOFOLLOW` (a delegated run).
    pub no_follow: bool,
}

/// Owns the sessions; executes requests one at a time.
pub struct Engine {
    config: Config,
    current: Arc<Mutex<Current>>,
    sessions: HashMap<Option<Netns>, Session>,
    /// Map-layout handles (their caches make an operation one round trip), per namespace
    /// and family.
    maps: HashMap<(Option<Netns>, Family), crate::nathost::map::MapLayout>,
    resolved: HashMap<Family, Backend>,
    /// Requests executed, for `ping`.
    pub executed: u64,
    /// Group commits made, and groups that failed and were split.
    pub groups: u64,
    /// Groups that could not commit together (planning, the policy or the kernel refused a
    /// part), whose requests then ran one by one.
    pub split_groups: u64,
}

/// What requests must share to be committed together (see [`Engine::group_key`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupKey {
    netns: Option<Netns>,
    family: Family,
    uid: u32,
    gids: Vec<u32>,
    restricted: bool,
}

impl Engine {
    /// An engine with no sessions yet (each namespace's is opened on its first request).
    pub fn new(config: Config) -> Engine {
        Engine {
            config,
            current: Arc::default(),
            sessions: HashMap::new(),
            maps: HashMap::new(),
            resolved: HashMap::new(),
            executed: 0,
            groups: 0,
            split_groups: 0,
        }
    }

    fn backend(&mut self, req: &Request, family: Family) -> Backend {
        if let Some(choice) = req.backend {
            return choice.resolve(family).0;
        }
        let choice = self.config.backend;
        *self
            .resolved
            .entry(family)
            .or_insert_with(|| choice.resolve(family).0)
    }

    /// The xtables lock commits take.
    fn lock(&self) -> XtablesLock {
        XtablesLock::from_env(self.config.wait).with_no_follow(self.config.no_follow)
    }

    /// A session held to the policy and audit of the request being executed (its guard and
    /// auditor look them up in `Current`), taking the lock around its commits.
    fn builder(&self) -> SessionBuilder {
        Session::builder()
            .lock(self.lock())
            .lock_mode(LockMode::Always)
            .guard(Some(Arc::new(CurrentGuard(self.current.clone()))))
            .auditor(Some(Arc::new(CurrentAuditor(self.current.clone()))))
    }

    /// The namespace's session, made on its first request and kept. Its socket is opened
    /// lazily, where the request first talks to the kernel (docs/architecture.md, "Three
    /// walks"): a failure to open it is that request's error, through whatever the request
    /// runs; an `apply` document opens it before its first transaction
    /// ([`Opened::connect`]), so that it is no transaction's failure.
    fn session(&mut self, netns: &Option<Netns>) -> Result<&mut Session> {
        if !self.sessions.contains_key(netns) {
            if self.sessions.len() >= MAX_SESSIONS {
                self.sessions.clear();
            }
            let s = self.builder().open_lazily_in(netns.as_ref());
            self.sessions.insert(netns.clone(), s);
        }
        self.sessions
            .get_mut(netns)
            .ok_or_else(|| Error::InvalidInput("no session".into()))
    }

    fn map_layout(
        &mut self,
        netns: &Option<Netns>,
        family: Family,
    ) -> Result<&mut crate::nathost::map::MapLayout> {
        let key = (netns.clone(), family);
        if !self.maps.contains_key(&key) {
            if self.maps.len() >= MAX_SESSIONS {
                self.maps.clear();
            }
            let s = self.builder().open_in(netns.as_ref())?;
            let h = crate::nathost::map::MapLayout::new(s, family);
            self.maps.insert(key.clone(), h);
        }
        self.maps
            .get_mut(&key)
            .ok_or_else(|| Error::InvalidInput("no map-layout handle".into()))
    }

    /// The backend chosen for `chosen_by` (the request's, else the service's), opened for
    /// `family`'s tables in `netns` and held to the policy and audit of the request being
    /// executed: nf_tables is the namespace's long-lived session, taken out of the engine
    /// until [`Engine::give_back`]; x_tables is opened with [`crate::backend::open`] and the
    /// request's enforcement.
    fn open(
        &mut self,
        req: &Request,
        netns: &Option<Netns>,
        chosen_by: Family,
        family: Family,
    ) -> Result<Opened> {
        match self.backend(req, chosen_by) {
            Backend::Nft => {
                self.session(netns)?;
                self.sessions
                    .remove(netns)
                    .map(Opened::Nft)
                    .ok_or_else(|| Error::InvalidInput("no session".into()))
            }
            backend => {
                let enforcement = {
                    let cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
                    crate::seam::Enforcement::new(cur.policy.clone(), cur.auditor.clone())
                };
                let lock = self.lock();
                crate::backend::open(
                    backend,
                    family,
                    &enforcement,
                    netns.as_ref(),
                    lock,
                    LockMode::Always,
                )
            }
        }
    }

    /// Ends a request's use of a backend [`Engine::open`] opened: the namespace's session
    /// goes back to the engine for the next request, if its socket is open (one the request
    /// could not open is not kept: the next request makes a new one, so that the engine
    /// keeps only opened sessions, as when it opened them before the request).
    fn give_back(&mut self, netns: &Option<Netns>, opened: Opened) {
        if let Opened::Nft(s) = opened
            && s.is_open()
        {
            self.sessions.insert(netns.clone(), s);
        }
    }

    /// `work` on the backend for `family`'s tables (see [`Engine::open`]).
    fn with_backend<T>(
        &mut self,
        req: &Request,
        netns: &Option<Netns>,
        family: Family,
        work: impl FnOnce(&mut Opened) -> Result<T>,
    ) -> Result<T> {
        let mut opened = self.open(req, netns, family, family)?;
        let result = work(&mut opened);
        self.give_back(netns, opened);
        result
    }

    /// Sets the policy and auditor for a request from `peer` in `netns`; refuses a
    /// restricted caller a namespace its policy has no entry for, or a path.
    fn enter(&mut self, peer: &Peer, netns: &Option<Netns>) -> Result<()> {
        // Records name the request's namespace, not the engine thread's.
        crate::policy::audit::set_netns(netns.as_ref().map(|n| n.path.as_path()));
        let mut cur = Current {
            policy: None,
            auditor: peer.auditor.clone(),
        };
        if peer.restricted {
            let caller = peer
                .caller
                .clone()
                .in_netns(netns.as_ref().map(|n| n.name.clone()));
            let Some(policy) = &self.config.policy else {
                return Err(Error::PolicyDenied(format!(
                    "uid {}: no policy file, so only root may use this service",
                    caller.uid
                )));
            };
            if let Some(ns) = netns {
                if !ns.is_named() {
                    return Err(Error::PolicyDenied(format!(
                        "network namespace {:?}: a caller under a policy names namespaces by \
                         their `ip netns` name, not by path",
                        ns.name
                    )));
                }
                if !policy.has_entries_for(&caller) {
                    return Err(Error::PolicyDenied(format!(
                        "policy {} has no entry for uid {} in network namespace {:?} (an \
                         entry's `netns` must name it)",
                        policy.path.display(),
                        caller.uid,
                        ns.name
                    )));
                }
            }
            cur.policy = Some(Arc::new(policy.for_caller(&caller)));
        }
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = cur;
        Ok(())
    }

    /// Executes one request; the response always carries its `id` and `ok`.
    pub fn execute(&mut self, req: &Request, peer: &Peer) -> Value {
        self.executed += 1;
        let netns = req
            .netns
            .clone()
            .or_else(|| self.config.default_netns.clone());
        let result = self
            .enter(peer, &netns)
            .and_then(|()| self.run(req, &netns));
        let v = match result {
            Ok(v) => v,
            Err(e) => {
                if e.kind() == ErrorKind::Io {
                    // The socket may be broken: the next request opens a fresh one.
                    self.sessions.remove(&netns);
                }
                error_response(&req.id, &e)
            }
        };
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Current::default();
        v
    }

    /// Whether `req` may share a group commit, and with which others: requests of one
    /// transaction on nf_tables, from callers of the same identity (so one policy check and
    /// one audit line are right for all), in the same namespace and family.
    pub fn group_key(&mut self, req: &Request, peer: &Peer) -> Option<GroupKey> {
        let Body::Apply(doc) = &req.body else {
            return None;
        };
        let [t] = doc.transactions.as_slice() else {
            return None;
        };
        if !self.backend(req, t.family).groups() || t.layout == crate::nathost::map::Layout::Map {
            return None;
        }
        let netns = req
            .netns
            .clone()
            .or_else(|| self.config.default_netns.clone());
        Some(GroupKey {
            netns,
            family: t.family,
            uid: peer.caller.uid,
            gids: peer.caller.gids.clone(),
            restricted: peer.restricted,
        })
    }

    /// Group commit: the operations of every request in one transaction (one batch, one
    /// commit, one reclaim), each request's response as if it had been committed alone. If
    /// the group fails (planning, the policy or the kernel refuses any part), each request
    /// is executed alone, so a bad request fails by itself and the others still commit.
    /// `reqs` share a [`GroupKey`].
    pub fn execute_group(&mut self, reqs: &[&Request], peer: &Peer) -> Vec<Value> {
        if reqs.len() > 1
            && let Some(v) = self.try_group(reqs, peer)
        {
            self.executed += reqs.len() as u64;
            self.groups += 1;
            return v;
        }
        if reqs.len() > 1 {
            self.split_groups += 1;
        }
        reqs.iter().map(|r| self.execute(r, peer)).collect()
    }

    fn try_group(&mut self, reqs: &[&Request], peer: &Peer) -> Option<Vec<Value>> {
        let docs: Vec<&crate::json::Document> = reqs
            .iter()
            .filter_map(|r| match &r.body {
                Body::Apply(d) => Some(d),
                _ => None,
            })
            .collect();
        let first = docs.first()?.transactions.first()?;
        let family = first.family;
        let ops: Vec<crate::nathost::Operation> = docs
            .iter()
            .flat_map(|d| d.transactions[0].operations.iter().cloned())
            .collect();
        let netns = reqs[0]
            .netns
            .clone()
            .or_else(|| self.config.default_netns.clone());
        self.enter(peer, &netns).ok()?;
        // A denial of the group is not recorded: its requests are then executed one by one,
        // and each denial (or commit) is recorded for the request it is.
        {
            let mut cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
            cur.auditor = cur
                .auditor
                .take()
                .map(|a| Arc::new(NoDenials(a)) as Arc<dyn Auditor>);
        }
        let result = self
            .session(&netns)
            .and_then(|s| crate::nathost::transact(s, family, &ops));
        if self.sessions.get(&netns).is_some_and(|s| !s.is_open()) {
            self.sessions.remove(&netns); // it could not open its socket (see `give_back`)
        }
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Current::default();
        let (mut results, attempts) = result.ok()?;
        let mut out = Vec::with_capacity(reqs.len());
        for (req, doc) in reqs.iter().zip(&docs) {
            let n = doc.transactions[0].operations.len();
            let mine: Vec<_> = results.drain(..n.min(results.len())).collect();
            let mut mine = Some(mine);
            let (v, status) =
                crate::json::apply_each(doc, |_| Ok((mine.take().unwrap_or_default(), attempts)));
            let mut r = response(&req.id, status == 0, v);
            r["status"] = json!(status);
            r["group"] = json!(reqs.len());
            out.push(r);
        }
        Some(out)
    }

    fn run(&mut self, req: &Request, netns: &Option<Netns>) -> Result<Value> {
        let id = &req.id;
        match &req.body {
            Body::Ping => Ok(response(
                id,
                true,
                json!({"pong": true, "server": {
                    "program": "xtnl", "version": env!("CARGO_PKG_VERSION"),
                    "pid": std::process::id(), "requests": self.executed,
                    "group_commits": self.groups, "split_groups": self.split_groups,
                }}),
            )),
            Body::Apply(doc) => {
                let family = doc.transactions.first().map_or(Family::Ipv4, |t| t.family);
                // One backend for the whole document, opened (its socket too) before
                // anything is sent (a failure to open is no transaction's failure, but the
                // request's error), once per family it serves (one nf_tables session serves
                // every family), held to the request's policy and audit whichever it is
                // (`Engine::open`).
                let mut opened: Vec<Opened> = Vec::new();
                for t in &doc.transactions {
                    if t.layout == crate::nathost::map::Layout::Chains
                        && !opened.iter().any(|o| o.serves(t.family))
                    {
                        let o = self.open(req, netns, family, t.family).and_then(|mut o| {
                            o.connect()?;
                            Ok(o)
                        });
                        match o {
                            Ok(o) => opened.push(o),
                            Err(e) => {
                                for o in opened {
                                    self.give_back(netns, o);
                                }
                                return Err(e);
                            }
                        }
                    }
                }
                let (result, status) = crate::json::apply_each(doc, |t| {
                    match opened.iter_mut().find(|o| o.serves(t.family)) {
                        // The map layout lives in nf_tables whatever the iptables backend,
                        // through a handle (its own session).
                        _ if t.layout == crate::nathost::map::Layout::Map => self
                            .map_layout(netns, t.family)?
                            .transact_operations(&t.operations),
                        Some(o) => o.transact(t.family, &t.operations),
                        None => Err(Error::InvalidInput(format!(
                            "no backend opened for {}",
                            t.family
                        ))),
                    }
                });
                for o in opened {
                    self.give_back(netns, o);
                }
                let mut r = response(id, status == 0, result);
                r["status"] = json!(status);
                Ok(r)
            }
            Body::Iptables(args) => self.iptables(req, netns, args),
            Body::Dropin(d) => self.dropin(req, netns, d),
            Body::List {
                family,
                table,
                chain,
            } => {
                let chains = self.with_backend(req, netns, *family, |b| {
                    b.lister().listings(*family, table, chain.as_deref())
                })?;
                let v = crate::json::listing_value(
                    *family,
                    vec![crate::json::table_value(table, &chains)],
                );
                Ok(response(id, true, v))
            }
            Body::Save { family, table } => {
                let v = self.with_backend(req, netns, *family, |b| {
                    crate::json::saved_listing(b.lister(), *family, table.as_deref())
                })?;
                Ok(response(id, true, v))
            }
        }
    }

    fn iptables(&mut self, req: &Request, netns: &Option<Netns>, args: &[String]) -> Result<Value> {
        let as_json = args.iter().any(|a| a == "--json");
        let args: Vec<String> = args.iter().filter(|a| *a != "--json").cloned().collect();
        let inv = ipt_parse::parse(&args, Family::Ipv4)?;
        if as_json {
            crate::json::listed_chain(&inv)?;
            let v = self.with_backend(req, netns, inv.family, |b| {
                crate::json::invocation_listing(b.lister(), &inv)
            })?;
            return Ok(response(&req.id, true, v));
        }
        let text = self.with_backend(req, netns, inv.family, |b| b.execute(&inv))?;
        Ok(response(
            &req.id,
            true,
            json!({"status": 0, "output": text}),
        ))
    }
}
