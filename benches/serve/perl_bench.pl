#!/usr/bin/perl
# The NAT host agent's calls from Perl, timed: N reservation set-ups (each followed by one
# single iptables command on it), then N teardowns back to back. Four ways:
#   socket PATH   xtnl serve over its unix socket (clients/perl/XtnlClient.pm)
#   stdio XTNL    xtnl serve --stdio, started once
#   xtnl XTNL     one xtnl process per call (`xtnl apply` with the same documents)
#   iptables CMD  the agent's iptables commands through CMD (iptables-nft)
# Writes {"setup": [ms...], "single": [...], "teardown": [...], "failures": n} to OUT.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../../clients/perl";
use XtnlClient;
use JSON::PP;
use Time::HiRes qw(time);

my ($mode, $where, $n, $out) = @ARGV;
my $json = JSON::PP->new->canonical;
my (@setup, @single, @teardown);
my $failures = 0;
my $x = $mode eq 'socket' ? XtnlClient->connect($where)
      : $mode eq 'stdio'  ? XtnlClient->spawn($where, 'serve', '--stdio')
      : undef;

sub chain { "vcld-$_[0]" }
sub setup_op {
    my ($i) = @_;
    return { op => 'reservation_setup', chain => chain($i), jump_comment => 'VCL: jump to ' . chain($i),
             forwards => [{ protocol => 'tcp', public_port => 10000 + $i, to => '192.0.2.3:3389',
                            in_interface => 'eth1' }] };
}
sub single_args { ('-t', 'nat', '-A', chain($_[0]), '-p', 'udp', '--dport', 20000 + $_[0],
                   '-j', 'DNAT', '--to-destination', '192.0.2.4:53') }
sub run_quiet {
    my (@cmd) = @_;
    my $pid = fork() // die "fork: $!";
    if ($pid == 0) { open(STDOUT, '>', '/dev/null'); open(STDERR, '>', '/dev/null'); exec(@cmd) or exit 127 }
    waitpid($pid, 0);
    return $? >> 8;
}
sub apply_quiet {
    my ($xtnl, $doc) = @_;
    my $pid = open(my $p, '|-') // die "fork: $!";
    if ($pid == 0) { open(STDOUT, '>', '/dev/null'); exec($xtnl, 'apply') or exit 127 }
    print $p $json->encode($doc);
    close $p;
    return $? >> 8;
}
sub timed { my ($code) = @_; my $t = time; my $ok = $code->(); $failures++ unless $ok; return (time - $t) * 1000 }

for my $i (1 .. $n) {
    if ($x) {
        push @setup, timed(sub { $x->request({ operations => [setup_op($i)] })->{ok} });
        push @single, timed(sub { $x->iptables(single_args($i)) == 0 });
    } elsif ($mode eq 'xtnl') {
        push @setup, timed(sub { apply_quiet($where, { transactions => [{ operations => [setup_op($i)] }] }) == 0 });
        push @single, timed(sub { run_quiet($where, single_args($i)) == 0 });
    } else {
        my $c = chain($i);
        push @setup, timed(sub {
            run_quiet($where, '-t', 'nat', '-N', $c) == 0
            && run_quiet($where, '-t', 'nat', '-I', 'PREROUTING', '-j', $c, '-m', 'comment', '--comment', "VCL: jump to $c") == 0
            && run_quiet($where, '-t', 'nat', '-A', $c, '-i', 'eth1', '-p', 'tcp', '--dport', 10000 + $i,
                         '-j', 'DNAT', '--to-destination', '192.0.2.3:3389') == 0 });
        push @single, timed(sub { run_quiet($where, single_args($i)) == 0 });
    }
}
for my $i (1 .. $n) {
    my $c = chain($i);
    if ($x) {
        push @teardown, timed(sub { $x->teardown_reservation($c)->{ok} });
    } elsif ($mode eq 'xtnl') {
        push @teardown, timed(sub { apply_quiet($where, { transactions => [{ operations => [{ op => 'teardown', chain => $c }] }] }) == 0 });
    } else {
        push @teardown, timed(sub {
            run_quiet($where, '-t', 'nat', '-D', 'PREROUTING', '-j', $c, '-m', 'comment', '--comment', "VCL: jump to $c") == 0
            && run_quiet($where, '-t', 'nat', '-F', $c) == 0
            && run_quiet($where, '-t', 'nat', '-X', $c) == 0 });
    }
}
$x->close if $x;
open(my $f, '>', $out) or die "$out: $!";
print $f $json->encode({ setup => \@setup, single => \@single, teardown => \@teardown, failures => $failures });
close $f;
