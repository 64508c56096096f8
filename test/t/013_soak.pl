# Soak, bounded (MEMTX_SOAK_SECONDS, default 30; an hour for the long run):
# pgbench clients run a mix of proposals, abandoned transactions (which the
# worker expires), acts and revokes, with autovacuum on, while one session
# runs batches of calls of its own.  The memory of that session and of the
# worker stays flat as the transactions served grow, dead rows stay bounded,
# and nothing errs: no pgbench failure, the invariants hold, the receipt
# chain verifies.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use List::Util qw(min);
use MemtxTest;

my $seconds = $ENV{MEMTX_SOAK_SECONDS} // 30;
my $node = memtx_node('soak',
	'memtx.lease_timeout' => '2',
	'log_statement' => 'none',
	'autovacuum_naptime' => '1',
	'log_autovacuum_min_duration' => '-1');
ok(wait_for_worker($node), 'worker runs');
$node->safe_psql('postgres', "SELECT memtx.register_tool('hold_order', true, 'release_order')");

my $script = "${PostgreSQL::Test::Utils::tmp_check}/soak.pgb";
open my $fh, '>', $script or die $!;
print $fh <<'PGB';
\set k random(1, 5000)
\set op random(1, 10)
SELECT record_id AS rec FROM memtx.propose('soak:' || :client_id, 'k' || :k, to_jsonb(:op)) \gset
\if :op = 1
SELECT memtx.stage(memtx.begin(), 'abandoned:' || :client_id, 'k' || :k, '1');
\elif :op = 2
SELECT count(*) FROM memtx.revoke(:rec);
\elif :op <= 4
SELECT memtx.begin() AS t \gset
SELECT allowed FROM memtx.act(:t, 'hold_order', '{}', ARRAY[:rec]::bigint[]);
SELECT count(*) FROM memtx.commit(:t);
\endif
PGB
close $fh;

# pgbench writes into files, not into pipes this script would have to keep
# draining while it sleeps: a full pipe would stop the load (its notices
# fill one within minutes)
my ($outfile, $errfile) = map { "${PostgreSQL::Test::Utils::tmp_check}/soak.$_" } qw(out err);
my $bench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '4', '-j', '4', '-T', $seconds, '-f', $script,
	  '-d', $node->connstr('postgres') ],
	'<', \undef, '>', $outfile, '2>', $errfile);

# one long-lived session: batches of calls, its memory measured between them
my $session = $node->background_psql('postgres');
# the timeout bounds each query, not the whole session (an hour's run)
$session->set_query_timer_restart();
# bytes in use, not allocated: a context that takes a new block (a cache's
# context grows by 1 MB at once) allocates far more than it uses, and a
# leak shows in what is used (the allocated total once failed this test
# under load with 1 MB more and no leak)
my $memory = q{SELECT sum(used_bytes) FROM pg_backend_memory_contexts};
my $contexts = q{SELECT string_agg(name || '=' || used, ' ' ORDER BY name)
	FROM (SELECT name, sum(used_bytes) AS used FROM pg_backend_memory_contexts GROUP BY name) s};
my @mine_contexts;
my $worker_pid = worker_pid($node);
my (@mine, @worker);
my $batches = 10;
my $deadline = time + $seconds;
for my $b (1 .. $batches)
{
	$session->query_safe(
		"SELECT count(*) FROM generate_series(1, 200) g, "
		  . "LATERAL memtx.propose('session', 'k' || (g % 500), to_jsonb(g))");
	push @mine, $session->query_safe($memory);
	push @mine_contexts, $session->query_safe($contexts);
	$node->safe_psql('postgres', "SELECT pg_log_backend_memory_contexts($worker_pid)");
	sleep(($deadline - time) / ($batches - $b + 1)) if $deadline > time;
}
$bench->finish;
$session->quit;

my $out = slurp_file($outfile);
like($out, qr/number of failed transactions: 0/, 'no pgbench transaction failed');
my ($served) = $out =~ /number of transactions actually processed: (\d+)/;
# the load ran all along: at least 10 transactions a second (a stalled
# pgbench serves a few hundred and then nothing)
ok(($served // 0) >= 10 * $seconds, "pgbench served @{[ $served // 0 ]} transactions in $seconds s");

# flat: over the second half of the batches (the first half warms the
# caches and plans up as the load reaches new paths) the session grows by
# less than 256 kB, under 256 bytes per proposal
my $half = int($batches / 2);
my $grew = $mine[-1] - $mine[$half - 1];
ok($grew < 256 * 1024, "the session's memory in use is flat ($mine[$half - 1] -> $mine[-1] bytes over "
	  . ($batches - $half) * 200 . " proposals)")
  or diag("contexts then: $mine_contexts[$half - 1]\ncontexts last: $mine_contexts[-1]");

# the worker logs its memory contexts when asked: compare the grand totals
my $log = slurp_file($node->logfile);
# (the used figure, as for the session)
@worker = $log =~ /Grand total: \d+ bytes in \d+ blocks; \d+ free \(\d+ chunks\); (\d+) used/g;
ok(@worker >= 3, 'the worker reported its memory ' . scalar(@worker) . ' times');
# The worker answers the request at its next interrupt check, which may
# fall inside a cycle, while the cycle's own context holds the batch it
# expires or chains: a sample is its baseline plus a transient part bounded
# by the batch.  A leak raises the baseline, so compare the lowest sample of
# the last third with the lowest of the middle third.
my $third = int(@worker / 3);
my ($mid, $last) = (min(@worker[ $third .. 2 * $third - 1 ]), min(@worker[ 2 * $third .. $#worker ]));
ok(@worker >= 3 && $last - $mid < 256 * 1024,
	"the worker's memory is flat (lowest $mid -> lowest $last bytes)");

ok( $node->poll_query_until('postgres', "SELECT count(*) = 0 FROM memtx.transactions WHERE status = 'open'"),
	'the worker expires every abandoned transaction');
is($node->safe_psql('postgres', 'SELECT count(*) FROM memtx.check_invariants()'), '0',
	'the invariants hold after the soak');
is($node->safe_psql('postgres',
		"SELECT string_agg(coalesce(first_bad_seq::text, 'ok'), ',') FROM memtx.verify_receipts()"),
	'ok', 'the receipt chain verifies after the soak');

# bounded dead rows: autovacuum keeps up
$node->safe_psql('postgres', 'SELECT pg_stat_force_next_flush()');
my $dead = $node->safe_psql('postgres', q{
	SELECT coalesce(max(n_dead_tup::float8 / greatest(n_live_tup, 1)), 0) < 1
	  FROM pg_stat_user_tables WHERE schemaname = 'memtx' AND n_live_tup > 1000});
is($dead, 't', 'no memtx table has more dead rows than live ones');

# the figures of the run, for test/VERIFICATION.md
diag(sprintf('soak: %d s, %d pgbench transactions, session memory %s, worker memory %s bytes; %s',
	$seconds, $served // 0, join(' ', @mine[ 0, $half - 1, -1 ]), join(' ', @worker),
	$node->safe_psql('postgres', q{
		SELECT format('%s records, %s transactions, %s receipts; records %s, history %s',
		              (SELECT count(*) FROM memtx.records), (SELECT count(*) FROM memtx.transactions),
		              (SELECT count(*) FROM memtx.receipts),
		              pg_size_pretty(pg_total_relation_size('memtx.records')),
		              pg_size_pretty(pg_total_relation_size('memtx.history')))})));

$node->stop;
done_testing();
