//! `xtnl`: a thin binary over the library; see `xtnl help`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let status = match xtnl::cli::run(&args) {
        Ok(status) => status,
        Err(e) => xtnl::cli::report(&e),
    };
    std::process::exit(status);
}
