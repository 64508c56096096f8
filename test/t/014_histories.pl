# A concurrent history across a crash: test/histories/run_history.py drives
# eight clients over a small key space of one namespace (proposals with and
# without expected heads and proposal ids, retries, begin/stage/commit,
# transactions left open then committed or aborted, lookups, revocations,
# act under repeated effect keys, gate) while a supervisor terminates random
# client backends, and the server is stopped in immediate mode once, at a
# random moment, and started again (WAL recovery); clients reconnect and go
# on.  Every operation cut off by a termination or the crash is "maybe" in
# the history.  After the run test/histories/check.py checks the history
# against the recovered store: real-time order per slot, the slot replay,
# no lost acknowledged commit, one disposition per proposal, effect keys at
# most once, the gate's decisions, fresh reads, check_invariants and
# verify_receipts.  MEMTX_HISTORY_TAP_SECONDS (default 20) sets the run's
# length, MEMTX_HISTORY_SEED its seed.
use strict;
use warnings;

use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use IPC::Run;
use MemtxTest;

my $seconds = $ENV{MEMTX_HISTORY_TAP_SECONDS} // 20;
my $seed = $ENV{MEMTX_HISTORY_SEED} // 20261203;
my $dir = "$FindBin::Bin/../histories";
my $ns = "history-$seed-crash";
my $history = "${PostgreSQL::Test::Utils::tmp_check}/history.jsonl";

my $node = memtx_node('histories', 'log_statement' => 'none', 'max_connections' => 40);
$node->safe_psql('postgres', 'CREATE EXTENSION amcheck');

my ($out, $err) = ('', '');
my $driver = IPC::Run::start(
	[
		'/usr/bin/python3', "$dir/run_history.py", '--dsn', $node->connstr('postgres'),
		'--out', $history, '--clients', 8, '--seconds', $seconds, '--seed', $seed,
		'--terminate', 1, '--namespace', $ns
	],
	'<', \undef, '>', \$out, '2>', \$err);

ok( $node->poll_query_until('postgres',
		"SELECT count(*) >= 50 FROM memtx.records WHERE namespace = '$ns'"),
	'the clients are running');
usleep(int((1 + rand($seconds / 3)) * 1_000_000));
$node->stop('immediate');
$node->start;
ok(1, 'the server restarted after an immediate stop in the middle of the run');

ok($driver->finish, 'the driver ran to its end') or diag($err);
note($out);

my $maybe = 0;
open my $fh, '<', $history or die "$history: $!";
while (<$fh>) { $maybe++ if /"outcome": "maybe"/; }
close $fh;
ok($maybe > 0, "$maybe operations were cut off by terminations or the crash");

my ($cout, $cerr) = ('', '');
IPC::Run::run([ '/usr/bin/python3', "$dir/check.py", '--dsn', $node->connstr('postgres'), $history ],
	'<', \undef, '>', \$cout, '2>', \$cerr);
my ($passed, $failed) = $cout =~ /^(\d+) passed, (\d+) failed$/m;
ok(defined $failed && $failed == 0 && $passed > 0,
	'the checker finds every property held across the crash' . (defined $passed ? " ($passed passed)" : ''))
  or diag($cout . $cerr);
note($cout);

amcheck_clean($node, 'after the history');
$node->stop;
done_testing();
