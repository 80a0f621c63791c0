//! `xtnl`: a thin binary over the library; see `xtnl help`.

fn main() {
    let mut argv = std::env::args();
    let program = argv.next().unwrap_or_default();
    let name = std::path::Path::new(&program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("xtnl")
        .to_owned();
    let args: Vec<String> = argv.collect();
    let status = match xtnl::cli::run(&name, &args) {
        Ok(status) => status,
        Err(e) => xtnl::cli::report(&e),
    };
    std::process::exit(status);
}
