/*
 * memtx 0.1.0 -> 0.2.0.
 *
 * From 0.1.0 on, the base script sql/memtx--0.1.0.sql is frozen and every
 * change to the catalog is a step like this one; CREATE EXTENSION memtx
 * walks the same chain, so a fresh install and an upgraded one are the same
 * by construction (test/sql/upgrade.sql compares the two).
 */
\echo Use "ALTER EXTENSION memtx UPDATE TO '0.2.0'" to load this file. \quit

-- The enum labels compiled into the library, for the catalog lint (they
-- must equal pg_enum: C uses a label's position as its value).
CREATE FUNCTION memtx.enum_labels()
    RETURNS TABLE (type_name text, label text, ordinal integer)
    AS 'MODULE_PATHNAME', 'memtx_enum_labels'
    LANGUAGE C IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION memtx.enum_labels() IS 'the enum labels compiled into the memtx library, in enum order; they must equal pg_enum';

-- Every relation of the store says what it is.
COMMENT ON SEQUENCE memtx.clock IS 'the one global order of protocol events: staging, settling, commits, snapshots';
COMMENT ON SEQUENCE memtx.transaction_id_seq IS 'ids of memtx.transactions';
COMMENT ON SEQUENCE memtx.record_id_seq IS 'ids of memtx.records';
COMMENT ON SEQUENCE memtx.action_log_id_seq IS 'ids of memtx.action_log';
COMMENT ON SEQUENCE memtx.rollback_log_id_seq IS 'ids of memtx.rollback_log';
COMMENT ON SEQUENCE memtx.compensation_id_seq IS 'ids of memtx.compensations';
