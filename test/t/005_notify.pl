# Events: a session that LISTENs on channel memtx receives a small JSON
# payload for commit outcomes, quarantines for review, revocations and their
# cascades, aborts and expiries (the last sent by the background worker).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JSON::PP;
use Time::HiRes qw(usleep);
use MemtxTest;

my $node = memtx_node('notify', 'memtx.lease_timeout' => '2');
ok(wait_for_worker($node), 'worker runs');
my $long = "SET memtx.lease_timeout = '1h';";

my $listener = $node->background_psql('postgres');
$listener->query_safe('LISTEN memtx');

my @events;

# Collects what the listener received so far.
sub drain
{
	for my $p (notifications($listener->query_safe('SELECT 1')))
	{
		my $e = eval { decode_json($p) };
		ok(0, "payload is JSON: $p") unless $e;
		push @events, $e if $e;
	}
}

sub find_event
{
	my ($pred) = @_;
	return (grep { $pred->($_) } @events)[0];
}

sub wait_event
{
	my ($pred) = @_;
	for (1 .. 150)
	{
		drain();
		my $e = find_event($pred);
		return $e if $e;
		usleep(200_000);
	}
	return undef;
}

$node->safe_psql('postgres',
	"SELECT memtx.register_source('crm', 0.7), memtx.register_source('web', 0.7)");

# A commit.
my $tx1 = $node->safe_psql('postgres', "$long SELECT memtx.begin()");
my $r1 = $node->safe_psql('postgres',
	qq{$long SELECT memtx.stage($tx1, 'acme', 'ceo', '"Ada"', source => 'crm')});
my $r1d = $node->safe_psql('postgres',
	qq{$long SELECT memtx.stage($tx1, 'acme', 'ceo_mail', '"ada\@acme.test"', derived_from => ARRAY[$r1]::bigint[])});
$node->safe_psql('postgres', "$long SELECT count(*) FROM memtx.commit($tx1)");
my $e = wait_event(sub { $_[0]{event} eq 'commit' && ($_[0]{tx} // 0) == $tx1 });
ok($e, 'commit event received');
is($e && $e->{reason}, 'committed', 'commit event carries the outcome');

# A quarantine for review: equal authority, different sources, other value.
my $tx2 = $node->safe_psql('postgres', "$long SELECT memtx.begin()");
my $r2 = $node->safe_psql('postgres',
	qq{$long SELECT memtx.stage($tx2, 'acme', 'ceo', '"Bob"', source => 'web')});
is( $node->safe_psql('postgres',
		"$long SELECT reason FROM memtx.commit($tx2) WHERE record_id = $r2"),
	'needs_review', 'the rival is quarantined for review');
$e = wait_event(sub { $_[0]{event} eq 'commit' && ($_[0]{tx} // 0) == $tx2 });
ok($e, 'commit event for the transaction whose record went to review');
ok( wait_event(
		sub {
			($_[0]{record} // 0) == $r2
			  && ($_[0]{event} =~ /review|quarantin/
				|| ($_[0]{reason} // '') eq 'needs_review');
		}),
	'quarantine-for-review event names the record');

# A revocation and its cascade.
$node->safe_psql('postgres', "SELECT count(*) FROM memtx.revoke($r1, 'wrong person')");
$e = wait_event(sub { ($_[0]{record} // 0) == $r1 && $_[0]{event} =~ /cascade|revoke/ });
ok($e, 'revocation/cascade event names the root record');
is($e && $e->{reason}, 'revoked', 'with reason revoked');
ok($e && ($e->{count} // 0) >= 2, 'and counts the root and its repaired descendant');

# An abort.
my $tx3 = $node->safe_psql('postgres', "$long SELECT memtx.begin()");
$node->safe_psql('postgres', qq{$long SELECT memtx.stage($tx3, 'acme', 'hq', '"Paris"')});
$node->safe_psql('postgres', "$long SELECT count(*) FROM memtx.abort($tx3)");
ok(wait_event(sub { $_[0]{event} eq 'aborted' && ($_[0]{tx} // 0) == $tx3 }),
	'abort event received');

# An expiry, done by the worker.
my $tx4 = $node->safe_psql('postgres', 'SELECT memtx.begin()');
$node->safe_psql('postgres', qq{SELECT memtx.stage($tx4, 'acme', 'hq', '"Rome"')});
$e = wait_event(sub { $_[0]{event} eq 'expired' && ($_[0]{tx} // 0) == $tx4 });
ok($e, 'expiry event received from the worker');
is($e && $e->{reason}, 'expired', 'with reason expired');

# Every payload is small and says what happened.
ok((!grep { !defined $_->{event} || !(defined $_->{tx} || defined $_->{record}) } @events),
	'every payload has an event and a tx or record');

# Any role may LISTEN: payloads carry ids, counts and protocol codes only,
# never a value, entity, attribute, namespace or role name.
my %allowed = map { $_ => 1 } qw(event tx record reason count);
my @extra = map { my $e = $_; grep { !$allowed{$_} } keys %$e } @events;
is(join(',', @extra), '', 'payloads carry only event, tx, record, reason and count');
ok((!grep { my $e = $_; grep { defined $e->{$_} && $e->{$_} !~ /^\d+$/ } qw(tx record count) } @events),
	'ids and counts are numbers');

$listener->quit;
$node->stop;
done_testing();
