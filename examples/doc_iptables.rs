use xtnl::ipt::{exec, parse};
use xtnl::model::Family;

fn main() -> Result<(), xtnl::Error> {
    let mut s = xtnl::nft::Session::open()?;
    let words =
        parse::split_words("-t nat -A PREROUTING -p tcp --dport 80 -j REDIRECT --to-ports 8080")?;
    let invocation = parse::parse(&words, Family::Ipv4)?;
    let printed = exec::execute(&mut s, &invocation)?; // what iptables would print ("" here)
    print!("{printed}");
    Ok(())
}
