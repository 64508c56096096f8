# The durable read set (SPEC §16) keeps a read of a rolled-back savepoint in
# a shared buffer until its memtx transaction ends.  A memtx transaction
# begun in a (sub)transaction that rolls back never existed: its reads must
# leave the buffer too, including those an inner savepoint's rollback put
# there first.  Otherwise each such read kept a unit of the buffer until the
# server restarted, and once memtx.read_set_buffer units were kept every
# read of every role failed with 53400 (found by the exhaustive enumeration,
# which undoes each call by rolling its subtransaction back).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MemtxTest;

# the smallest buffer: 1,024 records read and not yet durable
my $node = memtx_node('read_buffer', 'memtx.read_set_buffer' => 1024);
$node->safe_psql('postgres',
	"SELECT memtx.propose('e', 'a' || g, '1') FROM generate_series(1, 20) g");

# 200 rounds of: a memtx transaction begun in a savepoint, read (20 records)
# in an inner savepoint that rolls back, then the outer savepoint rolls back
# too: 4,000 reads of transactions that never existed, four buffers' worth.
my ($rc, $out, $err) = $node->psql('postgres', q{
DO $$
DECLARE t bigint; n int;
BEGIN
    FOR i IN 1..200 LOOP
        BEGIN
            t := memtx.begin();
            BEGIN
                SELECT count(*) INTO n FROM memtx.read(t);
                RAISE EXCEPTION USING ERRCODE = 'no_data_found';
            EXCEPTION WHEN no_data_found THEN NULL;
            END;
            RAISE EXCEPTION USING ERRCODE = 'too_many_rows';
        EXCEPTION WHEN too_many_rows THEN NULL;
        END;
    END LOOP;
END $$});
is($rc, 0, 'every round reads: the rolled-back transactions keep no unit of the buffer')
  or diag($err);

# The same with the top transaction rolling back instead of the outer
# savepoint.
my $ok = 1;
for my $round (1 .. 60)
{
	($rc, $out, $err) = $node->psql('postgres', q{
BEGIN;
SELECT memtx.begin() AS t \gset
SAVEPOINT s;
SELECT count(*) FROM memtx.read(:t);
ROLLBACK TO SAVEPOINT s;
ROLLBACK;}, on_error_stop => 1);
	if ($rc != 0) { $ok = 0; diag($err); last; }
}
ok($ok, 'a top transaction that rolls back frees its transactions\' lost reads');

# A fresh transaction still reads (test/sql/read_durable.sql shows that a
# read of a transaction that exists still counts after its savepoint rolls
# back).
is($node->safe_psql('postgres', 'SELECT count(*) FROM memtx.read(memtx.begin())'),
	'20', 'a read after the rounds returns every record');

$node->stop;
done_testing();
