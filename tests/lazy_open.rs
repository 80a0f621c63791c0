//! `backend::Call` (one call that opens a backend, runs a command and closes it) and the
//! lazily opened backends it uses (`SessionBuilder::open_lazily_in`, x_tables' socket made
//! on first use): the command reaches the kernel of the namespace it runs in, an unused lazy
//! session closes without a socket, and x_tables' refusals come before anything is opened.
//! Each test runs in a network namespace of its own (as root).

mod common;

use xtnl::backend::{Backend, Call};
use xtnl::lock::{LockMode, WaitPolicy, XtablesLock};
use xtnl::model::Family;
use xtnl::nft::{Session, TableRef};
use xtnl::seam::Enforcement;

fn args(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

fn call(backend: Backend, family: Family, enforcement: &Enforcement) -> Call<'_> {
    let lock = XtablesLock::new(common::private_lock_path(), WaitPolicy::FailFast);
    Call {
        backend,
        family,
        enforcement,
        netns: None,
        lock,
        mode: LockMode::Always,
    }
}

#[test]
fn a_lazy_session_opens_its_socket_where_it_is_first_used() {
    common::in_netns(|| {
        // Made, never used: nothing to close.
        let unused = Session::builder()
            .lock_mode(LockMode::Never)
            .open_lazily_in(None);
        unused
            .close_detached()
            .expect("an unused lazy session closes");

        let mut lazy = Session::builder()
            .lock_mode(LockMode::Never)
            .open_lazily_in(None);
        let t = TableRef::new(Family::Ipv4, "lazy1");
        let mut tx = xtnl::nft::Transaction::new();
        tx.ensure_table(&t);
        lazy.commit(&tx).expect("first use opens the socket");
        let mut eager = Session::builder()
            .lock_mode(LockMode::Never)
            .open()
            .expect("session");
        let names: Vec<String> = eager
            .list_tables()
            .expect("list")
            .into_iter()
            .map(|t| t.table.name)
            .collect();
        assert!(names.contains(&"lazy1".to_string()), "{names:?}");
        lazy.close_detached().expect("close");
    });
}

#[test]
fn one_call_runs_an_iptables_command_on_either_backend() {
    common::in_netns(|| {
        let none = Enforcement::none();
        for backend in [Backend::Nft, Backend::Legacy] {
            let inv = xtnl::ipt::parse::parse(&args("-N LAZY"), Family::Ipv4).expect("parse");
            let out = call(backend, Family::Ipv4, &none)
                .execute(&inv)
                .expect("-N LAZY");
            assert_eq!(out, "", "{backend:?}");
            let inv = xtnl::ipt::parse::parse(&args("-S LAZY"), Family::Ipv4).expect("parse");
            let listed = call(backend, Family::Ipv4, &none)
                .execute(&inv)
                .expect("-S LAZY");
            assert_eq!(listed, "-N LAZY\n", "{backend:?}");
            // A second -N: the same refusal as iptables, from the kernel's table as read.
            let inv = xtnl::ipt::parse::parse(&args("-N LAZY"), Family::Ipv4).expect("parse");
            let err = call(backend, Family::Ipv4, &none)
                .execute(&inv)
                .expect_err("chain exists");
            assert!(err.to_string().contains("exist"), "{backend:?}: {err}");
        }
        // Each backend's chain is in its own kernel interface, as iptables-nft and
        // iptables-legacy see them.
        let nft = common::run_ok("iptables-nft", &["-S", "LAZY"]);
        assert_eq!(nft, "-N LAZY\n", "iptables-nft -S LAZY");
        let legacy = common::run_ok("iptables-legacy", &["-S", "LAZY"]);
        assert_eq!(legacy, "-N LAZY\n");
    });
}

#[test]
fn x_tables_refuses_inet_before_opening_anything() {
    common::in_netns(|| {
        let none = Enforcement::none();
        let inv = xtnl::ipt::parse::parse(&args("-S"), Family::Ipv4).expect("parse");
        let err = call(Backend::Legacy, Family::Inet, &none)
            .execute(&inv)
            .expect_err("inet has no x_tables");
        assert!(
            err.to_string().contains("no inet ones"),
            "the refusal of Legacy::open: {err}"
        );
    });
}
