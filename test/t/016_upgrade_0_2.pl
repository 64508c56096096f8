# Releases keep the data: a store written by the memtx 0.2.0 library through
# the API survives the move to the current library and ALTER EXTENSION memtx
# UPDATE row for row, and its proposal ids, re-keyed per agent (SPEC §17),
# keep answering: each agent's outcome and retries find its own proposals,
# and an id another agent used before is free for a new proposal.
#
# test/run-tap builds the 0.2.0 library from its release commit into
# $MEMTX_OLD2_DESTDIR; the cluster first loads it from there through
# Debian's extension_destdir, then restarts on the current library.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MemtxTest;

my $old = $ENV{MEMTX_OLD2_DESTDIR};
plan skip_all => 'MEMTX_OLD2_DESTDIR (the 0.2.0 build) is not set'
  unless $old && -d $old;

my $node = PostgreSQL::Test::Cluster->new('upgrade02');
$node->init;
# phase 1: the 0.2.0 library, preloaded from its own tree
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'memtx'
extension_destdir = '$old'
dynamic_library_path = '$old/usr/lib/postgresql/15/lib:\$libdir'
memtx.databases = ''
CONF
$node->start;
is(default_version($node), '0.2.0', 'phase 1 sees the 0.2.0 release');
$node->safe_psql('postgres', q{
	CREATE EXTENSION memtx CASCADE;
	CREATE ROLE agent_a; CREATE ROLE agent_b;
	SELECT memtx.register_source('crm', 0.8);
	SELECT memtx.register_tool('refund', false);
});
my $as = sub {
	my ($role, $sql) = @_;
	return $node->safe_psql('postgres', "SET ROLE $role; $sql");
};
# proposals of two agents, a superseding one, a quarantined one, an action
$as->('agent_a', q{SELECT memtx.propose('order:1', 'status', '"open"', proposal => 'a-1', scope => 'public')});
$as->('agent_b', q{SELECT memtx.propose('order:2', 'status', '"new"', proposal => 'b-1', scope => 'public')});
$as->('agent_a', q{SELECT memtx.propose('order:1', 'status', '"paid"', proposal => 'a-2', expected_head => 1, scope => 'public')});
$as->('agent_a', q{SELECT memtx.propose('order:3', 'status', '"x"', proposal => 'a-3', confidence => 0.1)});
$as->('agent_a', q{
	SELECT memtx.act(t, 'refund', '{"order": 1}', ARRAY[3]::bigint[], effect_key => 'refund-1')
	  FROM (SELECT memtx.begin() AS t) s});
# the tables and columns of the 0.2.0 store: the fingerprint compares those
my $fingerprint = store_fingerprint_query($node);
$node->safe_psql('postgres', 'SELECT memtx.chain_receipts()');
my $before = $node->safe_psql('postgres', $fingerprint);
is($node->safe_psql('postgres', 'SELECT count(*) FROM memtx.records WHERE proposal IS NOT NULL'),
	'4', 'the 0.2.0 store holds four proposals of two agents');

# phase 2: the current library, then the update
my $current = $ENV{MEMTX_DESTDIR} // '';
my $libdir = `pg_config --pkglibdir`;
chomp $libdir;
$node->append_conf('postgresql.conf', <<"CONF");
extension_destdir = '$current'
dynamic_library_path = '$current$libdir:\$libdir'
CONF
$node->restart;
$node->safe_psql('postgres', 'ALTER EXTENSION memtx UPDATE');
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'memtx'"),
	default_version($node), 'updated to the default version');
is($node->safe_psql('postgres', $fingerprint), $before, 'every row of every 0.2.0 table is unchanged');
is($node->safe_psql('postgres',
		q{SELECT string_agg(proposal || ':' || proposer, ' ' ORDER BY proposal) FROM memtx.records WHERE proposal IS NOT NULL}),
	'a-1:agent_a a-2:agent_a a-3:agent_a b-1:agent_b', 'each proposal is re-keyed to its agent');
is($node->safe_psql('postgres', 'SELECT count(*) FROM memtx.check_invariants()'), '0',
	'the invariants hold');
is($node->safe_psql('postgres',
		q{SELECT string_agg(coalesce(first_bad_seq::text, 'ok'), ',') FROM memtx.verify_receipts()}),
	'ok', 'the receipts verify');

# the proposals keep answering, per agent
is($as->('agent_a', q{SELECT state || '/' || coalesce(reason, '') FROM memtx.outcome('a-3')}),
	'quarantined/low_evidence', "an agent's outcome finds its proposal");
is($as->('agent_b', q{SELECT count(*) FROM memtx.outcome('a-1')}), '0',
	"another agent's proposal is not the caller's");
is($as->('agent_a', q{SELECT record_id FROM memtx.propose('order:1', 'status', '"open"', proposal => 'a-1', scope => 'public')}),
	'1', 'a retry of a proposal made at 0.2.0 returns its record');
is($as->('agent_b', q{SELECT state FROM memtx.propose('order:9', 'status', '"b"', proposal => 'a-1', scope => 'public')}),
	'committed', "an id another agent used is free for a new proposal");
is($node->safe_psql('postgres', "SELECT count(*) FROM memtx.outcome('a-1', agent => 'agent_b')"),
	'1', 'a harness asks about any agent');
is($node->safe_psql('postgres', 'SELECT count(*) FROM memtx.check_invariants()'), '0',
	'the invariants still hold');

$node->stop;
done_testing();
