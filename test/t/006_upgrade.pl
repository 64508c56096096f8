# Releases keep the data: a store written by the memtx 0.1.0 library
# through the API survives the move to the current library and
# ALTER EXTENSION memtx UPDATE row for row, and keeps working.
#
# test/run-tap builds the 0.1.0 library from the base commit into
# $MEMTX_OLD_DESTDIR (make install DESTDIR=...); the cluster first loads it
# from there through Debian's extension_destdir, then restarts on the
# installed library.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MemtxTest;

my $old = $ENV{MEMTX_OLD_DESTDIR};
plan skip_all => 'MEMTX_OLD_DESTDIR (the 0.1.0 build) is not set'
  unless $old && -d $old;

my $libdir = `pg_config --pkglibdir`;
chomp $libdir;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
# phase 1: only the 0.1.0 library (nothing preloaded, so the current one
# never enters a backend)
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = ''
extension_destdir = '$old'
CONF
$node->start;

is(default_version($node), '0.1.0', 'phase 1 sees the 0.1.0 release');
$node->safe_psql('postgres', 'CREATE EXTENSION memtx CASCADE');
$node->safe_psql('postgres', slurp_file('test/t/upgrade_populate.sql'));
like($node->safe_psql('postgres',
		"SELECT probin FROM pg_proc WHERE proname = 'begin' AND pronamespace = 'memtx'::regnamespace"),
	qr/memtx/, 'the API functions are bound to the memtx module');

# The tables and columns of the 0.1.0 store; later steps may add tables and
# (NULL-defaulted) columns, and the fingerprint compares what 0.1.0 had.
my $fingerprint = store_fingerprint_query($node);
my $sequences = q{SELECT string_agg(sequencename || '=' || last_value, ' ' ORDER BY sequencename)
	FROM pg_sequences WHERE schemaname = 'memtx'};
my $states = q{SELECT string_agg(state || ':' || n, ' ' ORDER BY state) FROM
	(SELECT state, count(*) n FROM memtx.records GROUP BY state) s};
my $kinds = q{SELECT string_agg(kind || ':' || n, ' ' ORDER BY kind) FROM
	(SELECT kind, count(*) n FROM memtx.records GROUP BY kind) s};

# (stats's columns of 0.1.0: later columns are added at the end, see test/sql/stats_columns.sql)
my $views = q{SELECT (SELECT coalesce(string_agg(record_id || ':' || rival_ids::text, ' ' ORDER BY record_id), '')
	FROM memtx.review_queue) || ' / ' || (SELECT row_to_json(s)::text FROM (SELECT transactions,
	open_transactions, commits, quarantines, quarantines_by_reason, verifier_calls, actions_allowed,
	gate_blocks, cascades, leaks, compensations, in_flight FROM memtx.stats) s)};
my $before = $node->safe_psql('postgres', $fingerprint);
my $views_before = $node->safe_psql('postgres', $views);
like($views_before, qr/^\d+:\{\d+\} /, 'a record awaits review, with its rival');
my $seq_before = $node->safe_psql('postgres', $sequences);
is($node->safe_psql('postgres', $states),
	'tentative:1 committed:2 action_safe:1 quarantined:4 superseded:1 revoked:5',
	'the 0.1.0 store holds every state at rest');
is($node->safe_psql('postgres', $kinds),
	'belief:8 summary:1 profile:1 index_entry:1 shared_copy:1 tool_action:2',
	'and every kind');
unlike($before, qr/=0:/, 'every table of the store has rows');
is($node->safe_psql('postgres', 'SELECT count(*) FROM memtx.check_invariants()'),
	'0', 'the 0.1.0 store keeps its invariants');

# phase 2: the installed (current) library, preloaded as in production;
# with MEMTX_DESTDIR, the build test/run installed there (the cluster
# configuration already finds its library there, see test/run)
my $current = $ENV{MEMTX_DESTDIR} // '';
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'memtx'
extension_destdir = '$current'
CONF
$node->restart;

my ($rc, $out, $err) = $node->psql('postgres', 'SELECT memtx.begin()');
isnt($rc, 0, 'before the update the current library refuses the 0.1.0 catalog');
like($err, qr/cannot run over catalog version 0\.1\.0/, 'with the message that says so');
like($err, qr/ALTER EXTENSION memtx UPDATE/, 'and the hint to update');

$node->safe_psql('postgres', 'ALTER EXTENSION memtx UPDATE');
my $version = default_version($node);
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'memtx'"),
	$version, "updated to $version");

is($node->safe_psql('postgres', $fingerprint), $before, 'every row of every 0.1.0 table is unchanged');
# (sequences that are new in the update, such as receipt_order, are not compared)
my $old_sequences = join(',', map { "'" . (split /=/)[0] . "'" } split / /, $seq_before);
is($node->safe_psql('postgres', $sequences =~ s/WHERE /WHERE sequencename IN ($old_sequences) AND /r),
	$seq_before, 'every sequence is where it was');
is($node->safe_psql('postgres', 'SELECT count(*) FROM memtx.check_invariants()'),
	'0', 'check_invariants() is empty after the update');
is($node->safe_psql('postgres', $views), $views_before,
	'the redefined review_queue and stats views show what the 0.1.0 ones showed');

# history is backfilled: every record has a row at staging, and its last
# row (by position) is its current state and reason
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM memtx.records r
	 WHERE NOT EXISTS (SELECT 1 FROM memtx.history h WHERE h.record_id = r.id AND h.pos = r.staged_pos)
	    OR (SELECT row(h.state, h.reason) FROM memtx.history h WHERE h.record_id = r.id
	         ORDER BY h.pos DESC, h.at DESC LIMIT 1) IS DISTINCT FROM row(r.state, r.reason)}),
	'0', 'history is backfilled: each record staged, then in its current state');

# receipts are backfilled: one per disposition made at 0.1.0 (check_invariants
# above compares them), and the first chaining chains them into a chain that
# verifies
like($node->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE (body->>'backfilled')::boolean) || ' ' || count(*) FROM memtx.receipts}),
	qr/^([1-9]\d*) \1$/, 'receipts are backfilled for the dispositions made at 0.1.0');
is($node->safe_psql('postgres', q{
	SELECT string_agg(coalesce(first_bad_seq::text, 'ok'), ',') FROM memtx.verify_receipts()}),
	'ok', 'the backfilled receipts chain and verify');
# their order is that of their times, not of each record's changes, yet a
# record a receipt revoked stays revoked (SPEC §17): one made active again
# behind the API is found
like($node->safe_psql('postgres', q{
	BEGIN;
	SET LOCAL session_replication_role = replica;
	UPDATE memtx.records SET state = 'committed', reason = NULL
	 WHERE id = (SELECT min(subject) FROM memtx.receipts WHERE kind = 'retract' AND reason = 'revoked'
	                AND body->>'subject_is' = 'record');
	SELECT first_bad_seq || ' ' || detail FROM memtx.verify_receipts();
	ROLLBACK;}),
	qr/^\d+ receipt \d+ last settled record \d+ as \w+, but it is committed$/,
	'a revoked record made active behind the API is found in the upgraded store');

# the store keeps working.  The transaction left open at 0.1.0 was open
# across a restart that kept no read set (an older library keeps it in
# memory only): its reads may be lost, so it counts as expired (SPEC §17)
# and expiry aborts it; a new one commits, the gate answers, a revoke
# cascades
my $open = $node->safe_psql('postgres', "SELECT id FROM memtx.transactions WHERE status = 'open'");
($rc, $out, $err) = $node->psql('postgres', "SELECT * FROM memtx.commit($open)");
like($err, qr/has expired: it was open across a restart that may have lost its reads/,
	'the transaction left open at 0.1.0 counts as expired');
is($node->safe_psql('postgres', 'SELECT array_agg(e) FROM memtx.expire_transactions() e'),
	"{$open}", 'expiry aborts it');
is($node->safe_psql('postgres', q{
	SELECT memtx.stage(memtx.begin(), 'order:6', 'eligible', 'true') >
	       (SELECT max(id) FROM memtx.records WHERE id < (SELECT max(id) FROM memtx.records))}),
	't', 'new records continue the id sequence');
is($node->safe_psql('postgres', q{
	SELECT string_agg(state::text, ',') FROM memtx.commit((SELECT max(id) FROM memtx.transactions))}),
	'committed', 'and commit');
is($node->safe_psql('postgres', q{
	SELECT allowed FROM memtx.gate((SELECT max(id) FROM memtx.transactions), 'send_email')}),
	't', 'the gate answers');
is($node->safe_psql('postgres', q{
	SELECT count(*) > 0 FROM memtx.revoke((SELECT max(id) FROM memtx.records), 'upgrade test')}),
	't', 'a revoke writes its rollback log');
is($node->safe_psql('postgres', 'SELECT count(*) FROM memtx.check_invariants()'),
	'0', 'and the invariants still hold');
is($node->safe_psql('postgres', q{
	SELECT string_agg(coalesce(first_bad_seq::text, 'ok'), ',') FROM memtx.verify_receipts()}),
	'ok', 'the receipts of the new dispositions continue the chain');

$node->stop;
done_testing();
