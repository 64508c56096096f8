# Expiry keeps its promise (lease + one worker cycle) in every namespace
# whose lock is free, while a writer idle in its SQL transaction holds the
# lock of another namespace; that namespace's expired transactions go as
# soon as the idle writer ends.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use MemtxTest;

my $lease = 2;
my $naptime = 1;
my $node = memtx_node(
	'held',
	'memtx.lease_timeout' => $lease,
	'memtx.worker_naptime' => $naptime);
ok(wait_for_worker($node), 'worker runs');

my $long = "SET memtx.lease_timeout = '1h';";

# A writer in namespace "held" stages and stays idle in its SQL transaction.
my $idle = $node->background_psql('postgres');
$idle->query_safe($long);
my $txi = $idle->query_safe("SELECT memtx.begin(namespace => 'held')");
$idle->query_safe('BEGIN');
$idle->query_safe(qq{SELECT memtx.stage($txi, 'order:1', 'note', '"pending"')});

# Two agents abandon a staged record each: one in "held", one in "free".
my %tx;
for my $ns (qw(held free))
{
	$tx{$ns} = $node->safe_psql('postgres', "SELECT memtx.begin(namespace => '$ns')");
	$node->safe_psql('postgres',
		qq{SELECT memtx.stage($tx{$ns}, 'customer', 'email', '"a\@example.org"')});
}
my $abandoned_at = time;

sub status_of
{
	my ($tx) = @_;
	return $node->safe_psql('postgres',
		"SELECT status || '|' || coalesce(end_reason, '') FROM memtx.transactions WHERE id = $tx");
}

# "free" expires within lease + a cycle (+ the one-second wait on "held").
my $limit = $lease + $naptime + 1 + 3;   # 3 s slack for load
my $expired_at;
while (time < $abandoned_at + 30)
{
	if (status_of($tx{free}) eq 'aborted|expired') { $expired_at = time; last; }
	usleep(100_000);
}
ok(defined $expired_at, 'the transaction in the free namespace expires');
ok( defined $expired_at && $expired_at - $abandoned_at <= $limit,
	sprintf('within lease + one cycle + the lock wait (%.1fs, limit %.1fs)',
		($expired_at // time) - $abandoned_at, $limit));

# A few more cycles: the held namespace's abandoned transaction stays open,
# and its writers on other slots are not held up by the expiry attempts.
sleep($naptime * 3);
is(status_of($tx{held}), 'open|', 'the held namespace is skipped while its writer is idle');
my $txw = $node->safe_psql('postgres', "$long SELECT memtx.begin(namespace => 'held')");
$node->safe_psql('postgres', qq{$long SELECT memtx.stage($txw, 'order:2', 'note', '"shipped"')});
is( $node->safe_psql('postgres',
		"$long SET lock_timeout = '5s'; SELECT state FROM memtx.commit($txw)"),
	'committed',
	'another writer of the held namespace commits meanwhile');
like(slurp_file($node->logfile), qr/memtx expiry skipped namespace "held": its lock is held/,
	'the worker logs that it skipped the held namespace');

# The idle writer ends: the held namespace's expired transaction goes.
$idle->query_safe('COMMIT');
$idle->quit;
my $released_at = time;
my $held_expired;
while (time < $released_at + 30)
{
	if (status_of($tx{held}) eq 'aborted|expired') { $held_expired = time; last; }
	usleep(100_000);
}
ok(defined $held_expired, 'the held namespace expires once the writer ends');
ok( defined $held_expired && $held_expired - $released_at <= $naptime + 1 + 3,
	sprintf('within one cycle (%.1fs)', ($held_expired // time) - $released_at));
is($node->safe_psql('postgres', 'SELECT count(*) FROM memtx.check_invariants()'),
	'0', 'invariants hold');

$node->stop;
done_testing();
