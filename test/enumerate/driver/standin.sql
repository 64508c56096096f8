-- A small stand-in for memtx_enum (the enumeration's definition of the
-- graph, test/enumerate/enumerate.sql), with the same signatures: the graph
-- of run-c's self-test, where faults are planted.  Two agents (roles
-- memtx_enum_a, _b, made here when missing) begin, stage one of two values
-- on one slot, commit, abort, and revoke committed records.  Not
-- symmetry-reduced: ids are renamed by rank.  Each call's probe is its
-- statement, which returns one text value.
CREATE SCHEMA memtx_enum;

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'memtx_enum_a') THEN
        CREATE ROLE memtx_enum_a NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'memtx_enum_b') THEN
        CREATE ROLE memtx_enum_b NOLOGIN;
    END IF;
END
$$;

CREATE FUNCTION memtx_enum.actions(max_records integer, max_tx integer,
                                   alphabet text DEFAULT 'papers')
    RETURNS TABLE (caller text, call jsonb, stmt text, label text, probe text)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH n AS (SELECT (SELECT count(*) FROM memtx.transactions) AS tx,
                      (SELECT count(*) FROM memtx.records) AS rec),
    calls AS (
        SELECT 1 AS ord, a.agent AS caller, 0::bigint AS id, '' AS arg,
               jsonb_build_object('op', 'begin') AS call,
               'SELECT memtx.begin()::text' AS stmt
          FROM n, (VALUES ('memtx_enum_a'), ('memtx_enum_b')) a (agent)
         WHERE n.tx < max_tx
        UNION ALL
        SELECT 2, t.agent, t.id, v.v, jsonb_build_object('op', 'stage', 'tx', t.id, 'value', v.v),
               format('SELECT memtx.stage(%s, %L, %L, %L::jsonb)::text', t.id, 'e1', 'x', v.v)
          FROM n, memtx.transactions t, (VALUES ('1'), ('2')) v (v)
         WHERE t.status = 'open' AND n.rec < max_records
        UNION ALL
        SELECT 3, t.agent, t.id, op, jsonb_build_object('op', op, 'tx', t.id),
               format('SELECT count(*)::text FROM memtx.%s(%s)', op, t.id)
          FROM memtx.transactions t, (VALUES ('commit'), ('abort')) o (op)
         WHERE t.status = 'open'
        UNION ALL
        SELECT 4, r.owner, r.id, '', jsonb_build_object('op', 'revoke', 'record', r.id),
               format('SELECT count(*)::text FROM memtx.revoke(%s)', r.id)
          FROM memtx.records r
         WHERE r.state = 'committed')
    SELECT caller, call, stmt, format('%s %s %s %s', ord, caller, id, arg), stmt
      FROM calls ORDER BY ord, id, arg, caller
$$;

CREATE FUNCTION memtx_enum.state() RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH t AS (SELECT id, agent, status, rank() OVER (ORDER BY id) AS n
                 FROM memtx.transactions),
    r AS (SELECT r.*, rank() OVER (ORDER BY r.id) AS n FROM memtx.records r)
    SELECT concat_ws(' | ',
        (SELECT string_agg(format('T%s %s %s', n, agent, status), ', ' ORDER BY n) FROM t),
        (SELECT string_agg(format('R%s T%s %s.%s=%s %s %s', r.n, t.n, r.entity, r.attribute,
                                  r.value, r.state, coalesce(r.reason, '-')), ', ' ORDER BY r.n)
           FROM r JOIN t ON t.id = r.tx_id))
$$;
