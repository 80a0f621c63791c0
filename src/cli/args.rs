//! The grammar of xtnl's own commands, in clap's derive (issue 21): per-command help, usage
//! errors that name the bad word with a suggestion (status 2), and the single definition the
//! shell completions and the man page are checked against (`cli::args::tests`).
//!
//! Not here: the iptables command line (a first word starting with `-`, or xtnl under an
//! iptables name), which stays iptables' own order-sensitive grammar and never reaches clap.
//! The global options `--backend`, `--netns`, `--policy-file` and `--audit` are taken off the
//! line before clap parses (they may stand anywhere); they are declared here for the help
//! and the completions.
//!
//! `list`, `apply`, `doctor` and `help` take the typed values parsed here. The other
//! commands' words, once clap accepted them, go to that command's reader (`saveopts`, shared
//! with iptables-restore/-save under their names; `nathost`; `serve`), which turns them into
//! the typed request and checks what clap cannot say (a required option of one layout, value
//! syntax).

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use xtnl::lock::WaitPolicy;

/// xtnl's own commands.
#[derive(Parser, Debug)]
#[command(
    name = "xtnl",
    bin_name = "xtnl",
    disable_help_subcommand = true,
    disable_version_flag = true,
    about = "Linux firewall changes straight through nf_tables netlink"
)]
pub(crate) struct Cli {
    /// nf_tables as iptables-nft, x_tables as iptables-legacy, or whichever the host's
    /// iptables command is (default $XTNL_BACKEND, else auto)
    #[arg(long, global = true, value_name = "BACKEND", value_parser = ["nft", "legacy", "auto"])]
    pub backend: Option<String>,
    /// run in that network namespace (`ip netns` names under /run/netns, or a path)
    #[arg(long, global = true, value_name = "NAME|PATH")]
    pub netns: Option<String>,
    /// check every change against this policy (default $XTNL_POLICY, else
    /// /etc/xtnl/policy.toml if it exists)
    #[arg(long, global = true, value_name = "FILE")]
    pub policy_file: Option<String>,
    /// where the audit line of each change goes (default $XTNL_AUDIT, else syslog)
    #[arg(long, global = true, value_name = "TARGET", value_parser = ["syslog", "stderr", "off"])]
    pub audit: Option<String>,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// One of xtnl's own commands.
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Set up and tear down a NAT reservation in a scratch network namespace, printing each
    /// step and its time
    Demo,
    /// Print tables, chains and rules (nft's words); a named table or chain that does not
    /// exist is an error
    List(ListArgs),
    /// Apply an iptables-restore file (standard input without FILE); all of it is one atomic
    /// transaction
    Restore(RestoreArgs),
    /// Print iptables' tables in iptables-save format (or JSON)
    Save(SaveArgs),
    /// Apply a JSON document of transactions (xtnl-apply(5)); prints a JSON result
    Apply(ApplyArgs),
    /// nft's JSON subset (also under the name nft): -j -f FILE|- applies an nftables JSON
    /// document as one transaction; -j list ... prints what nft -j list prints
    #[command(disable_help_flag = true)]
    Nft(NftArgs),
    /// Take JSON-lines requests (apply documents, listings, NAT-host operations, iptables
    /// command lines) on standard input or a unix socket, one response line each
    Serve(ServeArgs),
    /// Say what this host has (nf_tables, x_tables, the lock file, the policy, the binary's
    /// privileges, the iptables alternatives) and what xtnl will do; a hint for each thing that
    /// will fail
    Doctor,
    /// NAT reservations: a chain per reservation, jumped to from the entry chain
    Reservation {
        /// What to do.
        #[command(subcommand)]
        action: ReservationCmd,
    },
    /// Port forwards (DNAT rules) of a reservation
    Forward {
        /// What to do.
        #[command(subcommand)]
        action: ForwardCmd,
    },
    /// Delete every rule jumping to CHAIN, flush it, delete it
    Teardown(TeardownArgs),
    /// Remove every PREFIX* chain not kept, with the jumps to it
    Sweep(SweepArgs),
    /// The NAT host's one-time rules
    Host {
        /// What to do.
        #[command(subcommand)]
        action: HostCmd,
    },
    /// Move every reservation between the layouts, one transaction
    Migrate(MigrateArgs),
    /// Print the version (also -V, --version)
    Version,
    /// Print the help (also -h, --help); `help COMMAND` prints that command's
    Help {
        /// The command whose help to print.
        #[arg(value_name = "COMMAND")]
        command: Vec<String>,
    },
}

/// `xtnl list`.
#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    /// ip, ip6 or inet (default: every family)
    pub family: Option<String>,
    /// only this table
    pub table: Option<String>,
    /// only this chain of the table
    pub chain: Option<String>,
    /// print a JSON document instead of nft's words
    #[arg(long)]
    pub json: bool,
}

/// The address family of a command: `-4` (the default under the name xtnl) or `-6`.
#[derive(Args, Debug)]
pub(crate) struct FamilyArgs {
    /// IPv4 (iptables' tables)
    #[arg(short = '4', long = "ipv4", overrides_with = "ipv6")]
    pub ipv4: bool,
    /// IPv6 (ip6tables' tables)
    #[arg(short = '6', long = "ipv6", overrides_with = "ipv4")]
    pub ipv6: bool,
}

/// `-w [SECS]` as iptables has it: SECS only when the next word is a number (joined to the
/// option by [`join_wait`] before clap sees it, as clap cannot say "a value if numeric").
#[derive(Args, Debug)]
pub(crate) struct WaitArgs {
    /// wait for the xtables lock: at most SECS, or as long as it takes without SECS (default:
    /// $XTNL_LOCK_WAIT seconds, else 30)
    #[arg(
        short = 'w',
        long = "wait",
        value_name = "SECS",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ""
    )]
    pub wait: Option<String>,
}

impl WaitArgs {
    /// The lock wait asked for: at most SECS with `-w SECS`, as long as it takes with `-w`,
    /// the command's default (`$XTNL_LOCK_WAIT`, else 30 s) without it.
    pub fn policy(&self) -> xtnl::error::Result<WaitPolicy> {
        match self.wait.as_deref() {
            None => WaitPolicy::default_for_command(),
            Some("") => Ok(WaitPolicy::Forever),
            Some(n) => n
                .parse::<u64>()
                .map(|secs| WaitPolicy::Timeout(std::time::Duration::from_secs(secs)))
                .map_err(|_| {
                    xtnl::Error::InvalidInput(format!("--wait {n:?}: not a number of seconds"))
                }),
        }
    }
}

/// `xtnl restore` (iptables-restore's options).
#[derive(Args, Debug)]
pub(crate) struct RestoreArgs {
    /// the file to apply (standard input without it)
    #[arg(value_name = "FILE")]
    pub file: Option<String>,
    /// do not flush the tables the file names (add to them)
    #[arg(short = 'n', long)]
    pub noflush: bool,
    /// set the counters given in the file
    #[arg(short = 'c', long)]
    pub counters: bool,
    /// check the file, change nothing
    #[arg(short = 't', long)]
    pub test: bool,
    /// say what is done (on stderr), as iptables-restore -v
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// apply only this table of the file
    #[arg(short = 'T', long, value_name = "TABLE", allow_hyphen_values = true)]
    pub table: Option<String>,
    /// accepted and ignored, as iptables-nft does (xtnl loads no modules)
    #[arg(short = 'M', long, value_name = "CMD", allow_hyphen_values = true)]
    pub modprobe: Option<String>,
    /// accepted for iptables-restore's sake; the lock is polled at this interval
    #[arg(short = 'W', long, value_name = "USECS", allow_hyphen_values = true)]
    pub wait_interval: Option<String>,
    /// The lock wait.
    #[command(flatten)]
    pub wait: WaitArgs,
    /// The family.
    #[command(flatten)]
    pub family: FamilyArgs,
}

/// `xtnl save` (iptables-save's options).
#[derive(Args, Debug)]
pub(crate) struct SaveArgs {
    /// only this table
    #[arg(short = 't', long, value_name = "TABLE", allow_hyphen_values = true)]
    pub table: Option<String>,
    /// print the packet and byte counters
    #[arg(short = 'c', long)]
    pub counters: bool,
    /// write to FILE instead of standard output
    #[arg(short = 'f', long, value_name = "FILE", allow_hyphen_values = true)]
    pub file: Option<String>,
    /// accepted and ignored, as iptables-nft does
    #[arg(short = 'M', long, value_name = "CMD", allow_hyphen_values = true)]
    pub modprobe: Option<String>,
    /// say what is done (on stderr)
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// print a JSON document (tables, chains, rules) instead of iptables-save's text
    #[arg(long)]
    pub json: bool,
    /// The family.
    #[command(flatten)]
    pub family: FamilyArgs,
}

/// `xtnl nft`: nft's own option grammar, read by src/cli/nft.rs (these definitions give the
/// help, the completions and the man page check their options).
#[derive(Debug, Args)]
pub(crate) struct NftArgs {
    /// JSON (required: nft's text syntax is not supported)
    #[arg(short = 'j', long = "json")]
    pub json: bool,
    /// Handles (nft's JSON always has them)
    #[arg(short = 'a', long = "handle")]
    pub handle: bool,
    /// Numeric priorities (nft's JSON always has them)
    #[arg(short = 'y', long = "numeric-priority")]
    pub numeric_priority: bool,
    /// The document to apply in one transaction (- for standard input)
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub file: Option<String>,
    // The help is an attribute, not a doc comment: rustdoc would read `[FAMILY]` as a link.
    #[arg(
        help = "list ruleset|tables|chains|sets|maps [FAMILY], list table [FAMILY] NAME, list \
                chain|set|map [FAMILY] TABLE NAME",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub words: Vec<String>,
}

/// `xtnl apply`.
#[derive(Args, Debug)]
pub(crate) struct ApplyArgs {
    /// the JSON document (standard input without it, or when it is a dash)
    #[arg(value_name = "FILE")]
    pub file: Option<String>,
    /// The lock wait.
    #[command(flatten)]
    pub wait: WaitArgs,
}

/// `xtnl serve`.
#[derive(Args, Debug)]
#[command(
    after_help = "The global options --netns (the namespace of requests that name none), \
    --backend, --policy-file and --audit stand before or after `serve`. See docs/serve.md \
    and docs/schema/ for the requests."
)]
pub(crate) struct ServeArgs {
    /// requests on standard input, responses on standard output (as over ssh); exits 0 at
    /// the end of the input; the only mode of a privileged run
    #[arg(long)]
    pub stdio: bool,
    /// a unix socket (with systemd socket activation, the one systemd passes); each request
    /// runs under the policy entries for the caller's uid and groups (SO_PEERCRED)
    #[arg(long, value_name = "PATH", allow_hyphen_values = true)]
    pub socket: Option<String>,
    /// the socket file's mode (default 0660)
    #[arg(long, value_name = "OCTAL", allow_hyphen_values = true)]
    pub socket_mode: Option<String>,
    /// the socket file's owner
    #[arg(long, value_name = "USER|UID", allow_hyphen_values = true)]
    pub socket_owner: Option<String>,
    /// the socket file's group
    #[arg(long, value_name = "GROUP|GID", allow_hyphen_values = true)]
    pub socket_group: Option<String>,
    /// wait at most SECS for the xtables lock (default: as long as it takes)
    #[arg(short = 'w', long, value_name = "SECS", allow_hyphen_values = true)]
    pub wait: Option<String>,
    /// the longest request line (default and most: 16 MiB and a little)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub max_request_bytes: Option<String>,
    /// connections at once (default 256, lowered to what the descriptor limit allows); root
    /// has 16 more of its own
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub max_clients: Option<String>,
    /// connections of one uid at once (default: an eighth of --max-clients, at least 4)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub max_clients_per_uid: Option<String>,
    /// close a connection idle this long between requests (default 3600)
    #[arg(long, value_name = "SECS", allow_hyphen_values = true)]
    pub idle_timeout: Option<String>,
    /// a started request line must arrive whole, and a response be taken, within SECS
    /// (default 30)
    #[arg(long, value_name = "SECS", allow_hyphen_values = true)]
    pub line_timeout: Option<String>,
    /// requests waiting for the engine, all clients together (default 1024)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub queue: Option<String>,
    /// commit each request alone (default: the one-transaction requests of one caller that
    /// arrive together are one batch; if it fails, each is committed alone)
    #[arg(long)]
    pub no_group_commit: bool,
}

/// The options every NAT-host command takes.
#[derive(Args, Debug)]
pub(crate) struct NatCommon {
    /// The family.
    #[command(flatten)]
    pub family: FamilyArgs,
    /// the table (default nat; not with --layout map)
    #[arg(short = 't', long, value_name = "TABLE", allow_hyphen_values = true)]
    pub table: Option<String>,
    /// The lock wait.
    #[command(flatten)]
    pub wait: WaitArgs,
    /// print the report as JSON
    #[arg(long)]
    pub json: bool,
    /// chains: a chain per reservation in iptables' nat table (default); map: one element
    /// per forward of a DNAT map in table xtnl_nat (cost flat in the host's size)
    #[arg(long, value_name = "LAYOUT", value_parser = ["chains", "map"])]
    pub layout: Option<String>,
}

/// The comment options of the commands that write rules.
#[derive(Args, Debug)]
pub(crate) struct CommentArgs {
    /// the text each rule's comment starts with (default "xtnl: ")
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub comment_prefix: Option<String>,
    /// write no comments
    #[arg(long)]
    pub no_comments: bool,
}

/// `xtnl reservation ...`.
#[derive(Subcommand, Debug)]
pub(crate) enum ReservationCmd {
    /// Ensure the chain, one jump to it from the entry chain (PREROUTING) and each forward
    /// (a DNAT rule); idempotent, one atomic transaction
    Setup {
        /// the reservation's chain
        #[arg(value_name = "CHAIN")]
        chain: Option<String>,
        /// the chain that jumps to it (default PREROUTING)
        #[arg(long, value_name = "CHAIN", allow_hyphen_values = true)]
        entry: Option<String>,
        /// a forward: DNAT of PROTO/PORT (arriving on IFACE) to ADDR:PORT; repeatable
        #[arg(
            long,
            value_name = "[IFACE:]PROTO/PORT=ADDR:PORT",
            allow_hyphen_values = true
        )]
        forward: Vec<String>,
        /// the interface of the forwards that name none
        #[arg(short = 'i', long, value_name = "IFACE", allow_hyphen_values = true)]
        in_interface: Option<String>,
        /// The comments.
        #[command(flatten)]
        comments: CommentArgs,
        /// The options every NAT-host command takes.
        #[command(flatten)]
        common: NatCommon,
    },
}

/// `xtnl forward ...`.
#[derive(Subcommand, Debug)]
pub(crate) enum ForwardCmd {
    /// Add a forward (a DNAT rule) to a reservation's chain
    Add {
        /// the reservation's chain
        #[arg(value_name = "CHAIN")]
        chain: Option<String>,
        /// the forward
        #[arg(value_name = "[IFACE:]PROTO/PORT=ADDR:PORT")]
        spec: Option<String>,
        /// the interface, if the forward names none
        #[arg(short = 'i', long, value_name = "IFACE", allow_hyphen_values = true)]
        in_interface: Option<String>,
        /// The comments.
        #[command(flatten)]
        comments: CommentArgs,
        /// The options every NAT-host command takes.
        #[command(flatten)]
        common: NatCommon,
    },
    /// Remove a forward from a reservation's chain
    Remove {
        /// the reservation's chain
        #[arg(value_name = "CHAIN")]
        chain: Option<String>,
        /// the forward (its address checked when given)
        #[arg(value_name = "[IFACE:]PROTO/PORT[=ADDR:PORT]")]
        spec: Option<String>,
        /// The options every NAT-host command takes.
        #[command(flatten)]
        common: NatCommon,
    },
    /// Every forward of the map, with its reservation and counters (--layout map)
    List {
        /// The options every NAT-host command takes.
        #[command(flatten)]
        common: NatCommon,
    },
}

/// `xtnl teardown`.
#[derive(Args, Debug)]
pub(crate) struct TeardownArgs {
    /// the reservation's chain
    #[arg(value_name = "CHAIN")]
    pub chain: Option<String>,
    /// the chain that jumps to it (default PREROUTING)
    #[arg(long, value_name = "CHAIN", allow_hyphen_values = true)]
    pub entry: Option<String>,
    /// with --layout map: the reservation's forwards, so that the work is O(them), not
    /// O(host); repeatable
    #[arg(long, value_name = "[IFACE:]PROTO/PORT", allow_hyphen_values = true)]
    pub forward: Vec<String>,
    /// The options every NAT-host command takes.
    #[command(flatten)]
    pub common: NatCommon,
}

/// `xtnl sweep`.
#[derive(Args, Debug)]
pub(crate) struct SweepArgs {
    /// the prefix of the chains swept
    #[arg(long, value_name = "PREFIX", allow_hyphen_values = true)]
    pub prefix: Option<String>,
    /// the chains kept: names separated by commas, or @FILE with one a line
    #[arg(long, value_name = "NAME,...|@FILE", allow_hyphen_values = true)]
    pub keep: Option<String>,
    /// The options every NAT-host command takes.
    #[command(flatten)]
    pub common: NatCommon,
}

/// `xtnl host ...`.
#[derive(Subcommand, Debug)]
pub(crate) enum HostCmd {
    /// The one-time rules: masquerade (nat), accepts (filter)
    Setup {
        /// the interface toward the public network
        #[arg(long, value_name = "IFACE", allow_hyphen_values = true)]
        public_interface: Option<String>,
        /// the interface toward the reservations
        #[arg(long, value_name = "IFACE", allow_hyphen_values = true)]
        private_interface: Option<String>,
        /// the reservations' network
        #[arg(long, value_name = "NET", allow_hyphen_values = true)]
        private_network: Option<String>,
        /// the address the forwards arrive at
        #[arg(long, value_name = "ADDR", allow_hyphen_values = true)]
        public_address: Option<String>,
        /// the forwarded port ranges
        #[arg(long, value_name = "RANGE,...", allow_hyphen_values = true)]
        ports: Option<String>,
        /// the host chain's name (default xtnl-nat_host)
        #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
        chain: Option<String>,
        /// the text each rule's comment starts with (default "xtnl: ")
        #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
        comment_prefix: Option<String>,
        /// The options every NAT-host command takes.
        #[command(flatten)]
        common: NatCommon,
    },
}

/// `xtnl migrate`.
#[derive(Args, Debug)]
pub(crate) struct MigrateArgs {
    /// the layout to move to
    #[arg(long, value_name = "LAYOUT", value_parser = ["map", "chains"])]
    pub to: Option<String>,
    /// the reservations' chain prefix (default vcld-)
    #[arg(long, value_name = "PREFIX", allow_hyphen_values = true)]
    pub prefix: Option<String>,
    /// the entry chain (default PREROUTING)
    #[arg(long, value_name = "CHAIN", allow_hyphen_values = true)]
    pub entry: Option<String>,
    /// The comments.
    #[command(flatten)]
    pub comments: CommentArgs,
    /// The options every NAT-host command takes.
    #[command(flatten)]
    pub common: NatCommon,
}

/// The clap command of xtnl's own commands, as [`parse`] uses it: a flag given twice is not
/// an error (iptables' habit: the last one counts), and no command has a `help` subcommand
/// (`xtnl help COMMAND...` is xtnl's own).
pub(crate) fn command() -> clap::Command {
    fn override_self(c: clap::Command) -> clap::Command {
        c.args_override_self(true)
            .disable_help_subcommand(true)
            .mut_subcommands(override_self)
    }
    override_self(Cli::command())
}

/// `-w SECS` / `--wait SECS` become `--wait=SECS` when SECS is a number (iptables' `-w [SECS]`
/// takes the next word only then). `serve`'s `--wait` always takes a value and is left alone.
pub(crate) fn join_wait(args: &[String]) -> Vec<String> {
    let serve = args.first().is_some_and(|a| a == "serve");
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        if !serve
            && (a == "-w" || a == "--wait")
            && let Some(n) = it.next_if(|n| n.parse::<u64>().is_ok())
        {
            out.push(format!("--wait={n}"));
        } else {
            out.push(a.clone());
        }
    }
    out
}

/// Parses xtnl's own command line (after the global options were taken off); `args` starts
/// with the command word. A help request comes back as clap's `DisplayHelp` error.
pub(crate) fn parse(args: &[String]) -> std::result::Result<Cli, clap::Error> {
    let words = std::iter::once("xtnl".to_string()).chain(join_wait(args));
    let m = command().try_get_matches_from(words)?;
    Cli::from_arg_matches(&m)
}

/// The help of `xtnl help COMMAND...` (`None` for a command xtnl does not have).
pub(crate) fn help_of(path: &[String]) -> Option<String> {
    let mut cmd = command();
    cmd.build();
    let mut at = &mut cmd;
    for word in path {
        at = at.find_subcommand_mut(word)?;
    }
    Some(at.render_help().to_string())
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
