\echo Use "CREATE EXTENSION memtx_enumerate" to load this file. \quit

-- What a search found so far (done: false when it paused).
CREATE TYPE memtx_enumerate.figures AS (
    states bigint, transitions bigint, errors bigint, violations bigint, max_depth integer,
    elapsed double precision, transitions_per_s double precision, done boolean);

CREATE FUNCTION memtx_enumerate.run(max_records integer, max_tx integer, depth integer,
                                    seconds double precision DEFAULT 0,
                                    pause_after bigint DEFAULT 0,
                                    alphabet text DEFAULT 'papers',
                                    states_file text DEFAULT NULL,
                                    transitions_file text DEFAULT NULL,
                                    parts integer DEFAULT 1,
                                    part integer DEFAULT 0,
                                    split_depth integer DEFAULT 1,
                                    checkpoint text DEFAULT NULL,
                                    checkpoint_seconds double precision DEFAULT 300)
    RETURNS memtx_enumerate.figures
    AS 'MODULE_PATHNAME', 'memtx_enumerate_run'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    -- the estimates of the graph's queries pass jit_above_cost: JIT would
    -- compile every execution of them (tens of ms each)
    SET jit = off;
COMMENT ON FUNCTION memtx_enumerate.run(integer, integer, integer, double precision, bigint, text, text, text, integer, integer, integer, text, double precision) IS
    'depth-first search over every state memtx_enum.actions(max_records, max_tx, alphabet) reaches from the current one within the bounds, each call (its probe) in a subtransaction rolled back afterwards; memtx.check_invariants() at every new state; per state a fingerprint of its calls (label, result, target), written with the state to states_file (the server writes it) at the end; every transition to transitions_file as it goes; seconds > 0 stops the search then; pause_after > 0 pauses it after that many transitions (done is false; resume() goes on); parts > 1 shares the search out below split_depth, this being part number part (0-based); checkpoint names a file (the server writes it) where a paused search saves itself every checkpoint_seconds of searching and from which a later run() with the same bounds goes on, in a fresh database with the graph; it is removed when the search is done';
-- superusers only: the search runs calls as any role memtx_enum.actions() names
-- and writes files as the server
REVOKE ALL ON FUNCTION memtx_enumerate.run(integer, integer, integer, double precision, bigint, text, text, text, integer, integer, integer, text, double precision) FROM PUBLIC;

CREATE FUNCTION memtx_enumerate.resume() RETURNS memtx_enumerate.figures
    AS 'MODULE_PATHNAME', 'memtx_enumerate_resume'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    SET jit = off;
COMMENT ON FUNCTION memtx_enumerate.resume() IS
    'go on with the search of this session that paused (in a new SQL transaction, after a VACUUM of memtx''s tables): the path is replayed, then the search resumes; the figures count the whole search';
-- superusers only, as run()
REVOKE ALL ON FUNCTION memtx_enumerate.resume() FROM PUBLIC;
