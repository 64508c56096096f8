/**
 * MemtxStore: a LangGraph.js store (`BaseStore` of
 * `@langchain/langgraph-checkpoint`) whose every put is a memtx belief
 * commit.
 *
 * Mapping.  One store is one memtx namespace (constructor option
 * `namespace`, default `default`).  An item's LangGraph namespace (a tuple
 * of labels) is the record's entity: each label, with `\` and `:` escaped
 * by a `\`, followed by `:` (`["users", "alice"]` → `users:alice:`).  The
 * closing `:` makes a plain string prefix of the entity a whole-label
 * prefix of the namespace, so `["tenant", "a"]` never matches
 * `["tenant", "ab"]`.  The item's key is the attribute, its value the
 * record's value.
 *
 * Writes.  A put is one `memtx.propose` call (begin + stage + commit of one
 * record, SPEC §10).  The commit pipeline adjudicates the slot: the store's
 * own earlier value (same source, equal authority) is superseded.  A put
 * that loses a race -- another writer committed the item while it was being
 * decided (`stale_late_write`) or since its head was read (`stale_head`) --
 * is a conflict, and the store's conflict policy decides: `onConflict:
 * 'retry'` (the default) reads the item's head again and proposes once more
 * with that `expected_head` (at most `maxRetries` times, default 5), so
 * ordinary LangGraph nodes see a put succeed as with PostgresStore, the
 * latest writer's value winning; `'throw'` throws PutRefused at once.
 * Either way every refused attempt stays in memtx, quarantined with its
 * reason, for the audit.  Any other refusal (a writer of higher authority,
 * a value under review, a record another role owns) is not a conflict and
 * throws PutRefused whatever the policy.  A delete (value null) revokes the
 * slot's active records (`memtx.revoke`); deleting a missing item does
 * nothing.
 *
 * Batches.  A batch of several operations is one SQL transaction: all or
 * nothing.  An operation that fails (a put memtx refuses, after the
 * conflict policy) rolls the whole batch back, its refused records
 * included, and the error says which operation it was (`index`).  A batch
 * of one operation runs it alone (a put refused alone stays in memtx).
 *
 * Time to live.  `put(..., { ttl })` (minutes, as PostgresStore) or the
 * store option `ttl: { defaultTtl }` writes the record with `valid = [now,
 * now + ttl)` (memtx.now()), and every read asks for what is valid at
 * `memtx.now()` (SPEC §18): an expired item disappears from get, search and
 * listNamespaces while its record, history and receipts stay (expiry is not
 * retraction, and there is nothing to sweep).  A put refreshes the time to
 * live; `refreshOnRead` is refused, since a read writes nothing in memtx.
 *
 * Reads.  get is one statement, `memtx.lookup` of the slot (active
 * records readable by the role, no transaction) with the item's dates,
 * prepared once per connection; it writes nothing.  A search and
 * listNamespaces read the store's active records under row-level security
 * with the same predicate (`memtx.is_active`) and write nothing either, so
 * every read of the store sees the same items and runs on a hot standby.  A
 * search with a query matches recall's document (`memtx.recall_document`)
 * and ranks as `memtx.recall` does (ts_rank of websearch_to_tsquery('english',
 * query)); without a filter it is `memtx.search`, served by the GIN index of
 * the active records, one prepared statement (see #match).  It is not a
 * `memtx.recall` in a memtx transaction: a LangGraph search stages nothing
 * that a read set could protect, and recall's isolation levels (SPEC §3:
 * the role's tier, verified_read by default, hides a record with an
 * inactive ancestor; causally_stable_read one with a rival in flight)
 * would hide from a search items that get returns.
 * Search modes are PostgresStore's: `text`, and `auto` (text without a
 * vector index); `vector` and `hybrid` need the store's `index` option (as
 * PostgresStore's: src/store-vector.js, over memtx_vector; a vector or
 * hybrid search is one statement too) and are refused without one as
 * PostgresStore refuses them, another mode as unknown.  An item's
 * updatedAt is its latest record's staging time, its createdAt that of the
 * first record (by id) since the item was last deleted or expired.
 *
 * @module memtx/store
 */
import pg from 'pg';
import { BaseStore, validateNamespace } from '@langchain/langgraph-checkpoint';
import { MemtxError, InvalidArgument, fromPg } from './memory.js';
import { EMBEDDINGS, StoreIndex } from './store-vector.js';

/** A put the commit pipeline did not admit: nothing changed in the store. */
export class PutRefused extends MemtxError {
  /**
   * @param {{ recordId: number, state: string, reason: string | null, namespace: string[], key: string,
   *           attempts?: number, index?: number }} info
   */
  constructor({ recordId, state, reason, namespace, key, attempts = 1, index }) {
    super(`${index === undefined ? '' : `operation ${index} of the batch: `}put of ${JSON.stringify(key)} `
      + `in ${JSON.stringify(namespace)} was not committed: record ${recordId} is ${state} (${reason})`
      + `${attempts > 1 ? ` after ${attempts} attempts` : ''}`
      + `${index === undefined ? '' : '; nothing of the batch was written'}`);
    /** the refused record, kept by memtx with its reason (unless its batch rolled back) */ this.recordId = recordId;
    /** @type {string} */ this.state = state;
    /** a memtx reason code, e.g. stale_late_write */ this.reason = reason;
    /** how many proposals the put made (the conflict policy's retries included) */ this.attempts = attempts;
    /** the operation's position in its batch, when the batch had several */ this.index = index;
  }
}

const SEPARATOR = ':';
const DELETE_NOTE = 'deleted through the LangGraph store';
// the reasons of a put that lost a race, which the conflict policy may retry
const CONFLICTS = new Set(['stale_late_write', 'stale_head']);
const VECTOR_REFUSED = 'Vector search requested but not configured. '
  + 'Give MemtxStore an index ({ dims, embed, fields }), or search with mode "text".';
const HYBRID_REFUSED = 'Hybrid search requested but vector search not configured. '
  + 'Give MemtxStore an index ({ dims, embed, fields }), or search with mode "text".';
/**
 * The entity of a namespace tuple: each label escaped and closed by ':'.
 * @param {string[]} labels
 */
export function encodeNamespace(labels) {
  return labels.map((l) => `${l.replace(/[\\:]/g, '\\$&')}${SEPARATOR}`).join('');
}

/**
 * The namespace tuple of an entity written by encodeNamespace.
 * @param {string} entity
 */
export function decodeNamespace(entity) {
  const labels = [];
  let label = '';
  for (let i = 0; i < entity.length; i += 1) {
    const c = entity[i];
    if (c === '\\') { label += entity[i + 1]; i += 1; } else if (c === SEPARATOR) { labels.push(label); label = ''; } else label += c;
  }
  return labels;
}

/**
 * Whether a namespace matches a prefix or suffix condition ('*' matches
 * any one label), as InMemoryStore matches them.
 * @param {{ matchType: string, path: string[] }} condition
 * @param {string[]} ns
 */
function matches({ matchType, path }, ns) {
  if (path.length > ns.length) return false;
  const start = matchType === 'suffix' ? ns.length - path.length : 0;
  return path.every((label, i) => label === '*' || label === ns[start + i]);
}

/** Labels compared one by one, by code unit; a shorter tuple first. @param {string[]} a @param {string[]} b */
function compareNamespaces(a, b) {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return a.length - b.length;
}

/**
 * SQL conditions on `value` for a LangGraph search filter, with their
 * parameters appended to params, as PostgresStore reads a filter: scalars
 * (and arrays) compare as text (`value ->> key`), objects by containment.
 * @param {Record<string, unknown> | undefined} filter
 * @param {unknown[]} params
 * @param {string} value the SQL expression of the item's value
 */
function filterSql(filter, params, value) {
  const p = (/** @type {unknown} */ v) => { params.push(v); return `$${params.length}`; };
  const conds = [];
  for (const [key, want] of Object.entries(filter ?? {})) {
    const isObject = typeof want === 'object' && want !== null;
    if (isObject && !Array.isArray(want) && Object.keys(want).some((k) => k.startsWith('$'))) {
      for (const [op, arg] of Object.entries(want)) conds.push(operatorSql(key, op, arg, p, value));
    } else if (isObject && !Array.isArray(want)) {
      conds.push(`${value} @> ${p(JSON.stringify({ [key]: want }))}::jsonb`);
    } else {
      conds.push(`${value} ->> ${p(key)}::text = ${p(String(want))}`);
    }
  }
  return conds.length ? conds.join(' AND ') : 'true';
}

/**
 * One `$` operator of a filter as SQL.
 * @param {string} key @param {string} op @param {unknown} arg
 * @param {(v: unknown) => string} p appends a parameter, returns its placeholder
 * @param {string} value the SQL expression of the item's value
 */
function operatorSql(key, op, arg, p, value) {
  if (op === '$exists') return `${arg ? '' : 'NOT '}${value} ? ${p(key)}::text`;
  const field = `${value} ->> ${p(key)}::text`;
  switch (op) {
    case '$eq': return `${field} = ${p(String(arg))}`;
    case '$ne': return `${field} <> ${p(String(arg))}`;
    case '$gt': return `(${field})::numeric > ${p(arg)}::numeric`;
    case '$gte': return `(${field})::numeric >= ${p(arg)}::numeric`;
    case '$lt': return `(${field})::numeric < ${p(arg)}::numeric`;
    case '$lte': return `(${field})::numeric <= ${p(arg)}::numeric`;
    case '$in': return `${field} = ANY(${p((Array.isArray(arg) ? arg : []).map(String))}::text[])`;
    case '$nin': return `${field} <> ALL(${p((Array.isArray(arg) ? arg : []).map(String))}::text[])`;
    default: throw new InvalidArgument(`unknown filter operator ${op} on ${JSON.stringify(key)}`);
  }
}

/**
 * createdAt of the item on record r's slot: the staging time of the first
 * (by id) active or superseded record after the slot's last revoked one (a
 * delete revokes) that had not expired when r was written (an item that
 * expired and was put again starts anew).  Two probes of the slot index in
 * id order, the last delete through the index of revoked records, the first
 * record after it by an index condition on id (leakproof, so row-level
 * security lets it bound the scan): a slot's history is not read.
 */
const CREATED_AT = `(SELECT c.created_at FROM memtx.records c
   WHERE c.namespace = r.namespace AND c.entity = r.entity AND c.attribute = r.attribute
     AND c.id > (SELECT coalesce((SELECT d.id FROM memtx.records d
                                   WHERE d.namespace = r.namespace AND d.entity = r.entity
                                     AND d.attribute = r.attribute AND d.state = 'revoked'
                                   ORDER BY d.id DESC LIMIT 1), 0))
     AND (memtx.is_active(c.state) OR c.state = 'superseded')
     AND (upper_inf(c.valid) OR upper(c.valid) > r.created_at)
   ORDER BY c.id LIMIT 1)`;

/** The validity of a put: unbounded, or [now, now + $n minutes) (SPEC §18). */
const VALIDITY = (/** @type {string} */ minutes) => `CASE WHEN ${minutes}::double precision IS NULL THEN NULL
  ELSE pg_catalog.tstzrange(memtx.now(), memtx.now() + pg_catalog.make_interval(secs => ${minutes}::double precision * 60))
  END`;

/**
 * What get answers for a slot: its latest active record (id, entity, attribute, value, updated_at,
 * created_at), the three arguments SQL expressions.
 */
const LATEST = (/** @type {string} */ entity, /** @type {string} */ attribute, /** @type {string} */ namespace) =>
  `SELECT r.id, r.entity, r.attribute, r.value, r.created_at AS updated_at, ${CREATED_AT} AS created_at
     FROM memtx.lookup(entity => ${entity}, attribute => ${attribute}, namespace => ${namespace},
                       valid_at => memtx.now()) r
    ORDER BY r.id DESC LIMIT 1`;

// Statements run often, prepared once per connection (pg's named statements).
const GET = {
  name: 'memtx_store_get',
  text: LATEST('$1::text', '$2::text', '$3::text'),
};
const PROPOSE = {
  name: 'memtx_store_propose',
  text: `SELECT record_id, state::text, reason
           FROM memtx.propose(entity => $1::text, attribute => $2::text, value => $3::jsonb, source => $4::text,
                              scope => $5::memtx.scope, readers => $6::text[], writers => $7::text[],
                              valid => ${VALIDITY('$8')}, expected_head => $9::bigint, namespace => $10::text)`,
};
// the head a retry expects: the one active record overlapping the put's validity (0: none; several: no expectation)
const HEAD = {
  name: 'memtx_store_head',
  text: `SELECT CASE count(*) WHEN 0 THEN 0 WHEN 1 THEN min(r.id) END AS head
           FROM memtx.lookup(entity => $1::text, attribute => $2::text, namespace => $3::text) r
          WHERE r.valid && coalesce(${VALIDITY('$4')}, '(,)'::tstzrange)`,
};
// memtx.search's largest k
const SEARCH_MAX_K = 1000;
// a search with a query and no filter: memtx.search's best k matches ($4), one row per matching
// slot with what get answers for it (its latest active record), by the slot's best rank, then that
// record's id; found: how many matches memtx.search returned (k: there may be more)
const SEARCH = {
  name: 'memtx_store_search',
  text: `WITH s AS MATERIALIZED (
           SELECT * FROM memtx.search(query => $2::text, k => $4::integer, entity_prefix => $3::text,
                                      namespace => $1::text, valid_at => memtx.now())),
         slots AS (SELECT s.entity, s.attribute, max(s.rank) AS score FROM s GROUP BY s.entity, s.attribute)
  SELECT latest.id AS record_id, slots.entity, slots.attribute, latest.value, slots.score,
         latest.updated_at, latest.created_at, (SELECT count(*) FROM s) AS found
    FROM slots
   CROSS JOIN LATERAL (${LATEST('slots.entity', 'slots.attribute', '$1::text')}) latest
   ORDER BY slots.score DESC, latest.id`,
};
const DELETE = {
  name: 'memtx_store_delete',
  text: `SELECT memtx.revoke(r.id, $4::text)
           FROM memtx.lookup(entity => $1::text, attribute => $2::text, namespace => $3::text) r ORDER BY r.id`,
};

/**
 * An Item (or SearchItem, with score) of a row with entity, attribute, value, updated_at, created_at.
 * @param {Record<string, any>} row
 * @returns {import('@langchain/langgraph-checkpoint').SearchItem}
 */
function toItem(row, withScore = false) {
  /** @type {import('@langchain/langgraph-checkpoint').SearchItem} */
  const item = {
    namespace: decodeNamespace(row.entity),
    key: row.attribute,
    value: row.value,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (withScore) item.score = row.score ?? undefined;
  return item;
}

/**
 * @typedef {object} TtlConfig PostgresStore's time-to-live settings
 * @property {number} [defaultTtl] minutes an item lives when its put gives no ttl
 * @property {boolean} [refreshOnRead] refused: a read writes nothing in memtx
 * @property {number} [sweepIntervalMinutes] accepted; nothing to sweep (expired records stay, unread)
 */

export class MemtxStore extends BaseStore {
  /**
   * @param {object} [options]
   * @param {pg.Pool} [options.pool] a pool to use (the store does not end it)
   * @param {string | pg.PoolConfig} [options.connectionOptions] else: a pool of the store's own
   *   (a connection string or pg's pool options; none: the PG* environment)
   * @param {string} [options.namespace] the memtx namespace of this store (default 'default')
   * @param {string} [options.source] the memtx source the store's records carry (default none)
   * @param {'private' | 'shared' | 'public'} [options.scope] the records' scope (default private)
   * @param {string[]} [options.readers] roles that may read the store's records besides their owner
   * @param {string[]} [options.writers] roles that may overwrite them besides their owner
   * @param {'retry' | 'throw'} [options.onConflict] what a put that lost a race does (default retry)
   * @param {number} [options.maxRetries] how often a conflicting put proposes again (default 5)
   * @param {TtlConfig} [options.ttl] time to live of the items
   * @param {import('./store-vector.js').IndexConfig} [options.index] a vector index, as PostgresStore's
   *   (memtx_vector: see src/store-vector.js)
   */
  constructor({ pool, connectionOptions, namespace = 'default', source, scope = 'private', readers = [], writers = [],
    onConflict = 'retry', maxRetries = 5, ttl, index } = {}) {
    super();
    /** the vector index (null: none) */
    this.index = index ? new StoreIndex(index, { filterSql, createdAt: CREATED_AT, toItem, encodeNamespace }) : null;
    if (onConflict !== 'retry' && onConflict !== 'throw') {
      throw new InvalidArgument(`onConflict must be one of retry, throw; got ${JSON.stringify(onConflict)}`);
    }
    if (!Number.isInteger(maxRetries) || maxRetries < 0) {
      throw new InvalidArgument(`maxRetries must be a non-negative integer; got ${JSON.stringify(maxRetries)}`);
    }
    if (ttl?.refreshOnRead) {
      throw new InvalidArgument('ttl.refreshOnRead is not supported: a read writes nothing in memtx; '
        + 'put the item again to extend its time to live');
    }
    if (ttl?.defaultTtl !== undefined) checkTtl(ttl.defaultTtl, 'ttl.defaultTtl');
    this.ownsPool = !pool;
    this.pool = pool ?? new pg.Pool(typeof connectionOptions === 'string'
      ? { connectionString: connectionOptions } : connectionOptions);
    this.namespace = namespace;
    this.source = source ?? null;
    this.scope = scope;
    this.readers = readers;
    this.writers = writers;
    this.onConflict = onConflict;
    this.maxRetries = maxRetries;
    /** minutes an item lives when its put gives no ttl (null: forever) */
    this.defaultTtl = ttl?.defaultTtl ?? null;
  }

  /** @param {string} connectionString */
  static fromConnectionString(connectionString, options = {}) {
    return new MemtxStore({ ...options, connectionOptions: connectionString });
  }

  /**
   * Checks that memtx is installed in the database; with an index, that
   * memtx_vector is and the index's models are registered (registering them
   * when the store's role is a harness; it creates nothing else).
   */
  async setup() {
    const { rows } = await this.pool.query("SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'memtx'");
    if (!rows.length) throw new MemtxError('memtx is not installed in this database', { hint: 'Run CREATE EXTENSION memtx CASCADE as a superuser.' });
    if (this.index) await this.index.check(this.pool, true);
  }

  /** Ends the store's own pool (not a pool it was given). */
  async stop() {
    if (this.ownsPool && !this.pool.ended) await this.pool.end();
  }

  /**
   * Store or update an item; `options.ttl` (minutes) makes it expire.
   * @param {string[]} namespace @param {string} key @param {Record<string, any>} value
   * @param {false | string[]} [index] the field paths to embed instead of the index's, or false: none
   * @param {{ ttl?: number }} [options]
   */
  async put(namespace, key, value, index, options) {
    validateNamespace(namespace);
    await this.batch([{ namespace, key, value, index, ...(options && { options }) }]);
  }

  /**
   * One item, or null: one statement.
   * @param {string[]} namespace @param {string} key
   */
  async get(namespace, key) {
    try {
      return await this.#get(this.pool, { namespace, key });
    } catch (err) {
      throw fromPg(err) ?? err;
    }
  }

  /**
   * Items under a prefix: by recency, or ranked for a query (`mode` as
   * PostgresStore: text, vector and hybrid, auto being vector with an index
   * and text without; vector and hybrid need the index).
   * @param {string[]} namespacePrefix
   * @param {{ filter?: Record<string, any>, limit?: number, offset?: number, query?: string,
   *           mode?: string, refreshTtl?: boolean, similarityThreshold?: number,
   *           distanceMetric?: 'cosine' | 'l2' | 'inner_product', vectorWeight?: number }} [options]
   * @returns {Promise<import('@langchain/langgraph-checkpoint').SearchItem[]>}
   */
  async search(namespacePrefix, options = {}) {
    validateNamespace(namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const { filter, limit = 10, offset = 0, query, mode = 'auto', refreshTtl, ...vector } = options;
    if (refreshTtl) throw new InvalidArgument('refreshTtl is not supported: a read writes nothing in memtx');
    if (query) {
      if (mode === 'vector' && !this.index) throw new InvalidArgument(VECTOR_REFUSED);
      if (mode === 'hybrid' && !this.index) throw new InvalidArgument(HYBRID_REFUSED);
      if (!['auto', 'text', 'vector', 'hybrid'].includes(mode)) throw new InvalidArgument(`Unknown search mode: ${mode}`);
    }
    const [items] = await this.batch([{ namespacePrefix, filter, limit, offset, query,
      ...(this.index && query && { mode, ...vector }) }]);
    return items;
  }

  /**
   * Runs the operations in order; the result of each at its index.  Every
   * operation is checked before any runs.  Several operations run in one SQL
   * transaction on one connection: all or nothing.
   * @template {import('@langchain/langgraph-checkpoint').Operation[]} Op
   * @param {Op} operations
   * @returns {Promise<any>} OperationResults<Op> (typed so for TypeScript's declaration
   *   emit, which leaves out an override it types exactly as its base's)
   */
  async batch(operations) {
    for (const op of operations) validateOperation(op);
    // what the index embeds, before anything is written
    if (this.index) operations = /** @type {Op} */ (await this.index.prepare(operations));
    if (operations.length === 1) {
      try {
        return /** @type {any} */ ([await this.#run(this.pool, operations[0], true)]);
      } catch (err) {
        throw fromPg(err) ?? err;
      }
    }
    const client = await this.pool.connect();
    let index = 0;
    try {
      await client.query('BEGIN');
      const results = [];
      for (; index < operations.length; index += 1) results.push(await this.#run(client, operations[index]));
      await client.query('COMMIT');
      return /** @type {any} */ (results);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      if (err instanceof PutRefused && operations.length > 1) {
        throw new PutRefused({ recordId: err.recordId, state: err.state, reason: err.reason, attempts: err.attempts,
          namespace: /** @type {any} */ (operations[index]).namespace, key: /** @type {any} */ (operations[index]).key, index });
      }
      throw fromPg(err) ?? err;
    } finally {
      client.release();
    }
  }

  /**
   * @param {Queryable} q the pool, or the batch's connection
   * @param {any} op
   * @param {boolean} [alone] whether op is its own SQL transaction (not part of a batch)
   */
  async #run(q, op, alone = false) {
    if ('namespacePrefix' in op) {
      if (!op.query) return this.#list(q, op);
      return this.index?.isVectorMode(op) ? this.index.search(q, this.namespace, op, alone) : this.#match(q, op);
    }
    if ('matchConditions' in op || !('key' in op)) return this.#namespaces(q, op);
    if (!('value' in op)) return this.#get(q, op);
    if (op.value === null) return this.#delete(q, op);
    return this.#put(q, op);
  }

  /** @param {Queryable} q @param {{ namespace: string[], key: string }} op */
  async #get(q, { namespace, key }) {
    const { rows } = await q.query({ ...GET, values: [encodeNamespace(namespace), key, this.namespace] });
    return rows.length ? toItem(rows[0]) : null;
  }

  /**
   * One memtx.propose; on a conflict, under the retry policy, the head read
   * again and another propose expecting it.
   * @param {Queryable} q
   * @param {{ namespace: string[], key: string, value: Record<string, any>, options?: { ttl?: number } }} op
   *   (with the index: the embeddings prepare() computed, attached in the propose's statement)
   */
  async #put(q, op) {
    const { namespace, key, value, options } = op;
    const embeddings = /** @type {any} */ (op)[EMBEDDINGS] ?? [];
    if (embeddings.length) await /** @type {StoreIndex} */ (this.index).ready(q);
    const ttl = options?.ttl ?? this.defaultTtl;
    if (ttl !== null && ttl !== undefined) checkTtl(ttl, 'ttl');
    const entity = encodeNamespace(namespace);
    let head = /** @type {number | null} */ (null);
    for (let attempt = 1; ; attempt += 1) {
      const values = [entity, key, JSON.stringify(value),
        this.source, this.scope, this.readers, this.writers, ttl ?? null, head, this.namespace];
      const { rows: [outcome] } = await q.query(embeddings.length
        ? /** @type {StoreIndex} */ (this.index).embedded(PROPOSE, values, embeddings) : { ...PROPOSE, values });
      if (outcome.state === 'committed' || outcome.state === 'action_safe') return;
      if (this.onConflict !== 'retry' || !CONFLICTS.has(outcome.reason) || attempt > this.maxRetries) {
        throw new PutRefused({ recordId: Number(outcome.record_id), state: outcome.state, reason: outcome.reason,
          namespace, key, attempts: attempt });
      }
      const { rows: [found] } = await q.query({ ...HEAD, values: [entity, key, this.namespace, ttl ?? null] });
      head = found.head;
    }
  }

  /** @param {Queryable} q @param {{ namespace: string[], key: string }} op */
  async #delete(q, { namespace, key }) {
    await q.query({ ...DELETE, values: [encodeNamespace(namespace), key, this.namespace, DELETE_NOTE] });
  }

  /**
   * A search without a query: the latest value of each item under the prefix, newest first.
   * @param {Queryable} q
   * @param {import('@langchain/langgraph-checkpoint').SearchOperation} op
   */
  async #list(q, { namespacePrefix, filter, limit = 10, offset = 0 }) {
    const params = /** @type {unknown[]} */ ([this.namespace, encodeNamespace(namespacePrefix)]);
    const where = filterSql(filter, params, 'r.value');
    params.push(limit, offset);
    const { rows } = await q.query(
      `SELECT * FROM (
         SELECT DISTINCT ON (r.entity, r.attribute) r.id, r.entity, r.attribute, r.value,
                r.created_at AS updated_at, ${CREATED_AT} AS created_at
           FROM memtx.records r
          WHERE r.namespace = $1 AND memtx.is_active(r.state) AND starts_with(r.entity, $2)
            AND r.valid @> memtx.now() AND ${where}
          ORDER BY r.entity, r.attribute, r.id DESC) latest
        ORDER BY updated_at DESC, id DESC
        LIMIT $${params.length - 1} OFFSET $${params.length}`, params);
    return rows.map((row) => toItem(row, true));
  }

  /**
   * A search with a query: the items under the prefix whose recall document
   * (memtx.recall_document, SPEC §14) matches the query, best first (ts_rank
   * of websearch_to_tsquery('english', query), as memtx.recall ranks), then
   * filtered and paged; one statement that writes nothing, like get and a
   * search without a query.  Without a filter it is memtx.search (the best
   * matches among the active records the role may read, through the GIN
   * index of the active records: neither the store nor a slot's history is
   * read), each matching slot answered with what get answers (its latest
   * active record: every active record of a slot valid now has one value,
   * single truth, so the slot's latest matches too).  The first call asks
   * for offset + limit matches; a slot may hold several of them (records of
   * one value), so while a full answer holds fewer slots than the page
   * needs the call asks again for twice as many (up to memtx.search's 1000,
   * then the query below).
   * @param {Queryable} q
   * @param {import('@langchain/langgraph-checkpoint').SearchOperation & { query: string }} op
   */
  async #match(q, op) {
    const { namespacePrefix, query, filter, limit = 10, offset = 0 } = op;
    if (filter === undefined || filter === null || Object.keys(filter).length === 0) {
      const wanted = offset + limit;
      for (let k = Math.max(wanted, 1); k <= SEARCH_MAX_K; k = Math.min(k * 2, SEARCH_MAX_K)) {
        const { rows } = await q.query({ ...SEARCH, values: [this.namespace, query, encodeNamespace(namespacePrefix), k] });
        // fewer matches than asked for: memtx.search returned every match there is
        const exhausted = rows.length === 0 || Number(rows[0].found) < k;
        if (rows.length >= wanted || exhausted) return rows.slice(offset, wanted).map((row) => toItem(row, true));
        if (k === SEARCH_MAX_K) break;
      }
    }
    return this.#matchScanned(q, op);
  }

  /**
   * A search with a query and a filter (or past memtx.search's 1000 best):
   * the active records under the prefix whose recall document matches,
   * ranked, filtered and paged in one statement over memtx.records under
   * row-level security.  The full-text match is not leakproof, so under
   * row-level security the GIN index cannot serve it: this reads the
   * namespace's records (README, MemtxStore).
   * @param {Queryable} q
   * @param {import('@langchain/langgraph-checkpoint').SearchOperation & { query: string }} op
   */
  async #matchScanned(q, { namespacePrefix, query, filter, limit = 10, offset = 0 }) {
    const params = /** @type {unknown[]} */ ([this.namespace, query, encodeNamespace(namespacePrefix)]);
    const where = filterSql(filter, params, 'r.value');
    params.push(limit, offset);
    // the query and the clock computed once (a materialized CTE), not per row; the dates only for the page
    const text = `WITH q AS MATERIALIZED (SELECT websearch_to_tsquery('english', $2::text) AS q, memtx.now() AS now)
     SELECT page.record_id, page.entity, page.attribute, page.value, page.score, page.updated_at,
                         ${CREATED_AT} AS created_at
       FROM (SELECT * FROM (
               SELECT DISTINCT ON (r.entity, r.attribute) r.id AS record_id, r.entity, r.attribute, r.value,
                      ts_rank(memtx.recall_document(r.entity, r.attribute, r.value), q.q) AS score,
                      r.created_at AS updated_at
                 FROM q, memtx.records r
                WHERE memtx.recall_document(r.entity, r.attribute, r.value) @@ q.q
                  AND r.namespace = $1 AND memtx.is_active(r.state) AND starts_with(r.entity, $3)
                  AND r.valid @> q.now AND ${where}
                ORDER BY r.entity, r.attribute, r.id DESC) best
              ORDER BY score DESC, record_id
              LIMIT $${params.length - 1} OFFSET $${params.length}) page
       JOIN memtx.records r ON r.id = page.record_id
      ORDER BY page.score DESC, page.record_id`;
    const { rows } = await q.query({ text, values: params });
    return rows.map((row) => toItem(row, true));
  }

  /** @param {Queryable} q @param {import('@langchain/langgraph-checkpoint').ListNamespacesOperation} op */
  async #namespaces(q, { matchConditions = [], maxDepth, limit = 100, offset = 0 }) {
    // the literal labels a prefix starts with narrow the read; the rest is matched here
    const prefix = matchConditions.find((c) => c.matchType === 'prefix')?.path ?? [];
    const star = prefix.indexOf('*');
    const literal = star < 0 ? prefix : prefix.slice(0, star);
    const { rows } = await q.query(
      `SELECT DISTINCT r.entity FROM memtx.records r
        WHERE r.namespace = $1 AND memtx.is_active(r.state) AND starts_with(r.entity, $2)
          AND r.valid @> memtx.now()`,
      [this.namespace, encodeNamespace(literal)]);
    let found = rows.map((row) => decodeNamespace(row.entity))
      .filter((ns) => matchConditions.every((c) => matches(c, ns)));
    if (maxDepth !== undefined) {
      const seen = new Map(found.map((ns) => ns.slice(0, maxDepth)).map((ns) => [JSON.stringify(ns), ns]));
      found = [...seen.values()];
    }
    return found.sort(compareNamespaces).slice(offset, offset + limit);
  }
}

/** @typedef {{ query: (...args: any[]) => Promise<{ rows: any[] }> }} Queryable a pg.Pool or pg.PoolClient */

/** InvalidArgument unless minutes is a positive finite number. @param {unknown} minutes @param {string} name */
function checkTtl(minutes, name) {
  if (typeof minutes !== 'number' || !Number.isFinite(minutes) || minutes <= 0) {
    throw new InvalidArgument(`${name} must be a positive number of minutes; got ${JSON.stringify(minutes)}`);
  }
}

/**
 * Checks an operation's namespace as the library's own stores do: a put
 * (value given) needs a non-empty namespace without the reserved root; a
 * search may name the empty prefix (everything).
 * @param {any} op
 */
function validateOperation(op) {
  if ('namespacePrefix' in op) {
    validateNamespace(op.namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
  } else if ('matchConditions' in op || !('key' in op)) {
    for (const c of op.matchConditions ?? []) validateNamespace(c.path, { allowEmpty: true, allowReservedRoot: true });
  } else if ('value' in op && op.value !== null) {
    validateNamespace(op.namespace);
    // memtx attributes are non-empty text
    if (typeof op.key !== 'string' || op.key === '') throw new InvalidArgument('Keys must be non-empty strings.');
    if (op.options?.ttl !== undefined && op.options.ttl !== null) checkTtl(op.options.ttl, 'ttl');
  } else {
    validateNamespace(op.namespace, { allowReservedRoot: true });
  }
}
