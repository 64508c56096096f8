# Cancels and timeouts inside the calls: a statement_timeout firing in a
# commit that waits for a slot lock, a lock_timeout firing in a cascade that
# waits for the namespace's writers, and pg_cancel_backend of an act that
# waits for its effect key.  Each time the caller gets PostgreSQL's standard
# SQLSTATE (57014 or 55P03), nothing of the call remains (every memtx table
# row for row as before), the invariants hold, and the same call succeeds
# once the holder has ended.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MemtxTest;

my $node = memtx_node('cancels', 'memtx.databases' => "''", 'log_statement' => 'none');
$node->safe_psql('postgres', "SELECT memtx.register_tool('refund', false)");

sub sql { return $node->safe_psql('postgres', $_[0]); }

# runs $call in a fresh session after $set; returns its error output (verbose: with the SQLSTATE)
sub failing
{
	my ($set, $call) = @_;
	my ($rc, $out, $err) = $node->psql('postgres', "$set; $call",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	return $rc == 0 ? '' : $err;
}

sub invariants_hold
{
	is(sql('SELECT count(*) FROM memtx.check_invariants()'), '0', "$_[0]: the invariants hold");
}

my $parent = sql("SELECT record_id FROM memtx.propose('order:0', 'eligible', 'true')");

# 1. statement_timeout in a commit waiting for the slot lock another commit holds
my $ta = sql('SELECT memtx.begin()');
sql("SELECT memtx.stage($ta, 'order:1', 'status', '\"paid\"')");
my $tb = sql('SELECT memtx.begin()');
sql("SELECT memtx.stage($tb, 'order:1', 'status', '\"cancelled\"')");
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN');
$holder->query_safe("SELECT count(*) FROM memtx.commit($ta)");
my $before = memtx_fingerprint($node);
like(failing("SET statement_timeout = '300ms'", "SELECT * FROM memtx.commit($tb)"),
	qr/57014: canceling statement due to statement timeout/,
	'commit: a statement timeout while it waits for the slot lock gives 57014');
is(memtx_fingerprint($node), $before, 'commit: nothing of the cancelled commit remains');
is(sql("SELECT status FROM memtx.transactions WHERE id = $tb"), 'open',
	'commit: its transaction is still open');
$holder->query_safe('COMMIT');
like(sql("SELECT string_agg(state::text, ',') FROM memtx.commit($tb)"), qr/^(committed|quarantined)$/,
	'commit: the same commit then settles its record');
invariants_hold('commit');

# 2. lock_timeout in a cascade waiting for the namespace's writers
my $root = sql("SELECT record_id FROM memtx.propose('order:2', 'eligible', 'true')");
sql("SELECT memtx.propose('order:2', 'refund', '30', derived_from => ARRAY[$root]::bigint[])");
my $tw = sql('SELECT memtx.begin()');
$holder->query_safe('BEGIN');
$holder->query_safe("SELECT memtx.stage($tw, 'order:3', 'note', '\"pending\"')");
$before = memtx_fingerprint($node);
like(failing("SET lock_timeout = '300ms'", "SELECT * FROM memtx.revoke($root)"),
	qr/55P03: canceling statement due to lock timeout/,
	'revoke: a lock timeout while the cascade waits for the writers gives 55P03');
is(memtx_fingerprint($node), $before, 'revoke: nothing of the cascade remains');
$holder->query_safe('COMMIT');
is(sql("SELECT count(*) FROM memtx.revoke($root)"), '2',
	'revoke: the same revoke then repairs the root and its descendant');
sql("SELECT count(*) FROM memtx.commit($tw)");    # nothing in flight for the gate below
invariants_hold('revoke');

# 3. pg_cancel_backend of an act waiting for its effect key
my $t1 = sql('SELECT memtx.begin()');
my $t2 = sql('SELECT memtx.begin()');
$holder->query_safe('BEGIN');
is($holder->query_safe("SELECT allowed FROM memtx.act($t1, 'refund', '{\"amount\": 5}', ARRAY[$parent]::bigint[], 'refund-5')"),
	't', 'act: the first act with the key is allowed (its SQL transaction still open)');
$before = memtx_fingerprint($node);
my $script = "${PostgreSQL::Test::Utils::tmp_check}/act.sql";
open my $fh, '>', $script or die $!;
print $fh "\\set VERBOSITY verbose\n"
  . "SELECT allowed FROM memtx.act($t2, 'refund', '{\"amount\": 5}', ARRAY[$parent]::bigint[], 'refund-5');\n";
close $fh;
my $waiter = start_script($node, $script);
ok( $node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%refund-5%'"),
	'act: the second act waits for the effect key');
sql("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%refund-5%'");
$waiter->{h}->finish;
like(${ $waiter->{err} }, qr/57014: canceling statement due to user request/,
	'act: pg_cancel_backend while it waits for the effect key gives 57014');
is(memtx_fingerprint($node), $before, 'act: nothing of the cancelled act is recorded');
$holder->query_safe('COMMIT');
is(sql("SELECT allowed FROM memtx.act($t2, 'refund', '{\"amount\": 5}', ARRAY[$parent]::bigint[], 'refund-5')"),
	't', 'act: the same act then returns the decision stored under the key');
is(sql("SELECT count(*) FROM memtx.action_log WHERE effect_key = 'refund-5'"), '1',
	'act: the key executed once');
invariants_hold('act');

$holder->quit;
$node->stop;
done_testing();
