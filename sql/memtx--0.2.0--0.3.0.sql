/*
 * memtx 0.2.0 -> 0.3.0.
 *
 * A step brings a store installed at 0.2.0 to the catalog of sql/memtx.sql
 * (what CREATE EXTENSION memtx runs); test/sql/upgrade.sql compares the two.
 * Sections are labelled with the SPEC section they serve, like
 * sql/memtx.sql.
 */
\echo Use "ALTER EXTENSION memtx UPDATE TO '0.3.0'" to load this file. \quit

-- §7, §9: the 0.1.0 -> 0.2.0 step redefined memtx.review_queue with CREATE
-- OR REPLACE VIEW, which dropped its security_invoker option: the view read
-- memtx.records with its owner's rights, so any role saw every record
-- quarantined for review, values included.  It applies the reader's
-- row-level security again, as memtx.in_flight does.
ALTER VIEW memtx.review_queue SET (security_invoker = true);

-- §20 Distribution across nodes: the node number (set_node, node), the id
-- and namespace placement functions the router routes by.  An existing
-- store is node 0: its sequences stay as they are.
CREATE FUNCTION memtx.node() RETURNS integer
    LANGUAGE sql STABLE SECURITY DEFINER PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT (s.last_value >> 48)::integer FROM memtx.record_id_seq s;
END;
COMMENT ON FUNCTION memtx.node() IS 'this store''s node number (0 for a single server): the bits above the low 48 of every id it allocates';

CREATE FUNCTION memtx.set_node(node integer) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_set_node'
    LANGUAGE C VOLATILE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION memtx.set_node(integer) IS 'harness: make this empty store node 0..31 of a distributed store: every id sequence moves into the node''s range (node << 48 upwards)';

-- The node an id was allocated by; NULL for NULL, 0 and negative ids, which
-- no node allocates (the router sends those to node 0 for memtx's own
-- argument error).
CREATE FUNCTION memtx.id_node(id bigint) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN CASE WHEN id > 0 THEN (id >> 48)::integer END;
COMMENT ON FUNCTION memtx.id_node(bigint) IS 'the node number an id carries (id >> 48); NULL for ids no node allocates';

-- A namespace's stable hash: the first four bytes of the SHA-256 of its
-- UTF-8 text, big-endian, as a non-negative 31-bit integer.  The router
-- places a namespace on node node_of(namespace) % N (N a power of two:
-- PL/Proxy masks with N - 1).  Defined by SHA-256 and UTF-8, not by
-- hashtext, so it is the same on every node, platform, encoding and release.
CREATE FUNCTION memtx.node_of(namespace text) RETURNS integer
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    RETURN ('x' || pg_catalog.substr(pg_catalog.encode(pg_catalog.sha256(
               pg_catalog.convert_to(namespace, 'UTF8')), 'hex'), 1, 8))::bit(32)::integer
           & 2147483647;
COMMENT ON FUNCTION memtx.node_of(text) IS 'a namespace''s stable placement hash (first 31 bits of the SHA-256 of its UTF-8 text); its node is node_of(namespace) % N';
