package XtnlClient;
# A client of `xtnl serve` with Perl's core modules only (IO::Socket::UNIX, IPC::Open2,
# JSON::PP): one connection (a local socket, or `xtnl serve --stdio` started locally or over
# ssh) carries every request of the agent; each request is one JSON line, each response one
# line with the request's id. See docs/serve.md.
use strict;
use warnings;
use IO::Socket::UNIX;
use IPC::Open2;
use JSON::PP;

# XtnlClient->connect('/run/xtnl/xtnl.sock')
sub connect {
    my ($class, $path) = @_;
    my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path)
        or die "cannot connect to $path: $!\n";
    $s->autoflush(1);
    return bless { in => $s, out => $s, json => JSON::PP->new->canonical, next => 0 }, $class;
}

# XtnlClient->spawn('xtnl', 'serve', '--stdio') or ->spawn('ssh', 'nathost', 'xtnl serve --stdio')
sub spawn {
    my ($class, @cmd) = @_;
    my $pid = open2(my $from, my $to, @cmd);
    $to->autoflush(1);
    return bless { in => $from, out => $to, pid => $pid, json => JSON::PP->new->canonical,
                   next => 0 }, $class;
}

# Sends one request (a hash) and returns its response (a hash with ok, and error when not).
sub request {
    my ($self, $req) = @_;
    my $id = ++$self->{next};
    print { $self->{out} } $self->{json}->encode({ %$req, id => $id }), "\n"
        or die "xtnl serve went away: $!\n";
    my $line = readline($self->{in});
    die "xtnl serve closed the connection\n" unless defined $line;
    my $r = $self->{json}->decode($line);
    die "response $r->{id} to request $id\n" unless defined $r->{id} && $r->{id} == $id;
    return $r;
}

# The drop-in for `system('iptables', @args)`: returns iptables' exit status (0 ok, 1 kernel
# refused, 2 bad arguments, 4 resource problem) and, in list context, the output too.
sub iptables {
    my ($self, @args) = @_;
    # As strings: JSON::PP writes a scalar last used as a number as a JSON number.
    my $r = $self->request({ iptables => [map { "$_" } @args] });
    my $status = $r->{ok} ? 0 : $r->{error}{status};
    warn "iptables @args: $r->{error}{message}\n" unless $r->{ok};
    return wantarray ? ($status, $r->{output} // '') : $status;
}

# A reservation's set-up as one atomic transaction: its chain in table nat, the jump from
# PREROUTING with its comment, and DNAT forwards ({protocol, public_port, to, in_interface}).
sub setup_reservation {
    my ($self, $chain, $comment, @forwards) = @_;
    return $self->request({ operations => [{
        op => 'reservation_setup', chain => $chain, jump_comment => $comment,
        forwards => [@forwards] }] });
}

# Its teardown, as one transaction: the jump, the chain's rules and the chain.
sub teardown_reservation {
    my ($self, $chain) = @_;
    return $self->request({ operations => [{ op => 'teardown', chain => $chain }] });
}

sub close {
    my ($self) = @_;
    close $self->{out};
    waitpid($self->{pid}, 0) if $self->{pid};
    return $self->{pid} ? $? >> 8 : 0;
}

1;
