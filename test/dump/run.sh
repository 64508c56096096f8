#!/usr/bin/env bash
# pg_dump / pg_restore round trip of a populated store (part of test/run-cluster).
# Writes "passed failed" to $MEMTX_TEST_OUT/dump.count: one check per table's
# row count, the sequences, and memtx.check_invariants() after the restore.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${MEMTX_TEST_OUT:?}
dump=$(mktemp /tmp/memtx-dump.XXXXXX)
passed=0; failed=0
check() { if [ "$2" = "$3" ]; then passed=$((passed + 1)); echo "ok - $1"; else failed=$((failed + 1)); echo "not ok - $1: '$2' vs '$3'"; fi; }

dropdb --if-exists memtx_dump_src; dropdb --if-exists memtx_dump_dst
createdb memtx_dump_src && createdb memtx_dump_dst || { touch "$out/dump.died"; exit 1; }
psql -X -q -v ON_ERROR_STOP=1 -d memtx_dump_src -f test/dump/populate.sql >/dev/null || { touch "$out/dump.died"; exit 1; }
pg_dump -Fc -d memtx_dump_src -f "$dump" || { touch "$out/dump.died"; exit 1; }
pg_restore --exit-on-error -d memtx_dump_dst "$dump" || { touch "$out/dump.died"; exit 1; }

q=$(cat <<'SQL'
SELECT string_agg(t || '=' || n, ' ' ORDER BY t) FROM (
    SELECT 'records' t, count(*) n FROM memtx.records UNION ALL
    SELECT 'edges', count(*) FROM memtx.edges UNION ALL
    SELECT 'transactions', count(*) FROM memtx.transactions UNION ALL
    SELECT 'read_set', count(*) FROM memtx.read_set UNION ALL
    SELECT 'registry', count(*) FROM memtx.revocation_registry UNION ALL
    SELECT 'action_log', count(*) FROM memtx.action_log UNION ALL
    SELECT 'rollback_log', count(*) FROM memtx.rollback_log UNION ALL
    SELECT 'compensations', count(*) FROM memtx.compensations UNION ALL
    SELECT 'sources', count(*) FROM memtx.sources UNION ALL
    SELECT 'tools', count(*) FROM memtx.tools) s
SQL
)
src=$(psql -X -At -d memtx_dump_src -c "$q")
dst=$(psql -X -At -d memtx_dump_dst -c "$q")
check "row counts match after restore ($src)" "$src" "$dst"
check "every table of the store was populated" "$(echo "$src" | grep -c '=0\b')" "0"
seq='SELECT last_value FROM memtx.record_id_seq'
check "record ids continue after restore" "$(psql -X -At -d memtx_dump_src -c "$seq")" "$(psql -X -At -d memtx_dump_dst -c "$seq")"
check "check_invariants() is empty after restore" "$(psql -X -At -d memtx_dump_dst -c 'SELECT count(*) FROM memtx.check_invariants()')" "0"
states="SELECT string_agg(id || ':' || state, ',' ORDER BY id) FROM memtx.records"
check "record states survive" "$(psql -X -At -d memtx_dump_src -c "$states")" "$(psql -X -At -d memtx_dump_dst -c "$states")"
# the restored store keeps working: the open transaction commits
check "the restored store accepts commits" "$(psql -X -At -d memtx_dump_dst -c "SELECT string_agg(state::text, ',') FROM memtx.commit((SELECT max(id) FROM memtx.transactions))")" "committed"

rm -f "$dump"
dropdb memtx_dump_src; dropdb memtx_dump_dst
echo "$passed $failed" >"$out/dump.count"
