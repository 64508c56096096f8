# Crash under concurrent proposals (SPEC §10, §11): four agents propose on a
# shared slot (each expecting the head it just looked up, so most lose with
# stale_head) and on slots of their own, and retry earlier proposals, while
# the server is stopped in immediate mode.  After recovery every proposal a
# client saw acknowledged has its one outcome (the record and state the
# client was told), a retry after the crash returns the same record and
# writes nothing, each settled record has exactly one commit receipt, and
# the receipt chain verifies (the worker chains what was pending).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use MemtxTest;

my $agents = 4;
my $node = memtx_node('proposals', 'log_statement' => 'none');
ok(wait_for_worker($node), 'worker runs');

# psql prints a result only after its SQL transaction committed: an ACK line
# is an acknowledged proposal.
my @runs;
for my $i (1 .. $agents)
{
	my $script = "${PostgreSQL::Test::Utils::tmp_check}/proposer$i.sql";
	open my $fh, '>', $script or die $!;
	for my $j (1 .. 3000)
	{
		my $slot = $j % 2 ? "'acct', 'balance'" : "'agent$i', 'k$j'";
		print $fh <<"SQL";
SELECT coalesce((SELECT max(id) FROM memtx.lookup($slot)), 0) AS head \\gset
SELECT 'ACK a$i-$j ' || record_id || ' ' || state || ' ' || coalesce(reason, '-')
  FROM memtx.propose($slot, '$j', expected_head => :head, proposal => 'a$i-$j');
SQL
		next unless $j % 5 == 0;
		my $k = $j - 3;
		my $old = $k % 2 ? "'acct', 'balance'" : "'agent$i', 'k$k'";
		# a retry of an earlier proposal: its exact content, its outcome back
		print $fh <<"SQL";
SELECT 'RETRY a$i-$k ' || record_id || ' ' || state
  FROM memtx.propose($old, '$k', expected_head => (SELECT expected_head FROM memtx.records
                                                    WHERE proposal = 'a$i-$k'),
                     proposal => 'a$i-$k');
SQL
	}
	close $fh;
	push @runs, start_script($node, $script);
}

$node->poll_query_until('postgres',
	"SELECT count(DISTINCT split_part(proposal, '-', 1)) = $agents AND count(*) >= 60 "
	  . "FROM memtx.records WHERE proposal IS NOT NULL AND state <> 'tentative'")
  or die 'load did not start';
$node->stop('immediate');

my %acked;    # proposal => "record state"
my ($retries, $retry_mismatch, $stale) = (0, 0, 0);
my @per_agent;
for my $r (@runs)
{
	$r->{h}->finish;
	my $n = 0;
	for my $line (split /\n/, ${ $r->{out} })
	{
		if ($line =~ /^ACK (\S+) (\d+) (\S+) (\S+)$/)
		{
			$acked{$1} = "$2 $3";
			$stale++ if $4 eq 'stale_head';
			$n++;
		}
		elsif ($line =~ /^RETRY (\S+) (\d+) (\S+)$/)
		{
			$retries++;
			# the retry returns the original record (its state may have moved on)
			$retry_mismatch++
			  unless defined $acked{$1} && (split / /, $acked{$1})[0] eq $2;
		}
	}
	push @per_agent, $n;
}
ok((!grep { $_ == 0 } @per_agent),
	'every agent saw proposals acknowledged before the crash (' . join(',', @per_agent) . ')');
ok($stale > 0, "some proposals lost the shared head ($stale stale_head)");
is($retry_mismatch, 0, "$retries retries before the crash returned the original record");

$node->start;

# Every acknowledged proposal has its one outcome: the record the client was
# told, in the state it was told (a committed one may since be superseded).
my %outcome = map { split /\|/ } split /\n/,
  $node->safe_psql('postgres',
	"SELECT p || '|' || o.record_id || ' ' || o.state FROM unnest(ARRAY['"
	  . join("','", keys %acked)
	  . "']) p, memtx.outcome(p) o");
my @wrong = grep {
	my ($rid, $st) = split / /, $acked{$_};
	my ($nrid, $nst) = split / /, ($outcome{$_} // 'missing missing');
	!($nrid eq $rid && ($nst eq $st || ($st eq 'committed' && $nst eq 'superseded')))
} sort keys %acked;
is(scalar @wrong, 0,
	scalar(keys %acked) . ' acknowledged proposals have their outcome'
	  . (@wrong ? " (wrong: @wrong[0 .. ($#wrong < 9 ? $#wrong : 9)])" : ''));

# A retry after the crash returns the same record and writes nothing.
my ($some) = sort keys %acked;
my ($i, $j) = $some =~ /^a(\d+)-(\d+)$/;
my $slot = $j % 2 ? "'acct', 'balance'" : "'agent$i', 'k$j'";
my $before = $node->safe_psql('postgres',
	'SELECT (SELECT count(*) FROM memtx.records) || \' \' || (SELECT count(*) FROM memtx.receipts)');
is( $node->safe_psql(
		'postgres',
		"SELECT record_id FROM memtx.propose($slot, '$j', expected_head => "
		  . "(SELECT expected_head FROM memtx.records WHERE proposal = '$some'), proposal => '$some')"),
	(split / /, $acked{$some})[0],
	"a retry of $some after the crash returns its record");
is( $node->safe_psql('postgres',
		'SELECT (SELECT count(*) FROM memtx.records) || \' \' || (SELECT count(*) FROM memtx.receipts)'),
	$before, 'and writes no record and no receipt');

# One commit receipt per settled record; the chain verifies.
is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FROM memtx.records r
	 WHERE r.proposal IS NOT NULL AND r.state <> 'tentative'
	   AND r.verdict IN ('committed', 'action_safe', 'quarantined')
	   AND (SELECT count(*) FROM memtx.receipts x WHERE x.kind = 'commit' AND x.subject = r.id) <> 1}),
	'0',
	'each settled proposal has exactly one commit receipt');
ok( $node->poll_query_until(
		'postgres', "SELECT count(*) = 0 FROM memtx.receipts WHERE seq IS NULL"),
	'the worker chains the receipts pending at the crash');
like(
	$node->safe_psql(
		'postgres',
		"SELECT namespace || ' ' || checked || ' ' || coalesce(first_bad_seq::text, 'ok') FROM memtx.verify_receipts()"),
	qr/^default \d+ ok$/,
	'the receipt chain verifies after recovery');
is($node->safe_psql('postgres', 'SELECT count(*) FROM memtx.check_invariants()'),
	'0', 'invariants hold after recovery (receipts, chain, proposals included)');

$node->stop;
done_testing();
