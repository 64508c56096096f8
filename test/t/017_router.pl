# memtx across servers behind a router (SPEC §20): two memtx nodes on
# servers of their own, a hot standby of node 1, and a router server with
# two router databases, one over both primaries and one whose node 1 is the
# standby.  Writes go through the router to the node of their namespace; the
# standby serves lookup and read_as_of through the read router (also while
# node 1's primary is down) and refuses writes with the node's own 25006.
# Node 1 is stopped while clients commit on node 0 through the router:
# node 1's namespace fails with 08001/08006 naming node 1, node 0's keeps
# committing without a single failure, nothing is half-applied, and node 1
# takes writes again once it is back.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Digest::SHA qw(sha256);

# memtx.node_of by its definition: the namespace on node $node of 2
sub namespace_on
{
	my ($base, $node) = @_;
	for my $k (0 .. 1000)
	{
		my $ns = "$base-$k";
		my $hash = unpack('N', substr(sha256($ns), 0, 4)) & 0x7fffffff;
		return $ns if $hash % 2 == $node;
	}
	die "no namespace";
}
my @ns = (namespace_on('tenant', 0), namespace_on('tenant', 1));

my @nodes;
for my $i (0, 1)
{
	my $node = PostgreSQL::Test::Cluster->new("node$i");
	$node->init(allows_streaming => ($i == 1 ? 1 : 0));
	$node->start;
	$node->safe_psql('postgres',
		"SET client_min_messages = warning; CREATE EXTENSION memtx CASCADE; SELECT memtx.set_node($i);"
		  . " CREATE ROLE agent LOGIN; CREATE EXTENSION amcheck;");
	push @nodes, $node;
}
$nodes[1]->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('node1_standby');
$standby->init_from_backup($nodes[1], 'base', has_streaming => 1);
$standby->start;

my $router = PostgreSQL::Test::Cluster->new('router');
$router->init;
$router->start;
$router->safe_psql('postgres', 'CREATE ROLE agent LOGIN');
sub partition
{
	my ($node) = @_;
	return sprintf("host=%s port=%d dbname=postgres", $node->host, $node->port);
}
for my $db (['memtx', $nodes[1]], ['memtx_read', $standby])
{
	my ($name, $second) = @$db;
	$router->safe_psql('postgres', "CREATE DATABASE $name");
	$router->safe_psql(
		$name, sprintf(
			q{SET client_min_messages = warning;
			  CREATE EXTENSION memtx_router CASCADE;
			  CREATE SERVER memtx_nodes FOREIGN DATA WRAPPER plproxy OPTIONS (p0 '%s', p1 '%s');
			  GRANT USAGE ON FOREIGN SERVER memtx_nodes TO PUBLIC;
			  CREATE USER MAPPING FOR PUBLIC SERVER memtx_nodes;},
			partition($nodes[0]), partition($second)));
}
is($router->safe_psql('memtx', 'SELECT count(*) FROM memtx_router.check_nodes()'),
	'0', 'the router is the twin of its two nodes');
is($router->safe_psql('memtx_read', 'SELECT count(*) FROM memtx_router.check_nodes()'),
	'0', 'the read router is the twin of node 0 and of node 1\'s standby');

# through the router, as the agent and as the harness
sub routed
{
	my ($db, $sql, %opts) = @_;
	my ($rc, $out, $err) = $router->psql(
		$db, "\\set VERBOSITY verbose\n$sql",
		extra_params => [ '-U', $opts{user} // 'agent' ]);
	return ($rc, $out, $err);
}
$router->safe_psql('memtx', "SELECT memtx.grant_namespace('$_', 'agent')") for @ns;
$router->safe_psql('memtx', "SELECT memtx.register_source('crm', 0.8)");
is( join(',', map { $_->safe_psql('postgres', "SELECT count(*) FROM memtx.sources WHERE name = 'crm'") } @nodes),
	'1,1', 'a registry call reaches both servers');

my %id;
for my $i (0, 1)
{
	my ($rc, $out, $err) = routed('memtx',
		"SELECT record_id FROM memtx.propose('order:1', 'status', '\"paid\"', source => 'crm', namespace => '$ns[$i]')");
	is($rc, 0, "a proposal in node ${i}'s namespace commits through the router") or diag($err);
	$id{$i} = $out;
	is($nodes[$i]->safe_psql('postgres', "SELECT state FROM memtx.records WHERE id = $out"),
		'committed', "it is on node ${i}'s server");
	is($nodes[$i]->safe_psql('postgres', "SELECT memtx.id_node($out)"), $i, "its id carries node $i");
}

# the standby of node 1 serves lookup and read_as_of
$nodes[1]->wait_for_catchup($standby);
my $lookup = "SELECT string_agg(id || ':' || value::text || ':' || state, ' ' ORDER BY id) FROM memtx.lookup('order:1', namespace => '$ns[1]')";
my $asof = "SELECT string_agg(id || ':' || state, ' ' ORDER BY id) FROM memtx.read_as_of(now(), 'order:1', namespace => '$ns[1]')";
my (undef, $primary_lookup) = routed('memtx', $lookup);
my (undef, $primary_asof) = routed('memtx', $asof);
is($primary_lookup, qq{$id{1}:"paid":committed}, 'lookup through the router');
my ($rc, $out, $err) = routed('memtx_read', $lookup);
is($out, $primary_lookup, 'node 1\'s standby answers lookup through the read router as the primary does');
($rc, $out, $err) = routed('memtx_read', $asof);
is($out, $primary_asof, 'and read_as_of');
($rc, $out, $err) = routed('memtx_read',
	"SELECT * FROM memtx.propose('order:2', 'status', '\"new\"', namespace => '$ns[1]')");
like($err, qr/ERROR:  25006: /, 'a write through the read router gets the standby\'s own 25006');
($rc, $out, $err) = routed('memtx_read',
	"SELECT record_id FROM memtx.propose('order:2', 'status', '\"new\"', namespace => '$ns[0]')");
is($rc, 0, 'node 0\'s namespace still takes writes through the read router');

# load on node 0's namespace through the router while node 1 goes down
my $script = "${PostgreSQL::Test::Utils::tmp_check}/load.pgb";
open my $fh, '>', $script or die $!;
print $fh "\\set k random(1, 1000000000)\n"
  . "SELECT memtx.propose('item:' || :k, 'n', '1', namespace => '$ns[0]');\n";
close $fh;
my ($bench_out, $bench_err) = ('', '');
my $bench = IPC::Run::start(
	[
		'pgbench', '-n', '-M', 'simple', '-c', '2', '-j', '2', '-T', '8',
		'-h', $router->host, '-p', $router->port, '-U', 'agent', '-f', $script, 'memtx'
	],
	'>', \$bench_out, '2>', \$bench_err);

sub node1_call
{
	my ($k) = @_;
	return routed('memtx',
		"SELECT 'ACK ' || record_id FROM memtx.propose('load:$k', 'n', '$k', proposal => 'load-$k', namespace => '$ns[1]')");
}
my (@acked, @refused);
for my $k (1 .. 3)
{
	my ($rc, $out, $err) = node1_call($k);
	push @acked, $k if $out =~ /^ACK /;
}
is(scalar(@acked), 3, 'node 1 commits before it goes down');
my $stop_at = $nodes[0]->safe_psql('postgres', 'SELECT clock_timestamp()');
$nodes[1]->stop('fast');
my @errors;
for my $k (4 .. 9)
{
	my ($rc, $out, $err) = node1_call($k);
	push @errors, $err if $rc != 0;
	push @acked, $k if $out =~ /^ACK /;
}
is(scalar(@errors), 6, 'every call for node 1\'s namespace fails while it is down');
is( scalar(grep { /ERROR:  080(01|06): memtx node 1 (is unreachable|failed during the call)/ } @errors),
	6, 'each with 08001 or 08006, naming node 1') or diag(join("\n", @errors));
ok( (grep { /ERROR:  08001: memtx node 1 is unreachable/ } @errors),
	'a call that cannot reach node 1 is 08001 (nothing was sent)');
($rc, $out, $err) = routed('memtx_read', $lookup);
is($out, $primary_lookup, 'node 1\'s standby keeps answering lookup while its primary is down');
sleep(1);
my $start_at = $nodes[0]->safe_psql('postgres', 'SELECT clock_timestamp()');
$nodes[1]->start;
my @after;
for my $k (10 .. 14)
{
	my ($rc, $out, $err) = node1_call($k);
	push @after, $k if $out =~ /^ACK /;
	push @acked, $k if $out =~ /^ACK /;
}
ok(scalar(@after) >= 4, 'node 1 takes writes again once it is back (the first call may meet a stale connection)');
$bench->finish;
like($bench_out, qr/number of failed transactions: 0 /, 'the load on node 0\'s namespace had no failure');
my ($done) = $bench_out =~ /number of transactions actually processed: (\d+)/;
ok(defined $done && $done > 0, "the load committed ($done proposals)") or diag($bench_out . $bench_err);
ok( $nodes[0]->safe_psql(
		'postgres',
		"SELECT count(*) FROM memtx.records WHERE namespace = '$ns[0]' AND entity LIKE 'item:%' "
		  . "AND created_at BETWEEN '$stop_at' AND '$start_at'") > 0,
	'node 0 committed while node 1 was down');

# nothing half-applied
my %states = map { split /\|/ } split /\n/, $nodes[1]->safe_psql('postgres',
	"SELECT proposal, state FROM memtx.records WHERE namespace = '$ns[1]' AND proposal IS NOT NULL");
is(scalar(grep { ($states{"load-$_"} // '') ne 'committed' } @acked), 0,
	'every acknowledged proposal on node 1 is committed');
is(scalar(grep { defined $states{"load-$_"} && $states{"load-$_"} ne 'committed' } 1 .. 14), 0,
	'no proposal on node 1 is in any other state');
is($nodes[1]->safe_psql('postgres', "SELECT count(*) FROM memtx.transactions WHERE status = 'open'"),
	'0', 'no memtx transaction is left open on node 1');
is($router->safe_psql('memtx', 'SELECT count(*) FROM memtx.check_invariants()'),
	'0', 'check_invariants() through the router is empty on both servers');
is( $router->safe_psql('memtx',
		'SELECT count(*) FROM memtx.verify_receipts() WHERE first_bad_seq IS NOT NULL'),
	'0', 'every receipt chain verifies on both servers');
for my $i (0, 1)
{
	is( $nodes[$i]->safe_psql('postgres',
			q{SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
			         LATERAL verify_heapam(c.oid) WHERE n.nspname = 'memtx' AND c.relkind = 'r'}),
		'0', "verify_heapam finds nothing on node $i");
}

$bench->kill_kill if $bench->pumpable;
$_->stop for ($router, $standby, @nodes);
done_testing();
