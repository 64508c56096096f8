# Hot standby: memtx.lookup needs no memtx transaction and writes nothing,
# so it answers on a streaming replica, with the same rows and permissions
# as on the primary once the primary's commits are replayed; memtx.read and
# memtx.recall join a read set that lives on the primary, so they refuse
# there with SQLSTATE 25006 and a clear message.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION memtx CASCADE');
$primary->safe_psql('postgres',
	'CREATE ROLE regress_agent_a; CREATE ROLE regress_agent_b;');

$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'the standby is in recovery');
like($standby->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	qr/memtx/, 'memtx is preloaded on the standby');

# On the primary, agent a commits a public and a private record and leaves
# one staged.
sub as_a
{
	my ($sql) = @_;
	return $primary->safe_psql('postgres', "SET ROLE regress_agent_a; $sql");
}
my $tx = as_a('SELECT memtx.begin()');
my $pub = as_a(qq{SELECT memtx.stage($tx, 'order:1', 'status', '"refund approved"', scope => 'public')});
my $priv = as_a(qq{SELECT memtx.stage($tx, 'order:1', 'note', '"customer is upset"')});
is(as_a("SELECT string_agg(state::text, ',' ORDER BY record_id) FROM memtx.commit($tx)"),
	'committed,committed', 'the primary commits both records');
my $open = as_a('SELECT memtx.begin()');
as_a(qq{SELECT memtx.stage($open, 'order:1', 'eta', '"tomorrow"', scope => 'public')});
$primary->wait_for_catchup($standby);

my $lookup = q{SELECT string_agg(id || ':' || attribute || '=' || value::text, ' ' ORDER BY id)
                 FROM memtx.lookup('order:1')};
is($standby->safe_psql('postgres', "SET ROLE regress_agent_a; $lookup"),
	qq{$pub:status="refund approved" $priv:note="customer is upset"},
	'lookup on the standby returns the replayed active records the caller may read');
is($standby->safe_psql('postgres', "SET ROLE regress_agent_b; $lookup"),
	qq{$pub:status="refund approved"},
	'another role sees only what it may read (the private record is hidden)');
is( $standby->safe_psql('postgres', "SET ROLE regress_agent_a; $lookup"),
	$primary->safe_psql('postgres', "SET ROLE regress_agent_a; $lookup"),
	'the standby answers as the primary does');
is( $standby->safe_psql('postgres',
		"SET ROLE regress_agent_a; SELECT count(*) FROM memtx.lookup('order:1', 'eta')"),
	'0', 'a staged record is not active: lookup does not return it');
is( $standby->safe_psql('postgres',
		"BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM memtx.lookup('order:1', 'status'); COMMIT"),
	'1', 'lookup runs under REPEATABLE READ on the standby');

# An as-of read writes nothing either: on the standby it answers as the
# primary does, for now and for an instant before the records were staged.
my $asof = q{SELECT string_agg(id || ':' || attribute || '=' || state, ' ' ORDER BY id)
               FROM memtx.read_as_of(now(), 'order:1')};
is( $standby->safe_psql('postgres', "SET ROLE regress_agent_a; $asof"),
	$primary->safe_psql('postgres', "SET ROLE regress_agent_a; $asof"),
	'read_as_of on the standby answers as the primary does');
is( $standby->safe_psql('postgres',
		"SET ROLE regress_agent_a; SELECT count(*) FROM memtx.read_as_of('2000-01-01', 'order:1')"),
	'0', 'nothing was active before it was staged');

# A later commit on the primary: once replayed, lookup on the standby shows it.
as_a("SELECT count(*) FROM memtx.commit($open)");
$primary->wait_for_catchup($standby);
is( $standby->safe_psql('postgres',
		"SET ROLE regress_agent_b; SELECT value FROM memtx.lookup('order:1', 'eta')"),
	'"tomorrow"', 'a commit replayed later is returned');

# read and recall refuse on the standby: their read set lives on the primary.
for my $call ("memtx.read($tx)", "memtx.recall($tx, 'refund')")
{
	my ($name) = $call =~ /^(memtx\.\w+)/;
	my ($rc, $out, $err) = $standby->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT * FROM $call");
	isnt($rc, 0, "$name fails on the standby");
	like($err, qr/ERROR:  25006: \Q$name\E cannot run during recovery/,
		"$name fails with SQLSTATE 25006 and says why");
	like($err, qr/HINT:  Read on the primary, or use memtx.lookup/,
		"${name}'s error points to the primary and to lookup");
}
# on the primary both still work for the same transaction
is(as_a("SELECT count(*) FROM memtx.recall($tx, 'refund')"), '1',
	'recall works on the primary');

$standby->stop;
$primary->stop;
done_testing();
