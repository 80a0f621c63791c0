#!/usr/bin/perl
# A NAT host agent's reservation set-up and teardown through `xtnl serve`, in the two styles
# an agent can use: the iptables commands it runs today, one request each (--iptables), or
# one atomic operation each. Prints every response line; exits 0 when all were ok.
#
#   reservation.pl (--socket PATH | --stdio XTNL) [--iptables] setup CHAIN IF PUBLIC_PORT ADDR:PORT
#   reservation.pl (--socket PATH | --stdio XTNL) [--iptables] teardown CHAIN
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use XtnlClient;
use JSON::PP;

my ($how, $where) = splice(@ARGV, 0, 2);
my $style = $ARGV[0] eq '--iptables' ? shift(@ARGV) : 'ops';
my ($what, $chain, @rest) = @ARGV;
die "usage: $0 (--socket PATH | --stdio XTNL) [--iptables] setup|teardown CHAIN ...\n"
    unless defined $chain;
my $x = $how eq '--socket' ? XtnlClient->connect($where) : XtnlClient->spawn($where, 'serve', '--stdio');
my $ok = 1;
my $json = JSON::PP->new->canonical;
my $say = sub { my ($r) = @_; print $json->encode($r), "\n"; $ok &&= $r->{ok} ? 1 : 0 };

if ($style eq '--iptables') {
    my @cmds;
    if ($what eq 'setup') {
        my ($if, $port, $to) = @rest;
        @cmds = (['-t', 'nat', '-N', $chain],
                 ['-t', 'nat', '-I', 'PREROUTING', '-j', $chain, '-m', 'comment', '--comment', "VCL: jump to $chain"],
                 ['-t', 'nat', '-A', $chain, '-i', $if, '-p', 'tcp', '--dport', $port,
                  '-j', 'DNAT', '--to-destination', $to]);
    } else {
        @cmds = (['-t', 'nat', '-D', 'PREROUTING', '-j', $chain, '-m', 'comment', '--comment', "VCL: jump to $chain"],
                 ['-t', 'nat', '-F', $chain], ['-t', 'nat', '-X', $chain]);
    }
    $say->($x->request({ iptables => $_ })) for @cmds;
} elsif ($what eq 'setup') {
    my ($if, $port, $to) = @rest;
    $say->($x->setup_reservation($chain, "VCL: jump to $chain",
        { protocol => 'tcp', public_port => $port + 0, to => $to, in_interface => $if }));
} else {
    $say->($x->teardown_reservation($chain));
}
my $status = $x->close;
exit($ok && $status == 0 ? 0 : 1);
