# Crash during concurrent load: several agents stage and commit while the
# server is stopped in immediate mode (no shutdown checkpoint: WAL recovery
# on restart).  Every commit a client saw acknowledged must be there, no
# memtx transaction may be half committed, and the invariants must hold.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use MemtxTest;

my $agents = 4;
my $node = memtx_node(
	'load',
	'memtx.lease_timeout' => '2',
	'log_statement' => 'none');
ok(wait_for_worker($node), 'worker runs');
$node->safe_psql('postgres', 'CREATE EXTENSION amcheck');

# Each agent: begin, stage a record, a record derived from it and a rival
# on a shared slot, commit, and print what commit returned.  psql prints a
# result only after its SQL transaction committed.
my @runs;
for my $i (1 .. $agents)
{
	my $script = "${PostgreSQL::Test::Utils::tmp_check}/agent$i.sql";
	open my $fh, '>', $script or die $!;
	for my $j (1 .. 3000)
	{
		print $fh <<"SQL";
SELECT memtx.begin() AS tx \\gset
SELECT memtx.stage(:tx, 'agent$i', 'k$j', '$j') AS r1 \\gset
SELECT memtx.stage(:tx, 'agent$i', 'k${j}d', '"d$j"', derived_from => ARRAY[:r1]::bigint[]) AS r2 \\gset
SELECT memtx.stage(:tx, 'shared', 'last_writer', '"agent$i-$j"') AS r3 \\gset
SELECT 'ACK ' || :tx || ' ' || string_agg(record_id || ':' || state, ',' ORDER BY record_id) FROM memtx.commit(:tx);
SQL
	}
	close $fh;
	push @runs, start_script($node, $script);
}

# Wait until every agent has commits of its own (agents start at different
# speeds on a busy machine), then crash.
$node->poll_query_until('postgres',
	"SELECT count(*) >= 40 AND count(DISTINCT entity) = $agents FROM memtx.records "
	  . "WHERE entity LIKE 'agent%' AND state IN ('committed', 'action_safe')")
  or die 'load did not start';
$node->stop('immediate');

my %acked;    # record id => state commit returned
my %acked_tx;
my @per_agent;
for my $r (@runs)
{
	$r->{h}->finish;    # psql exits once the connection is gone
	my $n = 0;
	for my $line (split /\n/, ${ $r->{out} })
	{
		next unless $line =~ /^ACK (\d+) (\S+)$/;
		$acked_tx{$1} = 1;
		$n++;
		for my $pair (split /,/, $2)
		{
			my ($id, $state) = split /:/, $pair;
			$acked{$id} = $state;
		}
	}
	push @per_agent, $n;
}
ok((!grep { $_ == 0 } @per_agent),
	'every agent saw commits acknowledged before the crash (' . join(',', @per_agent) . ')');

$node->start;

# Acknowledged commits survived, with the outcome the client saw (a record
# committed then may since have been superseded on the shared slot).
my %now = map { split /\|/ } split /\n/,
  $node->safe_psql('postgres',
	'SELECT id || \'|\' || state FROM memtx.records WHERE id IN ('
	  . join(',', keys %acked) . ')');
my @lost = grep {
	my $s = $now{$_} // 'missing';
	!($s eq $acked{$_} || ($acked{$_} eq 'committed' && $s eq 'superseded'))
} sort { $a <=> $b } keys %acked;
is(scalar @lost, 0,
	scalar(keys %acked) . ' acknowledged records are present with their outcome'
	  . (@lost ? " (lost: @lost[0 .. ($#lost < 9 ? $#lost : 9)])" : ''));
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM memtx.transactions WHERE status = 'open' AND id IN ("
		  . join(',', keys %acked_tx) . ')'),
	'0',
	'no acknowledged transaction is open again');

# Nothing half committed.
is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FROM memtx.transactions t JOIN memtx.records r ON r.tx_id = t.id
	 WHERE (t.status <> 'open' AND r.state IN ('raw', 'tentative', 'validated'))
	    OR (t.status = 'open' AND (r.state IN ('validated', 'committed', 'action_safe')
	                               OR r.committed_seq IS NOT NULL))
	    OR (t.status = 'committed' AND r.verdict NOT IN ('committed', 'action_safe'))
	    OR (t.status = 'aborted' AND r.state IN ('committed', 'action_safe', 'superseded'))}),
	'0',
	'no transaction is half committed');
is($node->safe_psql('postgres', 'SELECT count(*) FROM memtx.check_invariants()'),
	'0', 'invariants hold after recovery');

amcheck_clean($node, 'after recovery');

# The transactions in flight at the crash are expired by the worker.
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 0 FROM memtx.transactions WHERE status = 'open'"),
	'transactions in flight at the crash are expired after restart');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM memtx.records WHERE state = 'tentative'"),
	'0', 'no tentative record is left in flight');
is($node->safe_psql('postgres', 'SELECT count(*) FROM memtx.check_invariants()'),
	'0', 'invariants hold after the expiry');

$node->stop;
done_testing();
