\echo Use "CREATE EXTENSION memtx_enumerate" to load this file. \quit

-- The canonical states of the last run with dump_states (a test compares
-- them with another driver's).
CREATE TABLE memtx_enumerate.states (state text PRIMARY KEY);
COMMENT ON TABLE memtx_enumerate.states IS 'canonical states found by the last run with dump_states';
REVOKE ALL ON TABLE memtx_enumerate.states FROM PUBLIC;

CREATE FUNCTION memtx_enumerate.run(max_records integer, max_tx integer, depth integer,
                                    seconds double precision DEFAULT 0,
                                    dump_states boolean DEFAULT false,
                                    OUT states bigint, OUT transitions bigint, OUT errors bigint,
                                    OUT violations bigint, OUT max_depth integer,
                                    OUT elapsed double precision,
                                    OUT transitions_per_s double precision)
    RETURNS record
    AS 'MODULE_PATHNAME', 'memtx_enumerate_run'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    -- the estimates of the graph's queries pass jit_above_cost: JIT would
    -- compile every execution of them (tens of ms each)
    SET jit = off;
COMMENT ON FUNCTION memtx_enumerate.run(integer, integer, integer, double precision, boolean) IS
    'depth-first search over every state memtx_enum.actions() reaches from the current one within the bounds, each call in a subtransaction rolled back afterwards; memtx.check_invariants() at every new state; seconds > 0 stops the search then';
-- superusers only: the search runs calls as any role memtx_enum.actions() names
REVOKE ALL ON FUNCTION memtx_enumerate.run(integer, integer, integer, double precision, boolean) FROM PUBLIC;
