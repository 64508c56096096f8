# Crash under load, repeated: eight clients propose, retry proposals, act
# under effect keys and revoke, and the postmaster is killed with SIGKILL at
# a random moment, ten times in a row (MEMTX_CRASH_LOOPS to change).  After
# each restart: every proposal a client saw acknowledged has its record, a
# retry acknowledged returned the original record, every effect key
# acknowledged as allowed executed exactly once and no key more than once,
# and the invariants hold.  At the end the receipt chain verifies and
# amcheck finds the heap and the indexes sound.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use MemtxTest;

my $clients = 8;
my $loops = $ENV{MEMTX_CRASH_LOOPS} // 10;
my $node = memtx_node('loop', 'log_statement' => 'none', 'memtx.lease_timeout' => '2',
	'max_connections' => 40);
$node->safe_psql('postgres', q{
	CREATE EXTENSION amcheck;
	SELECT memtx.register_tool('hold_order', true, 'release_order');
});

sub sql { return $node->safe_psql('postgres', $_[0]); }

# one client's script for crash $l: a mixed load, each acknowledgement
# printed after its SQL transaction committed
sub script
{
	my ($l, $i) = @_;
	my $file = "${PostgreSQL::Test::Utils::tmp_check}/loop$l-$i.sql";
	open my $fh, '>', $file or die $!;
	for my $j (1 .. 2000)
	{
		my $p = "l$l-c$i-$j";
		print $fh <<"SQL";
SELECT record_id AS rec FROM memtx.propose('c$i', 'k$j', '$j', proposal => '$p') \\gset
\\echo ACK P $p :rec
SQL
		if ($j % 3 == 0)
		{
			print $fh <<"SQL";
SELECT memtx.begin() AS t \\gset
SELECT 'ACK A $p ' || allowed FROM memtx.act(:t, 'hold_order', '{}', ARRAY[:rec]::bigint[], 'key-$p');
SELECT count(*) AS n FROM memtx.commit(:t) \\gset
SQL
		}
		if ($j % 5 == 0)
		{
			my $q = "l$l-c$i-" . ($j - 2);
			print $fh <<"SQL";
SELECT 'ACK R $q ' || record_id FROM memtx.propose('c$i', 'k@{[$j - 2]}', '@{[$j - 2]}', proposal => '$q');
SQL
		}
		if ($j % 7 == 0)
		{
			print $fh "SELECT count(*) AS n FROM memtx.revoke(:rec) \\gset\n";
		}
	}
	close $fh;
	return $file;
}

my (%proposed, %retried, %allowed);
my ($acks, $bad_retries) = (0, 0);
for my $l (1 .. $loops)
{
	my @runs = map { start_script($node, script($l, $_)) } 1 .. $clients;
	$node->poll_query_until('postgres',
		"SELECT count(*) >= 20 FROM memtx.records WHERE proposal LIKE 'l$l-%'")
	  or die "load $l did not start";
	usleep(int(rand(1_500_000)));
	$node->kill9;
	for my $r (@runs)
	{
		$r->{h}->finish;
		for my $line (split /\n/, ${ $r->{out} })
		{
			if ($line =~ /^ACK P (\S+) (\d+)$/) { $proposed{$1} = $2; $acks++; }
			elsif ($line =~ /^ACK R (\S+) (\d+)$/)
			{
				$retried{$1} = $2;
				$bad_retries++ unless ($proposed{$1} // '') eq $2;
			}
			elsif ($line =~ /^ACK A (\S+) t$/) { $allowed{"key-$1"} = 1; }
		}
	}
	# the orphaned backends exit once they notice; then the server restarts
	my $up = 0;
	for (1 .. 60)
	{
		last if ($up = $node->start(fail_ok => 1));
		# a failed start read the killed postmaster's pid file: forget it
		$node->{_pid} = undef;
		usleep(500_000);
	}
	ok($up, "restart $l after SIGKILL of the postmaster");
	is(sql('SELECT count(*) FROM memtx.check_invariants()'), '0', "crash $l: the invariants hold");
}

ok($acks > 0, "$acks proposals were acknowledged over $loops crashes");
is($bad_retries, 0, scalar(keys %retried) . ' acknowledged retries returned their original record');

# every acknowledged proposal has its record
my %now = map { split /\|/ } split /\n/,
  sql("SELECT proposal || '|' || id FROM memtx.records WHERE proposal LIKE 'l%'");
my @lost = grep { ($now{$_} // '') ne $proposed{$_} } sort keys %proposed;
is(scalar @lost, 0, scalar(keys %proposed) . ' acknowledged proposals are present with their record'
	  . (@lost ? " (lost: @lost[0 .. ($#lost < 9 ? $#lost : 9)])" : ''));

# effect keys: each acknowledged one executed once, none twice
my %executed = map { split /\|/ } split /\n/,
  sql("SELECT effect_key || '|' || count(*) FROM memtx.action_log WHERE allowed AND effect_key IS NOT NULL GROUP BY effect_key");
my @twice = grep { $executed{$_} != 1 } sort keys %executed;
my @missing = grep { !$executed{$_} } sort keys %allowed;
is(scalar @twice, 0, 'no effect key executed twice');
is(scalar @missing, 0, scalar(keys %allowed) . ' acknowledged effect keys each executed');

ok( $node->poll_query_until('postgres', "SELECT count(*) = 0 FROM memtx.transactions WHERE status = 'open'"),
	'the transactions in flight at the crashes expire');
is(sql("SELECT string_agg(coalesce(first_bad_seq::text, 'ok'), ',') FROM memtx.verify_receipts()"),
	'ok', 'the receipt chain verifies');
is(sql('SELECT count(*) FROM memtx.check_invariants()'), '0', 'the invariants hold at the end');
amcheck_clean($node, 'after the crashes');

$node->stop;
done_testing();
