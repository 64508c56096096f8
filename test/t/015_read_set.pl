# The durable read set under tenancy and restarts (SPEC §17).
#
# No tenant can starve another: a session that re-reads one record in
# rolled-back subtransactions keeps it once; a session that reads ever new
# records in rolled-back transactions uses up its own share of the shared
# buffer (53400) and nobody else's — another role's session, in this
# database or another, still reads its reserved share, and more while the
# common pool has room.
#
# The durable read set survives restarts: a private value read in a
# rolled-back SQL transaction and then transcribed into a public record is
# permission_laundering after a smart or a fast restart, also when the
# reading session could not write its reads at exit (they go through the
# file the postmaster writes at shutdown); after an immediate stop (a crash)
# the transaction counts as expired and cannot commit at all.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MemtxTest;

# a small buffer: 8 reserved units per session, a common pool of 64 of which
# one session may use 16
my $node = memtx_node(
	'readset',
	'memtx.read_set_reserved' => 8,
	'memtx.read_set_buffer' => 64,
	'memtx.databases' => "''");
$node->safe_psql('postgres', q{
	CREATE ROLE rs_attacker LOGIN;
	CREATE ROLE rs_victim LOGIN;
	CREATE ROLE rs_agent LOGIN;
	CREATE DATABASE other;
});
$node->safe_psql('other', 'CREATE EXTENSION memtx CASCADE');
my $records = q{
	SELECT count(*) FROM memtx.stage_many(memtx.begin(), (SELECT jsonb_agg(jsonb_build_object(
	    'entity', 'b:' || i, 'attribute', 'a', 'value', i, 'scope', 'public')) FROM generate_series(1, 200) i));
	SELECT count(*) FROM memtx.commit((SELECT max(id) FROM memtx.transactions));
};
$node->safe_psql($_, $records) for ('postgres', 'other');

# psql with the SQLSTATE in error messages; returns (stdout, stderr)
sub run
{
	my ($db, $user, $sql) = @_;
	my ($out, $err);
	$node->psql($db, "\\set VERBOSITY verbose\n$sql",
		stdout => \$out, stderr => \$err, extra_params => ['-U', $user]);
	return ($out, $err);
}

# A DO block reading the records named by $from..$to through transaction
# $tx, each in a subtransaction that rolls back.
sub rolled_back_reads
{
	my ($tx, $from, $to, $same) = @_;
	my $entity = $same ? "'b:1'" : "'b:' || i";
	return qq{DO \$\$
	DECLARE n bigint;
	BEGIN
	  FOR i IN $from..$to LOOP
	    BEGIN
	      SELECT count(*) INTO n FROM memtx.read($tx, $entity);
	      RAISE EXCEPTION 'roll back';
	    EXCEPTION WHEN raise_exception THEN NULL;
	    END;
	  END LOOP;
	END \$\$;};
}

# ---- one session's share
my $attacker = $node->background_psql('postgres', on_error_stop => 0,
	extra_params => ['-U', 'rs_attacker', '-v', 'VERBOSITY=verbose']);
my $ta = $attacker->query_safe('SELECT memtx.begin()');
$attacker->query_safe(rolled_back_reads($ta, 1, 5000, 1));
is( $node->safe_psql('postgres',
		"SELECT lost_reads FROM memtx.read_set_usage()"),
	'1',
	'5000 rolled-back reads of one record are one lost read');

# ever new records: the attacker's share is 8 + 16 units
$attacker->query(rolled_back_reads($ta, 1, 200, 0));
like($attacker->{stderr}, qr/ERROR:  53400: this session holds too many records read/,
	'a session that reads ever new records in rolled-back transactions fails with 53400');
is( $node->safe_psql('postgres', "SELECT lost_reads FROM memtx.read_set_usage()"),
	'24', 'it holds its share of the buffer, 8 reserved and 16 of the common pool');

# another role, in this database and another: reads in one SQL transaction
# (held until it commits) as many records as its own share allows
my $read20 = sub {
	my ($db) = @_;
	my ($out, $err) = run($db, 'rs_victim', q{
		BEGIN;
		SELECT memtx.begin() AS t \gset
		SELECT sum((SELECT count(*) FROM memtx.read(:t, 'b:' || i))) FROM generate_series(1, 20) i;
		COMMIT;});
	return ($out, $err);
};
my ($out, $err) = $read20->('postgres');
is($out, '20', 'another role reads 20 records in one SQL transaction, in the same database')
  or diag $err;
($out, $err) = $read20->('other');
is($out, '20', 'and in another database') or diag $err;

# three more attacker sessions take the rest of the common pool
my @more;
for my $i (1 .. 3)
{
	my $s = $node->background_psql('postgres', on_error_stop => 0,
		extra_params => ['-U', 'rs_attacker', '-v', 'VERBOSITY=verbose']);
	my $t = $s->query_safe('SELECT memtx.begin()');
	$s->query(rolled_back_reads($t, 1, 200, 0));
	push @more, $s;
}
is( $node->safe_psql('postgres', "SELECT common_used FROM memtx.read_set_usage()"),
	'64', 'four attacker sessions use the whole common pool');
# the victim still has its reserved share, whatever the others hold
($out, $err) = run('other', 'rs_victim', q{
	BEGIN;
	SELECT memtx.begin() AS t \gset
	SELECT sum((SELECT count(*) FROM memtx.read(:t, 'b:' || i))) FROM generate_series(1, 8) i;
	COMMIT;});
is($out, '8', 'another role still reads its 8 reserved records') or diag $err;
# an attacker that disconnects writes its lost reads to memtx.read_set and frees its share
$_->quit for @more;
$node->poll_query_until('postgres',
	"SELECT common_used = 16 FROM memtx.read_set_usage()")
  or diag $node->safe_psql('postgres', 'SELECT * FROM memtx.read_set_usage()');
ok(1, 'sessions that exit give their share back');
$attacker->quit;
$node->poll_query_until('postgres', "SELECT lost_reads = 0 FROM memtx.read_set_usage()");
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM memtx.read_set WHERE tx_id = $ta"),
	'24', 'the exiting session wrote its lost reads to memtx.read_set');

# ---- restarts
$node->safe_psql('postgres', q{
	SELECT memtx.stage(memtx.begin(), 'secret', 'pin', '"4711"', readers => ARRAY['rs_agent']);
	SELECT count(*) FROM memtx.commit((SELECT max(id) FROM memtx.transactions));
});

# rs_agent begins, reads the secret in a rolled-back SQL transaction, and
# keeps the session open; returns (transaction, session)
sub read_and_roll_back
{
	my $s = $node->background_psql('postgres', extra_params => ['-U', 'rs_agent']);
	my $t = $s->query_safe('SELECT memtx.begin()');
	$s->query_safe("BEGIN; SELECT count(*) FROM memtx.read($t, 'secret', 'pin'); ROLLBACK;");
	return ($t, $s);
}

# rs_agent transcribes the secret into a public record in transaction $t
sub transcribe
{
	my ($t) = @_;
	return run('postgres', 'rs_agent', qq{
		SELECT memtx.stage($t, 'leak', 'pin', '"4711"', scope => 'public') > 0;
		SELECT state || ' ' || reason FROM memtx.commit($t);});
}

for my $mode ('smart', 'fast')
{
	my ($t, $s) = read_and_roll_back();
	# a smart shutdown waits for the session; a fast one terminates it
	$s->quit if $mode eq 'smart';
	$node->stop($mode);
	$s->quit if $mode eq 'fast';
	$node->start;
	($out, $err) = transcribe($t);
	like($out, qr/quarantined permission_laundering/,
		"after a $mode restart the rolled-back read still counts") or diag $err;
}

# the session cannot write its reads at exit (a fault): the postmaster's
# file at shutdown keeps them
$node->safe_psql('postgres', q{ALTER ROLE rs_agent SET memtx.fault_at = 'readset:flush'});
{
	my ($t, $s) = read_and_roll_back();
	$s->quit;
	$node->poll_query_until('postgres',
		"SELECT lost_reads = 1 FROM memtx.read_set_usage()");
	my $file = $node->data_dir . '/pg_stat/memtx_read_set.stat';
	$node->stop('fast');
	ok(-e $file, 'a fast shutdown writes the lost reads it still holds to a file');
	$node->start;
	ok(!-e $file, 'the next start loads the file and removes it');
	is($node->safe_psql('postgres', 'SELECT lost_reads FROM memtx.read_set_usage()'),
		'1', 'the lost read is back in the buffer');
	$node->safe_psql('postgres', q{ALTER ROLE rs_agent RESET memtx.fault_at});
	($out, $err) = transcribe($t);
	like($out, qr/quarantined permission_laundering/,
		'a read kept through the shutdown file still counts') or diag $err;
}

# immediate: a crash; the transaction open across it is expired and commits nothing
{
	my ($t, $s) = read_and_roll_back();
	my $open = $node->safe_psql('postgres',
		"SELECT array_agg(id ORDER BY id) FROM memtx.transactions WHERE status = 'open'");
	$node->stop('immediate');
	$s->quit;
	$node->start;
	($out, $err) = transcribe($t);
	like($err, qr/25P03: memtx transaction $t has expired: it was open across a restart that may have lost its reads/,
		'after an immediate stop the transaction that read cannot commit');
	like($node->safe_psql('postgres', 'SELECT memtx.read_set_lost_before() IS NOT NULL'),
		qr/t/, 'memtx.read_set_lost_before() names the point');
	is( $node->safe_psql('postgres',
			'SELECT array_agg(e ORDER BY e) FROM memtx.expire_transactions() e'),
		$open, 'expiry aborts every transaction open across the crash');
	is( $node->safe_psql('postgres',
			"SELECT status || ' ' || end_reason FROM memtx.transactions WHERE id = $t"),
		'aborted expired', 'reason expired');
	my $t3 = $node->safe_psql('postgres', 'SELECT memtx.begin()');
	is($node->safe_psql('postgres', "SELECT count(*) FROM memtx.commit($t3)"),
		'0', 'a transaction begun after the crash commits');
	# the point survives a clean restart
	$node->restart('fast');
	($out, $err) = run('postgres', 'postgres',
		"SELECT memtx.read_set_lost_before() IS NOT NULL");
	like($out, qr/t/, 'the point is kept across a clean restart');
}

$node->stop;
done_testing();
