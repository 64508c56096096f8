# The memtx background workers: the launcher and the per-database workers
# start with the server and after a restart, follow memtx.databases on
# reload, skip databases without the extension, and come back when killed.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MemtxTest;

my $node = memtx_node('worker');

# Started with the server.
ok(wait_for_worker($node), 'worker for database postgres runs after start');
like(launcher_pid($node), qr/^\d+$/, 'launcher runs after start');
is( $node->safe_psql(
		'postgres',
		"SELECT application_name FROM pg_stat_activity WHERE backend_type = 'memtx worker'"),
	'memtx worker',
	'worker reports its application name');
ok($node->log_contains('memtx worker started for database "postgres"'),
	'worker start is logged');

# Started again after a restart, as new processes.
my $before = worker_pid($node);
$node->restart;
my $after = wait_for_worker($node);
ok($after && $after ne $before, 'worker runs again after a restart');
like(launcher_pid($node), qr/^\d+$/, 'launcher runs again after a restart');

# memtx.databases is re-read on SIGHUP: a listed database gets a worker,
# an unlisted one loses it.  db2 has no memtx: its worker skips it quietly.
$node->safe_psql('postgres', 'CREATE DATABASE db2');
$node->safe_psql('postgres',
	"ALTER SYSTEM SET memtx.databases = 'postgres, db2'");
$node->reload;
ok(wait_for_worker($node, 'db2'), 'reload starts a worker for a newly listed database');

$node->safe_psql('postgres', "ALTER SYSTEM SET memtx.databases = 'db2'");
$node->reload;
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'memtx worker' AND datname = 'postgres'"
	),
	'reload stops the worker of a database no longer listed');
ok($node->log_contains('stopping the worker for database "postgres"'),
	'stopping is logged');
sleep 2;    # a few cycles in db2, which has no memtx
ok(!$node->log_contains(qr/ERROR:.*\n.*memtx\.expire_transactions/),
	'worker of a database without memtx runs no expiry and reports no error');
my $db2_query =
  "SELECT query FROM pg_stat_activity WHERE backend_type = 'memtx worker' AND datname = 'db2'";
is($node->safe_psql('postgres', $db2_query), '',
	'worker of a database without memtx has run no query');
$node->safe_psql('db2', 'CREATE EXTENSION memtx CASCADE');
ok( $node->poll_query_until(
		'postgres', "$db2_query AND query LIKE '%FROM memtx.transactions%'"
		  =~ s/^SELECT query/SELECT count(*) = 1/r),
	'once memtx is installed there, the worker expires in it');

# A listed database that does not exist: a warning, no worker, no crash loop.
$node->safe_psql('postgres',
	"ALTER SYSTEM SET memtx.databases = 'postgres, nosuchdb'");
$node->reload;
ok(wait_for_worker($node), 'worker for postgres is back after listing it again');
ok( $node->wait_for_log(
		qr/database "nosuchdb" listed in memtx.databases does not exist/),
	'a missing database is reported');

# The list is a superuser setting read at reload only.
my ($rc, $out, $err) = $node->psql('postgres',
	"SET memtx.databases = 'postgres'");
like($err, qr/cannot be changed now/, 'memtx.databases cannot be SET in a session');
($rc, $out, $err) = $node->psql('postgres',
	"ALTER SYSTEM SET memtx.databases = 'a,,b'");
like($err, qr/invalid value for parameter "memtx.databases"/,
	'a malformed list is rejected');

# A worker that exits (here: terminated) is started again by the launcher.
my $pid = worker_pid($node);
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok(wait_for_new_worker($node, $pid), 'launcher restarts a terminated worker');

# A terminated launcher comes back (bgw_restart_time) and leaves exactly
# one worker per database.
my $lpid = launcher_pid($node);
$node->safe_psql('postgres', "SELECT pg_terminate_backend($lpid)");
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'memtx launcher' AND pid <> $lpid"
	),
	'launcher comes back after being terminated');
sleep 1;
ok(wait_for_worker($node), 'still exactly one worker for postgres');

# Without memtx.databases there are no per-database workers.
$node->safe_psql('postgres', "ALTER SYSTEM SET memtx.databases = ''");
$node->reload;
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'memtx worker'"
	),
	'empty memtx.databases: no workers');

$node->stop;
done_testing();
