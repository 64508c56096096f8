\echo Use "CREATE EXTENSION memtx_enumerate" to load this file. \quit

-- The canonical states of the last run with dump_states (a test compares
-- them with another driver's).
CREATE TABLE memtx_enumerate.states (state text PRIMARY KEY);
COMMENT ON TABLE memtx_enumerate.states IS 'canonical states found by the last run with dump_states';
REVOKE ALL ON TABLE memtx_enumerate.states FROM PUBLIC;

-- What a search found so far (done: false when it paused).
CREATE TYPE memtx_enumerate.figures AS (
    states bigint, transitions bigint, errors bigint, violations bigint, max_depth integer,
    elapsed double precision, transitions_per_s double precision, done boolean);

CREATE FUNCTION memtx_enumerate.run(max_records integer, max_tx integer, depth integer,
                                    seconds double precision DEFAULT 0,
                                    dump_states boolean DEFAULT false,
                                    pause_after bigint DEFAULT 0)
    RETURNS memtx_enumerate.figures
    AS 'MODULE_PATHNAME', 'memtx_enumerate_run'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    -- the estimates of the graph's queries pass jit_above_cost: JIT would
    -- compile every execution of them (tens of ms each)
    SET jit = off;
COMMENT ON FUNCTION memtx_enumerate.run(integer, integer, integer, double precision, boolean, bigint) IS
    'depth-first search over every state memtx_enum.actions() reaches from the current one within the bounds, each call in a subtransaction rolled back afterwards; memtx.check_invariants() at every new state; seconds > 0 stops the search then; pause_after > 0 pauses it after that many transitions (done is false; resume() goes on)';
-- superusers only: the search runs calls as any role memtx_enum.actions() names
REVOKE ALL ON FUNCTION memtx_enumerate.run(integer, integer, integer, double precision, boolean, bigint) FROM PUBLIC;

CREATE FUNCTION memtx_enumerate.resume() RETURNS memtx_enumerate.figures
    AS 'MODULE_PATHNAME', 'memtx_enumerate_resume'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    SET jit = off;
COMMENT ON FUNCTION memtx_enumerate.resume() IS
    'go on with the search of this session that paused (in a new SQL transaction, after a VACUUM of memtx''s tables): the path is replayed, then the search resumes; the figures count the whole search';
-- superusers only, as run()
REVOKE ALL ON FUNCTION memtx_enumerate.resume() FROM PUBLIC;
