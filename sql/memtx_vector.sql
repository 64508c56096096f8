/*
 * memtx_vector: the whole current catalog (SPEC §19, semantic recall).
 *
 * A companion extension of memtx, with memtx's discipline: this file is
 * what CREATE EXTENSION memtx_vector runs (the build copies it to
 * memtx_vector--<version>.sql); once released, a version's script is frozen
 * and later releases add step scripts.  It requires memtx and pgvector's
 * `vector` (>= 0.8.0, for iterative index scans); memtx itself never
 * depends on pgvector, so CREATE EXTENSION memtx works without it and every
 * other section of the contract works unchanged.
 *
 * Everything lives in memtx's schema.  The three functions are C in memtx's
 * own module: recall_similar is memtx.read by similarity (the same
 * preconditions, the one visibility definition, the same read set, the
 * batched cursor of memtx.recall), so none of that is restated here.  The
 * module treats a vector as an opaque value of the type this script's
 * functions are declared with, resolved when they are called: it includes
 * no pgvector header and links nothing of it.
 *
 * pgvector's objects are named unqualified below: while this script runs,
 * search_path holds the schemas of the required extensions (vector is
 * relocatable; CREATE EXTENSION memtx_vector CASCADE puts it in the first
 * schema of the caller's search_path).  Code that runs later with a pinned
 * search_path reaches them through the type of memtx.embeddings.embedding
 * (src/vector.c, memtx.embedding_model_index).
 */
\echo Use "CREATE EXTENSION memtx_vector CASCADE" to load this file. \quit

/* ----------------------------------------------------------------------
 * §19 Embedding models
 */

CREATE TABLE memtx.embedding_models (
    name          text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9_.:-]{1,64}$'),
    dims          integer NOT NULL CHECK (dims BETWEEN 1 AND 2000),
    distance      text NOT NULL CHECK (distance IN ('cosine', 'l2', 'inner_product')),
    registered_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE memtx.embedding_models IS 'embedding model registry: the dimensions and distance of each model''s vectors; each model has its own HNSW index';
REVOKE ALL ON memtx.embedding_models FROM PUBLIC;
-- Registries are configuration, readable by all, written by harness functions.
GRANT SELECT ON memtx.embedding_models TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('memtx.embedding_models', '');

-- The name of a model's approximate index, defined once: the trigger below
-- creates it, tests and the README name it.  A digest keeps every allowed
-- model name (64 characters, with '.', ':' and '-') a short identifier.
CREATE FUNCTION memtx.embedding_index_name(model text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN 'embeddings_hnsw_' || pg_catalog.left(pg_catalog.md5(model), 16);
COMMENT ON FUNCTION memtx.embedding_index_name(text) IS 'the name of the HNSW index over a model''s embeddings';

/*
 * Every model row gets its HNSW index: a partial expression index over the
 * model's rows of memtx.embeddings, the vector cast to the model's fixed
 * dimensions (pgvector indexes need them), with the operator class of the
 * model's distance.  memtx.recall_similar's query states the same
 * expression and predicate, so the planner answers it from this index.  A
 * trigger rather than the registering function creates it, so a store
 * restored by pg_restore (which loads the registry's rows but recreates no
 * index of an extension's table) gets its indexes back as the rows arrive.
 * A model row deleted (behind the API; memtx.embeddings_guard allows it only
 * while the model has no embeddings) takes its index with it.
 */
CREATE FUNCTION memtx.embedding_model_index() RETURNS trigger
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    vtype oid;
    vschema name;
BEGIN
    IF TG_OP = 'DELETE' THEN
        EXECUTE format('DROP INDEX IF EXISTS memtx.%I', memtx.embedding_index_name(OLD.name));
        RETURN NULL;
    END IF;
    SELECT a.atttypid, n.nspname INTO vtype, vschema
      FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE a.attrelid = 'memtx.embeddings'::regclass AND a.attname = 'embedding';
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON memtx.embeddings USING hnsw ((embedding::%s) %I.%I) WHERE model = %L',
                   memtx.embedding_index_name(NEW.name), format_type(vtype, NEW.dims), vschema,
                   CASE NEW.distance WHEN 'cosine' THEN 'vector_cosine_ops'
                                     WHEN 'l2' THEN 'vector_l2_ops'
                                     ELSE 'vector_ip_ops' END,
                   NEW.name);
    RETURN NULL;
END $$;
COMMENT ON FUNCTION memtx.embedding_model_index() IS 'trigger of memtx.embedding_models: creates the HNSW index of each model (and drops it with the model''s row)';
-- a trigger function: fired by the table, called by no one
REVOKE ALL ON FUNCTION memtx.embedding_model_index() FROM PUBLIC;
CREATE TRIGGER embedding_models_index AFTER INSERT OR DELETE ON memtx.embedding_models
    FOR EACH ROW EXECUTE FUNCTION memtx.embedding_model_index();

CREATE FUNCTION memtx.register_embedding_model(name text, dims integer, distance text DEFAULT 'cosine') RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_register_embedding_model'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off;
COMMENT ON FUNCTION memtx.register_embedding_model(text, integer, text) IS 'harness: declare an embedding model (dimensions 1..2000; distance cosine, l2 or inner_product) and build its HNSW index; the same registration again does nothing';
REVOKE ALL ON FUNCTION memtx.register_embedding_model(text, integer, text) FROM PUBLIC;
-- Executable by all: the function refuses every caller but a harness itself.
GRANT EXECUTE ON FUNCTION memtx.register_embedding_model(text, integer, text) TO PUBLIC;

/* ----------------------------------------------------------------------
 * §19 Embeddings
 */

/*
 * One embedding per (record, model), in the record's namespace (the key
 * names it, as every key of a namespace-scoped table does).  Embeddings are
 * derived from values: a role reads an embedding only where it may read
 * the record (the records' row-level security, as for history).  They are
 * immutable like the record's content, and erasure deletes them.
 */
CREATE TABLE memtx.embeddings (
    record_id   bigint NOT NULL,
    namespace   text NOT NULL,
    model       text NOT NULL,
    embedding   vector NOT NULL,
    embedded_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (record_id, model, namespace)
);
COMMENT ON TABLE memtx.embeddings IS 'the embedding of a record''s value under each model (one per record and model, immutable, deleted by erasure)';
-- a namespace's embeddings of a model: the exact search recall_similar falls
-- back to when the approximate index gives out (src/vector.c)
CREATE INDEX embeddings_namespace_idx ON memtx.embeddings (namespace, model);
REVOKE ALL ON memtx.embeddings FROM PUBLIC;
-- Embeddings are readable with their record, under the records' row-level security.
GRANT SELECT ON memtx.embeddings TO PUBLIC;
ALTER TABLE memtx.embeddings ENABLE ROW LEVEL SECURITY;
CREATE POLICY embeddings_readable ON memtx.embeddings FOR SELECT
    USING (EXISTS (SELECT 1 FROM memtx.records r WHERE r.id = record_id AND r.namespace = embeddings.namespace));
SELECT pg_catalog.pg_extension_config_dump('memtx.embeddings', '');

/*
 * The integrity of memtx.embeddings, kept by triggers as memtx keeps its
 * references (memtx.reference_check): no foreign keys, so pg_restore -j may
 * load the tables in any order.
 *   embeddings, BEFORE INSERT       the record exists in the row's namespace
 *                                   (23503; rows loaded by COPY FROM excepted),
 *                                   and the model is registered
 *   embeddings, BEFORE UPDATE       refused (23514): embeddings are immutable
 *   records, BEFORE DELETE or a     refused (23503) while the record has
 *   change of id or namespace       embeddings
 *   records, BEFORE TRUNCATE        refused while there are embeddings
 *   embedding_models, BEFORE a      refused (23514): a model's index and
 *   change of name, dims or         embeddings depend on them
 *   distance
 *   embedding_models, BEFORE DELETE refused (23503) while the model has
 *   or TRUNCATE                     embeddings
 */
CREATE FUNCTION memtx.embeddings_guard() RETURNS trigger
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        IF EXISTS (SELECT FROM memtx.embeddings) THEN
            RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
                MESSAGE = format('cannot truncate %s while memtx.embeddings names its rows', TG_TABLE_NAME);
        END IF;
        RETURN NULL;
    END IF;
    IF TG_TABLE_NAME = 'embedding_models' THEN
        IF TG_OP = 'UPDATE' AND (NEW.name, NEW.dims, NEW.distance) IS NOT DISTINCT FROM (OLD.name, OLD.dims, OLD.distance) THEN
            RETURN NEW;
        END IF;
        IF TG_OP = 'UPDATE' THEN
            RAISE EXCEPTION USING ERRCODE = 'check_violation',
                MESSAGE = format('the name, dimensions and distance of embedding model %s cannot change', OLD.name),
                DETAIL = 'Its index and embeddings depend on them.';
        END IF;
        IF EXISTS (SELECT FROM memtx.embeddings e WHERE e.model = OLD.name) THEN
            RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
                MESSAGE = format('embedding model %s has embeddings', OLD.name),
                DETAIL = 'Rows of memtx.embeddings that name it would be left dangling.';
        END IF;
        RETURN OLD;
    END IF;
    IF TG_TABLE_NAME = 'records' THEN
        IF TG_OP = 'UPDATE' AND NEW.id = OLD.id AND NEW.namespace = OLD.namespace THEN
            RETURN NEW;
        END IF;
        IF EXISTS (SELECT FROM memtx.embeddings e WHERE e.record_id = OLD.id AND e.namespace = OLD.namespace) THEN
            RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
                MESSAGE = format('record %s has embeddings', OLD.id),
                DETAIL = 'Rows of memtx.embeddings that name it would be left dangling.';
        END IF;
        RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation',
            MESSAGE = format('the embedding of record %s under model %s cannot change', OLD.record_id, OLD.model),
            DETAIL = 'Embeddings are immutable, like the content of their record.';
    END IF;
    IF NEW.namespace IS NULL OR memtx.copying_into(TG_RELID) THEN
        RETURN NEW;
    END IF;
    PERFORM FROM memtx.records r WHERE r.id = NEW.record_id AND r.namespace = NEW.namespace FOR KEY SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
            MESSAGE = format('a row of embeddings names record %s, which does not exist in namespace %s',
                             NEW.record_id, NEW.namespace);
    END IF;
    PERFORM FROM memtx.embedding_models m WHERE m.name = NEW.model FOR KEY SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation',
            MESSAGE = format('a row of embeddings names model %s, which is not registered', NEW.model);
    END IF;
    RETURN NEW;
END $$;
COMMENT ON FUNCTION memtx.embeddings_guard() IS 'trigger: an embedding names a record of its namespace and a registered model, never changes, and keeps its record and model from being deleted; a model never changes';
-- a trigger function: fired by the tables, called by no one
REVOKE ALL ON FUNCTION memtx.embeddings_guard() FROM PUBLIC;
CREATE TRIGGER embeddings_references BEFORE INSERT OR UPDATE ON memtx.embeddings
    FOR EACH ROW EXECUTE FUNCTION memtx.embeddings_guard();
CREATE TRIGGER records_embedded BEFORE DELETE OR UPDATE OF id, namespace ON memtx.records
    FOR EACH ROW EXECUTE FUNCTION memtx.embeddings_guard();
CREATE TRIGGER records_embedded_truncate BEFORE TRUNCATE ON memtx.records
    FOR EACH STATEMENT EXECUTE FUNCTION memtx.embeddings_guard();
CREATE TRIGGER embedding_models_guard BEFORE DELETE OR UPDATE ON memtx.embedding_models
    FOR EACH ROW EXECUTE FUNCTION memtx.embeddings_guard();
CREATE TRIGGER embedding_models_guard_truncate BEFORE TRUNCATE ON memtx.embedding_models
    FOR EACH STATEMENT EXECUTE FUNCTION memtx.embeddings_guard();

/*
 * Erasure (§13, §17) deletes the embeddings of every record it erases: an
 * embedding is derived from the value, and a vector can give the value
 * away.  The trigger fires on the one change that erases a record (erased_at
 * from unset to set, with the value becoming JSON null: the lifecycle
 * trigger admits no other), inside memtx.erase's call and under its
 * namespace lock, so it reaches every record erase erases — restored copies
 * included — without memtx's C knowing of embeddings.  memtx.embed takes
 * the namespace lock shared, so an embedding cannot slip in beside an
 * erasure that has not committed yet.
 */
CREATE FUNCTION memtx.embeddings_erase() RETURNS trigger
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM memtx.embeddings e WHERE e.record_id = NEW.id AND e.namespace = NEW.namespace;
    RETURN NULL;
END $$;
COMMENT ON FUNCTION memtx.embeddings_erase() IS 'trigger of memtx.records: deletes the embeddings of a record when it is erased';
REVOKE ALL ON FUNCTION memtx.embeddings_erase() FROM PUBLIC;
CREATE TRIGGER records_erase_embeddings AFTER UPDATE OF erased_at ON memtx.records
    FOR EACH ROW WHEN (OLD.erased_at IS NULL AND NEW.erased_at IS NOT NULL)
    EXECUTE FUNCTION memtx.embeddings_erase();

CREATE FUNCTION memtx.embed(record bigint, model text, embedding vector) RETURNS void
    AS 'MODULE_PATHNAME', 'memtx_embed'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off;
COMMENT ON FUNCTION memtx.embed(bigint, text, vector) IS 'attach the embedding of a record''s value under a model (the record''s owner or a harness; any state but erased); the same vector again does nothing, another is refused';
REVOKE ALL ON FUNCTION memtx.embed(bigint, text, vector) FROM PUBLIC;
-- An agent's API: the function checks the record's owner itself.
GRANT EXECUTE ON FUNCTION memtx.embed(bigint, text, vector) TO PUBLIC;

/* ----------------------------------------------------------------------
 * §19 Recall by similarity
 */

/*
 * memtx.recall_similar: the k records visible to tx nearest to an
 * embedding, through the model's HNSW index scanned iteratively with
 * memtx's visibility applied as the scan goes (src/vector.c); with a text
 * query too, fused with memtx.recall's ranking by reciprocal rank.
 * hnsw.iterative_scan is set for the call: relaxed_order, which keeps the
 * candidates a strict scan would drop for arriving late; the rows kept are
 * sorted by (distance, id) before they are returned (see src/vector.c).
 * The other hnsw settings
 * (ef_search, max_scan_tuples) are the caller's.  Sorts are off as well
 * as the protocol functions' other plan settings: a plan of the whole
 * query (no LIMIT: the cursor reads as far as visibility needs) would
 * otherwise sort the namespace's embeddings rather than walk the index,
 * which it does only where no index gives the order (the exact fallback,
 * the text list).
 */
CREATE FUNCTION memtx.recall_similar(tx bigint, embedding vector, model text, k integer DEFAULT 8,
                                     entity_prefix text DEFAULT NULL, query text DEFAULT NULL,
                                     valid_at timestamptz DEFAULT NULL)
    RETURNS TABLE (record_id bigint, entity text, attribute text, value jsonb, distance real, rank real)
    AS 'MODULE_PATHNAME', 'memtx_recall_similar'
    LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp SET jit = off
    SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off SET enable_sort = off
    SET hnsw.iterative_scan = relaxed_order;
COMMENT ON FUNCTION memtx.recall_similar(bigint, vector, text, integer, text, text, timestamptz) IS 'recall by similarity: the k records visible to the transaction nearest to the embedding under the model, nearest first (with query: fused with full-text recall by reciprocal rank); adds them to its read set';
REVOKE ALL ON FUNCTION memtx.recall_similar(bigint, vector, text, integer, text, text, timestamptz) FROM PUBLIC;
-- An agent's API: the function checks the transaction's agent itself.
GRANT EXECUTE ON FUNCTION memtx.recall_similar(bigint, vector, text, integer, text, text, timestamptz) TO PUBLIC;
