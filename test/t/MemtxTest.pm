# Helpers shared by the memtx TAP tests: a cluster with memtx preloaded and
# its background worker watching database "postgres".
package MemtxTest;

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use IPC::Run;

use Exporter 'import';
our @EXPORT = qw(memtx_node worker_pid launcher_pid wait_for_worker
  wait_for_new_worker notifications start_script memtx_fingerprint amcheck_clean
  store_fingerprint_query default_version);

# A started node with memtx installed in "postgres".  %conf: extra lines of
# postgresql.conf, keyed by setting name.
sub memtx_node
{
	my ($name, %conf) = @_;
	my %settings = (
		'memtx.databases' => "'postgres'",
		'memtx.worker_naptime' => '1',
		%conf);
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf',
		join('', map { "$_ = $settings{$_}\n" } sort keys %settings));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION memtx CASCADE');
	return $node;
}

# The default version of memtx's control file where $node's server reads it
# (test/sql/include/default_version.psql: under extension_destdir first;
# pg_available_extensions does not list a private install tree).
sub default_version
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		slurp_file('test/sql/include/default_version.psql') . "\n\\echo :default_version\n");
}

# PID of the memtx worker of $db ('' when none runs).
sub worker_pid
{
	my ($node, $db) = @_;
	$db //= 'postgres';
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'memtx worker' AND datname = '$db'"
	);
}

sub launcher_pid
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'memtx launcher'");
}

# Waits until exactly one worker runs for $db; returns its PID.
sub wait_for_worker
{
	my ($node, $db) = @_;
	$db //= 'postgres';
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'memtx worker' AND datname = '$db'"
	) or return '';
	return worker_pid($node, $db);
}

# Waits until the worker of $db runs with a PID other than $old.
sub wait_for_new_worker
{
	my ($node, $old, $db) = @_;
	$db //= 'postgres';
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'memtx worker' AND datname = '$db' AND pid <> $old"
	) or return '';
	return worker_pid($node, $db);
}

# The payloads psql printed for channel memtx in $text, in order.
sub notifications
{
	my ($text) = @_;
	my @payloads;
	while ($text =~
		/Asynchronous notification "memtx" with payload "(.*?)" received from server process/g)
	{
		push @payloads, $1;
	}
	return @payloads;
}

# Starts psql on an SQL script against "postgres" in the background, in
# unaligned tuples-only mode, stopping at the first error; returns
# { h => the IPC::Run handle, out => \stdout, err => \stderr }.  psql prints
# a result only after its SQL transaction committed.
sub start_script
{
	my ($node, $script) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'psql', '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1',
			'-d', $node->connstr('postgres'), '-f', $script
		],
		'<', \undef, '>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err };
}

# Every memtx table of "postgres", row for row: its name and the md5 of its
# rows in text order, for comparing the store before and after a call.
sub memtx_fingerprint
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
	SELECT string_agg(c.relname || '=' || (xpath('/row/m/text()', query_to_xml(format(
	         'SELECT md5(coalesce(string_agg(t::text, %L ORDER BY t::text), %L)) AS m FROM memtx.%I t',
	         ',', '', c.relname), false, true, '')))[1]::text, ' ' ORDER BY c.relname)
	  FROM pg_class c WHERE c.relnamespace = 'memtx'::regnamespace AND c.relkind = 'r'});
}

# A query that fingerprints the rows of every memtx table of "postgres" as
# the store holds them now — its tables and their columns, fixed here — so
# that after an upgrade, which may add tables and (NULL-defaulted) columns,
# it compares exactly what the old release had.
sub store_fingerprint_query
{
	my ($node) = @_;
	my $layout = $node->safe_psql('postgres', q{
	SELECT string_agg(t::text || ':' || (SELECT string_agg(quote_ident(a.attname), ',' ORDER BY a.attnum)
	                                      FROM pg_attribute a
	                                     WHERE a.attrelid = t AND a.attnum > 0 AND NOT a.attisdropped),
	                  ' ' ORDER BY t::text)
	  FROM (SELECT c.oid::regclass FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	         WHERE n.nspname = 'memtx' AND c.relkind = 'r') s(t)});
	return qq{
	CREATE OR REPLACE FUNCTION pg_temp.fp(t regclass, cols text) RETURNS text LANGUAGE plpgsql AS \$\$
	DECLARE r text;
	BEGIN
		EXECUTE format('SELECT count(*) || '':'' || coalesce(md5(string_agg(x::text, ''|'' ORDER BY x::text)), '''') FROM (SELECT %s FROM %s) x', cols, t) INTO r;
		RETURN r;
	END \$\$;
	SELECT string_agg(split_part(l, ':', 1) || '=' || pg_temp.fp(split_part(l, ':', 1)::regclass, split_part(l, ':', 2)),
	                  ' ' ORDER BY l)
	  FROM regexp_split_to_table('$layout', ' ') l;};
}

# amcheck on every memtx table and btree index of "postgres" (the amcheck
# extension installed): two test results, named after $when.
sub amcheck_clean
{
	my ($node, $when) = @_;
	is( $node->safe_psql(
			'postgres', q{
		SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
		       LATERAL verify_heapam(c.oid)
		 WHERE n.nspname = 'memtx' AND c.relkind = 'r'}),
		'0',
		"verify_heapam finds nothing on memtx tables $when");
	ok( $node->safe_psql(
			'postgres', q{
		SELECT count(*) FROM (SELECT bt_index_check(c.oid, true)
		  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		  JOIN pg_am a ON a.oid = c.relam
		 WHERE n.nspname = 'memtx' AND c.relkind = 'i' AND a.amname = 'btree') s}) > 0,
		"bt_index_check passes on memtx indexes $when");
	return;
}

1;
