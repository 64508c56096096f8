# Leases: an agent that stages and disconnects without committing stops
# blocking the gate within lease + one worker cycle; its staging is revoked
# (reason expired) and what another open transaction derived from it is
# repaired.  Without the worker, memtx.expire_transactions() does the same
# on demand.
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
	'lease',
	'memtx.lease_timeout' => $lease,
	'memtx.worker_naptime' => $naptime);
ok(wait_for_worker($node), 'worker runs');
$node->safe_psql('postgres',
	"SELECT memtx.register_tool('send_email', reversible => false)");

# Agent A stages a record, then its session goes away without a commit.
my $a = $node->background_psql('postgres');
my $txa = $a->query_safe('SELECT memtx.begin()');
my $ra = $a->query_safe(
	qq{SELECT memtx.stage($txa, 'customer', 'email', '"a\@example.org"')});
$a->quit;
my $abandoned_at = time;

# Agent B, alive, derives from A's tentative record; C wants to act.
# Both keep long leases of their own.
my $long = "SET memtx.lease_timeout = '1h';";
my $txb = $node->safe_psql('postgres', "$long SELECT memtx.begin()");
my $rb = $node->safe_psql('postgres',
	qq{$long SELECT memtx.stage($txb, 'customer', 'greeting', '"hello"', derived_from => ARRAY[$ra]::bigint[])}
);
my $txc = $node->safe_psql('postgres', "$long SELECT memtx.begin()");
my $gate_sql =
  "$long SELECT allowed || '|' || coalesce(reason, '') || '|' || coalesce(array_to_string(blockers, ','), '') FROM memtx.gate($txc, 'send_email')";

my ($allowed, $reason, $blockers) =
  split /\|/, $node->safe_psql('postgres', $gate_sql), -1;
is($allowed, 'false', 'gate blocks the irreversible tool while A is in flight');
is($reason, 'in_flight_tentative', 'blocked for in_flight_tentative');
ok((grep { $_ eq $ra } split /,/, $blockers), "A's record is a blocker");

# Poll the gate until it opens; it must within lease + one worker cycle.
my $deadline = $abandoned_at + $lease + $naptime + 3;   # 3 s slack for load
my $opened_at;
while (time < $abandoned_at + 60)
{
	($allowed) = split /\|/, $node->safe_psql('postgres', $gate_sql);
	if ($allowed eq 'true') { $opened_at = time; last; }
	usleep(100_000);
}
ok(defined $opened_at, 'gate opens once A is expired');
ok( defined $opened_at && $opened_at <= $deadline,
	sprintf('gate opens within lease + one worker cycle (%.1fs, limit %.1fs)',
		($opened_at // time) - $abandoned_at,
		$deadline - $abandoned_at));
ok(defined $opened_at && $opened_at - $abandoned_at >= $lease - 0.5,
	'gate did not open before the lease ran out');

is( $node->safe_psql('postgres',
		"SELECT status || '|' || coalesce(end_reason, '') FROM memtx.transactions WHERE id = $txa"),
	'aborted|expired',
	'A is aborted with reason expired');
is( $node->safe_psql('postgres',
		"SELECT state || '|' || reason FROM memtx.records WHERE id = $ra"),
	'revoked|expired',
	"A's staging is revoked with reason expired");
is( $node->safe_psql('postgres',
		"SELECT state || '|' || reason FROM memtx.records WHERE id = $rb"),
	'revoked|revoked_parent',
	"B's record derived from it is repaired (revoked_parent)");
is( $node->safe_psql('postgres',
		"SELECT string_agg(record_id || ':' || action || ':' || reason, ',' ORDER BY record_id) FROM memtx.rollback_log WHERE root_id = $ra"),
	"$ra:revoked:expired,$rb:revoked:revoked_parent",
	'the expiry and its cascade are in the rollback log');
is($node->safe_psql('postgres', "SELECT status FROM memtx.transactions WHERE id = $txb"),
	'open', 'B itself stays open (its lease holds)');
ok($node->log_contains(qr/memtx worker expired 1 transaction in database "postgres": $txa\b/),
	'the worker logged the expiry with the transaction id');

# A call on a transaction whose lease ran out fails (before or after expiry).
my ($rc, $out, $err) = $node->psql('postgres',
	qq{SELECT memtx.stage($txa, 'customer', 'phone', '"1"')});
isnt($rc, 0, 'the expired transaction takes no more calls');
is($node->safe_psql('postgres', 'SELECT count(*) FROM memtx.check_invariants()'),
	'0', 'invariants hold');
$node->stop;

# Without shared_preload_libraries: no worker; memtx.expire_transactions()
# does the same on demand.
my $plain = PostgreSQL::Test::Cluster->new('nopreload');
$plain->init;
$plain->append_conf('postgresql.conf',
	"shared_preload_libraries = ''\nmemtx.lease_timeout = 1\n");
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION memtx CASCADE');
is( $plain->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'memtx%'"),
	'0',
	'no memtx workers without preload');
$txa = $plain->safe_psql('postgres', 'SELECT memtx.begin()');
$ra = $plain->safe_psql('postgres',
	qq{SELECT memtx.stage($txa, 'customer', 'email', '"a\@example.org"')});
$txc = $plain->safe_psql('postgres', "$long SELECT memtx.begin()");
sleep 2;
is($plain->safe_psql('postgres', "SELECT status FROM memtx.transactions WHERE id = $txa"),
	'open', 'without the worker nothing expires by itself');
is($plain->safe_psql('postgres', 'SELECT array_agg(e) FROM memtx.expire_transactions() e'),
	"{$txa}", 'expire_transactions() expires the abandoned transaction only');
is($plain->safe_psql('postgres', "SELECT state || '|' || reason FROM memtx.records WHERE id = $ra"),
	'revoked|expired', 'its staging is revoked with reason expired');
is($plain->safe_psql('postgres', "$long SELECT allowed FROM memtx.gate($txc, 'send_email')"),
	't', 'the gate is open again');
is($plain->safe_psql('postgres', 'SELECT count(*) FROM memtx.expire_transactions()'),
	'0', 'a second run expires nothing');
# the read set of a rolled-back read lives in shared memory: no preload, no read
($rc, $out, $err) = $plain->psql('postgres',
	"$long SELECT count(*) FROM memtx.read($txc)", extra_params => ['-v', 'VERBOSITY=verbose']);
isnt($rc, 0, 'memtx.read is refused without preload');
like($err, qr/55000: memtx.read needs memtx in shared_preload_libraries/,
	'with SQLSTATE 55000 and a message that says why');
($rc, $out, $err) = $plain->psql('postgres',
	"$long SELECT count(*) FROM memtx.recall($txc, 'email')", extra_params => ['-v', 'VERBOSITY=verbose']);
like($err, qr/55000: memtx.recall needs memtx in shared_preload_libraries/,
	'so is memtx.recall, which joins the read set too');
my $txd = $plain->safe_psql('postgres', "$long SELECT memtx.begin()");
$plain->safe_psql('postgres',
	qq{$long SELECT memtx.stage($txd, 'customer', 'name', '"Ada"'); SELECT count(*) FROM memtx.commit($txd)});
is($plain->safe_psql('postgres', "SELECT value FROM memtx.lookup('customer')"),
	'"Ada"', 'memtx.lookup, which has no read set, works without preload');
$plain->stop;

done_testing();
