#!/usr/bin/env bash
# pg_dump / pg_restore round trip of a populated store (runner dump,
# against the server in the PG* environment).  The dump is restored serially
# and, MEMTX_DUMP_ROUNDS times (default 3), with pg_restore -j 4, each into a
# fresh database; every restore must give back every memtx table row for row
# (count and md5 of the ordered rows) and every sequence, keep the invariants
# and keep working.  Prints TAP (the plan last; test/runners counts it, a
# run that stops early has none and counts one failure more).  Exit status 0
# when all passed.
#
# MEMTX_DUMP_VECTOR=1 (the vector runner of test/run-cluster, with pgvector):
# the store has memtx_vector too (test/vector/populate.sql: models and
# embeddings), whose HNSW indexes must come back and answer recall_similar
# as before (counted as vector_dump).
set -uo pipefail
cd "$(dirname "$0")/../.."
rounds=${MEMTX_DUMP_ROUNDS:-3}
vector=${MEMTX_DUMP_VECTOR:-}
name=dump; [ -n "$vector" ] && name=vector_dump
dump=$(mktemp /tmp/memtx-dump.XXXXXX)
trap 'rm -f "$dump"' EXIT
passed=0; failed=0
check() { if [ "$2" = "$3" ]; then passed=$((passed + 1)); echo "ok - $1"; else failed=$((failed + 1)); echo "not ok - $1: '$2' vs '$3'"; fi; }
died() { echo "$name: $1" >&2; exit 1; }
sql() { psql -X -At -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }

# one line per table of the store: name, row count, md5 of its rows in order
tables=$(cat <<'SQL'
CREATE FUNCTION pg_temp.fingerprint(t regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
    EXECUTE format('SELECT count(*) || '' '' || coalesce(md5(string_agg(x::text, E''\n'' ORDER BY x::text)), ''-'') FROM %s x', t)
       INTO r;
    RETURN r;
END $$;
SELECT c.oid::regclass || ' ' || pg_temp.fingerprint(c.oid)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'memtx' AND c.relkind = 'r' ORDER BY 1;
SQL
)
sequences="SELECT string_agg(sequencename || '=' || coalesce(last_value::text, 'unused'), ' ' ORDER BY sequencename)
             FROM pg_sequences WHERE schemaname = 'memtx'"
states="SELECT string_agg(id || ':' || state, ',' ORDER BY id) FROM memtx.records"

dropdb --if-exists memtx_dump_src 2>/dev/null
createdb memtx_dump_src || died "createdb failed"
psql -X -q -v ON_ERROR_STOP=1 -d memtx_dump_src -f test/dump/populate.sql >/dev/null || died "populating failed"
if [ -n "$vector" ]; then
    psql -X -q -v ON_ERROR_STOP=1 -d memtx_dump_src -f test/vector/populate.sql >/dev/null || died "populating memtx_vector failed"
fi
# memtx_vector: its indexes, and what recall_similar answers (empty without it)
similar="SELECT string_agg(i.indexname || ' ' || i.indexdef, E'\n' ORDER BY i.indexname) FROM pg_indexes i
          WHERE i.schemaname = 'memtx' AND i.tablename = 'embeddings'"
nearest="SET enable_seqscan = off; SET enable_sort = off;
         SELECT string_agg(e.record_id::text, ',') FROM (SELECT record_id FROM memtx.embeddings
          WHERE model = 'dump3' ORDER BY embedding::vector(3) <=> '[1,0.5,0]' LIMIT 5) e"
pg_dump -Fc -d memtx_dump_src -f "$dump" || died "pg_dump failed"
src_tables=$(psql -X -At -v ON_ERROR_STOP=1 -d memtx_dump_src <<<"$tables") || died "fingerprinting failed"
check "every table of the store was populated" "$(grep ' 0 -$' <<<"$src_tables" | cut -d' ' -f1 | xargs)" ""

# restore NAME [pg_restore options]: restores the dump into a fresh database and compares
restore() {
    local name=$1 db=memtx_dump_dst found; shift
    dropdb --if-exists $db 2>/dev/null; createdb $db || died "createdb failed"
    if ! pg_restore --exit-on-error "$@" -d $db "$dump"; then
        check "$name: pg_restore succeeds" "failed" "ok"
        return
    fi
    check "$name: every table restored row for row" \
        "$(psql -X -At -d $db <<<"$tables")" "$src_tables"
    check "$name: every sequence continues" "$(sql $db "$sequences")" "$(sql memtx_dump_src "$sequences")"
    check "$name: record states survive" "$(sql $db "$states")" "$(sql memtx_dump_src "$states")"
    check "$name: check_invariants() is empty" "$(sql $db 'SELECT count(*) FROM memtx.check_invariants()')" "0"
    # the node number (§20) is kept by the sequences' values; their bounds
    # come back with set_node of the same number
    check "$name: the store is still node 1, and set_node(1) restores its id ranges" \
        "$(sql $db "SELECT memtx.node()")|$(sql $db "SELECT memtx.set_node(1)")|$(sql $db "SELECT bool_and(
               min_value = (1::bigint << 48) + 1) FROM pg_sequences WHERE schemaname = 'memtx' AND sequencename LIKE '%id_seq'")" \
        "1||t"
    # the restored store keeps working: the open transaction commits
    if [ -n "$vector" ]; then
        check "$name: the models' HNSW indexes are back" "$(sql $db "$similar")" "$(sql memtx_dump_src "$similar")"
        check "$name: the index answers as before" "$(sql $db "$nearest")" "$(sql memtx_dump_src "$nearest")"
    fi
    check "$name: the restored store accepts commits" \
        "$(sql $db "SELECT string_agg(state::text, ',') FROM memtx.commit((SELECT max(id) FROM memtx.transactions))")" \
        "committed"
    check "$name: new ids carry node 1" "$(sql $db "SELECT memtx.id_node(memtx.begin())")" "1"
    if [ -n "$vector" ]; then
        # (after that commit, the one record a fresh transaction sees)
        found=$(sql $db "SELECT string_agg(record_id::text, ',' ORDER BY record_id)
                           FROM memtx.recall_similar(memtx.begin(), '[1,0.5,0]', 'dump3', 1000)")
        check "$name: recall_similar finds what read shows, and something" "${found:-nothing}" \
            "$(sql $db "SELECT string_agg(r.id::text, ',' ORDER BY r.id) FROM memtx.read(memtx.begin()) r
                         WHERE EXISTS (SELECT FROM memtx.embeddings e WHERE e.record_id = r.id AND e.model = 'dump3')")"
    fi
    check "$name: the restored receipt chain continues and verifies" \
        "$(sql $db "SELECT string_agg(coalesce(first_bad_seq::text, 'ok'), ',') FROM memtx.verify_receipts()")" \
        "$(sql memtx_dump_src "SELECT string_agg('ok', ',') FROM memtx.verify_receipts()")"
    dropdb $db
}

restore "serial restore"
for i in $(seq 1 "$rounds"); do
    restore "pg_restore -j 4, round $i" -j 4
done

dropdb memtx_dump_src
echo "1..$((passed + failed))"
echo "# $name: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
