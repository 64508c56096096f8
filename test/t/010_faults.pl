# Faults at every step boundary (src/fault.c; the test build has them): for
# each named fault point, a call that reaches it fails there, first with an
# ERROR, then with a PANIC that crashes the server (restart and WAL recovery
# follow).  After each failure nothing of the call remains — every memtx
# table is row for row what it was after the last acknowledged call — the
# invariants hold, and the same call then succeeds (after a crash, on a
# transaction begun after it: one open across it counts as expired).  After the crashes,
# amcheck finds the heap and the indexes sound.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MemtxTest;

# no worker: it would chain receipts between the snapshots compared here
my $node = memtx_node('faults', 'memtx.databases' => "''", 'restart_after_crash' => 'on',
	'log_statement' => 'none');
$node->safe_psql('postgres', q{
	CREATE EXTENSION amcheck;
	CREATE ROLE fault_agent;
	SELECT memtx.register_source('crm', 0.8);
	SELECT memtx.register_source('erp', 0.8);
	SELECT memtx.register_tool('refund', false);
});

my $k = 0;

sub sql { return $node->safe_psql('postgres', $_[0]); }

# a committed record on a fresh slot; returns its id
sub committed
{
	my ($parent) = @_;
	$k++;
	my $from = $parent ? ", derived_from => ARRAY[$parent]::bigint[]" : '';
	return sql("SELECT record_id FROM memtx.propose('e$k', 'a', '$k'$from)");
}

# a record quarantined needs_review (a rival of equal authority)
sub needs_review
{
	$k++;
	sql("SELECT memtx.propose('e$k', 'a', '1', source => 'crm')");
	return sql("SELECT record_id FROM memtx.propose('e$k', 'a', '2', source => 'erp')");
}

# an open transaction with one staged record; returns the transaction id
sub open_tx
{
	my ($agent) = @_;
	$k++;
	my $tx = sql($agent ? "SELECT memtx.begin(agent => '$agent')" : 'SELECT memtx.begin()');
	sql("SELECT memtx.stage($tx, 'e$k', 'a', '$k')");
	return $tx;
}

# point => sub returning the call that reaches it (after acknowledged preparation)
my %calls = (
	'begin:inserted' => sub { 'SELECT memtx.begin()' },
	'stage:inserted' => sub { my $tx = sql('SELECT memtx.begin()'); $k++; "SELECT memtx.stage($tx, 'e$k', 'a', '1')" },
	'stage:edges' => sub {
		my $p = committed();
		my $tx = sql('SELECT memtx.begin()');
		$k++;
		"SELECT memtx.stage($tx, 'e$k', 'a', '1', derived_from => ARRAY[$p]::bigint[])";
	},
	'commit:loaded' => sub { my $tx = open_tx(); "SELECT * FROM memtx.commit($tx)" },
	'commit:admitted' => sub { my $tx = open_tx(); "SELECT * FROM memtx.commit($tx)" },
	'commit:receipts' => sub { my $tx = open_tx(); "SELECT * FROM memtx.commit($tx)" },
	'commit:ended' => sub { my $tx = open_tx(); "SELECT * FROM memtx.commit($tx)" },
	'resolve:accepted' => sub { my $r = needs_review(); "SELECT memtx.resolve($r, true)" },
	'resolve:rejected' => sub { my $r = needs_review(); "SELECT memtx.resolve($r, false)" },
	'act:decided' => sub {
		my $p = committed();
		my $tx = sql('SELECT memtx.begin()');
		"SELECT * FROM memtx.act($tx, 'refund', '{}', ARRAY[$p]::bigint[])";
	},
	'act:logged' => sub {
		my $p = committed();
		my $tx = sql('SELECT memtx.begin()');
		"SELECT * FROM memtx.act($tx, 'refund', '{}', ARRAY[$p]::bigint[])";
	},
	'cascade:revoked' => sub { my $p = committed(); committed($p); "SELECT * FROM memtx.revoke($p)" },
	'cascade:repaired' => sub { my $p = committed(); committed($p); "SELECT * FROM memtx.revoke($p)" },
	'cascade:logged' => sub { my $p = committed(); committed($p); "SELECT * FROM memtx.revoke($p)" },
	'abort:cascaded' => sub { my $tx = open_tx(); "SELECT * FROM memtx.abort($tx)" },
	'expire:namespace' => sub {
		my $tx = open_tx();
		sql("UPDATE memtx.transactions SET lease_expires_at = clock_timestamp() - interval '1 s' WHERE id = $tx");
		'SELECT * FROM memtx.expire_transactions()';
	},
	'fence:advanced' => sub { sql('SELECT memtx.unfence(\'fault_agent\')'); open_tx('fault_agent'); "SELECT memtx.fence('fault_agent')" },
	'fence:aborted' => sub { sql('SELECT memtx.unfence(\'fault_agent\')'); open_tx('fault_agent'); "SELECT memtx.fence('fault_agent')" },
	'erase:revoked' => sub { my $r = committed(); "SELECT * FROM memtx.erase($r)" },
	'erase:erased' => sub { my $r = committed(); "SELECT * FROM memtx.erase($r)" },
	'chain:filled' => sub { committed(); 'SELECT memtx.chain_receipts()' },
);

# the setting names only points the build has
my ($rc, $out, $err) = $node->psql('postgres', "SET memtx.fault_at = 'commit:nowhere'");
like($err, qr/is not a fault point of this build/, 'an unknown fault point is refused');

for my $action ('error', 'panic')
{
	for my $point (sort keys %calls)
	{
		my $call = $calls{$point}->();
		my $before = memtx_fingerprint($node);
		my $log_offset = -s $node->logfile;
		($rc, $out, $err) = $node->psql('postgres',
			"SET memtx.fault_at = '$point'; SET memtx.fault_action = '$action'; $call");
		if ($action eq 'error')
		{
			like($err, qr/memtx fault injected at \Q$point\E/, "$point: the call fails with the injected error");
		}
		else
		{
			# the crash is over once the postmaster has reinitialized and
			# recovered (a connection made before it noticed the crash would
			# see the old server: so wait for its log, then for a query)
			ok($rc != 0
				  && $node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset)
				  && $node->wait_for_log(qr/database system is ready to accept connections/, $log_offset)
				  && $node->poll_query_until('postgres', 'SELECT true'),
				"$point: the server crashes in the call and recovers");
		}
		is(memtx_fingerprint($node), $before, "$point ($action): nothing of the call remains");
		is(sql('SELECT count(*) FROM memtx.check_invariants()'), '0',
			"$point ($action): the invariants hold");
		($rc, $out, $err) = $node->psql('postgres', $call);
		if ($action eq 'panic' && $call =~ /memtx\.(stage|commit|act|abort)\(/)
		{
			# a transaction open across a crash may have lost reads: it
			# counts as expired and takes no call (SPEC §17); the same call
			# on a transaction begun after the crash succeeds
			like($err, qr/25P03|has expired: it was open across a restart that may have lost its reads/,
				"$point ($action): the transaction open across the crash is expired");
			($rc, $out, $err) = $node->psql('postgres', $calls{$point}->());
		}
		is($rc, 0, "$point ($action): the same call then succeeds") or diag($err);
	}
}

is(sql("SELECT string_agg(coalesce(first_bad_seq::text, 'ok'), ',') FROM memtx.verify_receipts()"),
	'ok', 'the receipt chain verifies after every fault');
amcheck_clean($node, 'after the crashes');

$node->stop;
done_testing();
