//! `xtnl`: a thin binary over the library; see `xtnl help`.
#![deny(unsafe_code)]

// The command line is the binary's, not the library's (issue 14).
mod cli;
mod scratch;

fn main() {
    let mut argv = std::env::args_os();
    let program = argv.next().unwrap_or_default();
    let name = std::path::Path::new(&program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("xtnl")
        .to_owned();
    // `std::env::args` would panic on an argument that is not UTF-8; refuse it instead.
    let args: Result<Vec<String>, _> = argv
        .enumerate()
        .map(|(i, a)| {
            a.into_string().map_err(|a| {
                xtnl::Error::InvalidInput(format!(
                    "argument {} is not valid UTF-8: {:?}",
                    i + 1,
                    a.to_string_lossy()
                ))
            })
        })
        .collect();
    // `xtnl iptables ARGS` runs as `iptables ARGS`, as `xtables-nft-multi iptables` does.
    let (name, args) = match args {
        Ok(mut a)
            if cli::dropin::identify(&name).is_none()
                && a.first()
                    .is_some_and(|f| cli::dropin::identify(f).is_some()) =>
        {
            (a.remove(0), Ok(a))
        }
        other => (name, other),
    };
    // Under the name `nft`: nft's JSON subset, as `xtnl nft` (issue 26).
    let (name, args) = match args {
        Ok(mut a) if name == "nft" => {
            a.insert(0, "nft".into());
            ("xtnl".to_owned(), Ok(a))
        }
        other => (name, other),
    };
    // `iptables-xml` is a text filter: no backend, no privilege, no server (issue 24).
    if let Ok(a) = &args {
        if name == "iptables-xml" {
            std::process::exit(cli::xml::main(&name, a));
        }
        if cli::dropin::identify(&name).is_none() && a.first().is_some_and(|f| f == "iptables-xml")
        {
            std::process::exit(cli::xml::main("iptables-xml", &a[1..]));
        }
    }
    // Under an iptables name, through a running `xtnl serve` when it may (cli/thin.rs).
    if let Ok(a) = &args
        && let Some(status) = cli::thin::forward(&name, a)
    {
        std::process::exit(status);
    }
    let status = match args.and_then(|args| cli::run(&name, &args)) {
        Ok(status) => status,
        Err(e) => cli::report_as(&name, &e),
    };
    std::process::exit(status);
}
