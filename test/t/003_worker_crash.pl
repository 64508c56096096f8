# kill -9 of a memtx worker (and of the launcher) is a backend crash: the
# postmaster reinitializes and restarts the workers; nothing committed is
# lost, and the restarted worker goes on expiring abandoned transactions.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MemtxTest;

my $node = memtx_node(
	'crash',
	'restart_after_crash' => 'on',
	'memtx.lease_timeout' => '2');
my $pid = wait_for_worker($node);
ok($pid, 'worker runs');

# Committed work: 5 transactions of 4 records, each derived from the first.
my $long = "SET memtx.lease_timeout = '1h';";
my @committed;
for my $i (1 .. 5)
{
	my $ids = $node->safe_psql(
		'postgres', qq{$long
		SELECT memtx.begin() AS tx \\gset
		SELECT memtx.stage(:tx, 'doc$i', 'title', '"t$i"') AS root \\gset
		SELECT memtx.stage(:tx, 'doc$i', 'part' || g, to_jsonb(g), derived_from => ARRAY[:root]::bigint[])
		  FROM generate_series(1, 3) g;
		SELECT string_agg(record_id::text, ',' ORDER BY record_id) FROM memtx.commit(:tx) WHERE state = 'committed';
	});
	push @committed, split /,/, (split /\n/, $ids)[-1];
}
is(scalar @committed, 20, '20 records committed');

# An agent that will never come back.
my $txa = $node->safe_psql('postgres', 'SELECT memtx.begin()');
my $ra = $node->safe_psql('postgres',
	qq{SELECT memtx.stage($txa, 'doc1', 'owner', '"nobody"')});

my $committed_sql =
  "SELECT string_agg(id::text, ',' ORDER BY id) FROM memtx.records WHERE state = 'committed' AND id IN ("
  . join(',', @committed) . ')';

sub check_after_crash
{
	my ($what) = @_;
	is($node->safe_psql('postgres', $committed_sql),
		join(',', sort { $a <=> $b } @committed),
		"$what: every committed record is still committed");
	is( $node->safe_psql('postgres',
			"SELECT count(*) FROM memtx.edges WHERE child IN (" . join(',', @committed) . ')'),
		'15', "$what: their derivation edges are intact");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM memtx.check_invariants()'),
		'0', "$what: invariants hold");
}

# kill -9 the worker.
my $log_offset = -s $node->logfile;
kill 'KILL', $pid or die "could not kill worker $pid: $!";
ok( $node->wait_for_log(
		qr/background worker "memtx worker" \(PID $pid\) was terminated by signal 9/,
		$log_offset),
	'postmaster noticed the killed worker');
ok($node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset),
	'postmaster reinitialized after the crash');
my $new = wait_for_new_worker($node, $pid);
ok($new, 'worker restarted after kill -9');
check_after_crash('after kill -9 of the worker');

# The restarted worker does its job: the abandoned transaction is expired.
ok( $node->poll_query_until(
		'postgres',
		"SELECT status = 'aborted' AND end_reason = 'expired' FROM memtx.transactions WHERE id = $txa"
	),
	'restarted worker expires the abandoned transaction');
is($node->safe_psql('postgres', "SELECT state || '|' || reason FROM memtx.records WHERE id = $ra"),
	'revoked|expired', 'its staging is revoked');

# kill -9 the launcher: same story, and still one worker per database.
my $lpid = launcher_pid($node);
$log_offset = -s $node->logfile;
kill 'KILL', $lpid or die "could not kill launcher $lpid: $!";
ok( $node->wait_for_log(
		qr/background worker "memtx launcher" \(PID $lpid\) was terminated by signal 9/,
		$log_offset),
	'postmaster noticed the killed launcher');
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'memtx launcher' AND pid <> $lpid"
	),
	'launcher restarted after kill -9');
ok(wait_for_new_worker($node, $new), 'exactly one worker again');
check_after_crash('after kill -9 of the launcher');

$node->stop;
done_testing();
