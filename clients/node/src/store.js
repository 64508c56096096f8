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
 * Writes.  A put is one memtx transaction: `begin`, `stage`, `commit`, in
 * one SQL transaction.  The commit pipeline adjudicates the slot: the
 * store's own earlier value (same source, equal authority) is superseded;
 * a value committed by someone else after this put began (a concurrent
 * writer) makes this put stale, and memtx quarantines it
 * (`stale_late_write`) instead of overwriting: the put throws PutRefused
 * and the value that committed first stays.  PostgresStore's upsert lets
 * the last writer win.  Any other refusal (a writer of higher authority,
 * a review) throws PutRefused too; the refused record stays in memtx with
 * its reason, for the audit.  A delete (value null) revokes the slot's
 * active records (`memtx.revoke`); deleting a missing item does nothing.
 *
 * Reads write nothing.  get is `memtx.lookup` (active records readable by
 * the role, no transaction).  A search without a query and listNamespaces
 * read the store's active records under row-level security with the same
 * predicate (`memtx.is_active`); a search with a query is `memtx.recall`
 * in a memtx transaction of its own, committed empty.  An item's updatedAt
 * is its latest record's staging time, its createdAt that of the first
 * record since the item was last deleted.
 *
 * @module memtx/store
 */
import pg from 'pg';
import { BaseStore, validateNamespace } from '@langchain/langgraph-checkpoint';
import { MemtxError, InvalidArgument, fromPg } from './memory.js';

/** A put the commit pipeline did not admit: nothing changed in the store. */
export class PutRefused extends MemtxError {
  /**
   * @param {{ recordId: number, state: string, reason: string | null, namespace: string[], key: string }} info
   */
  constructor({ recordId, state, reason, namespace, key }) {
    super(`put of ${JSON.stringify(key)} in ${JSON.stringify(namespace)} was not committed: `
      + `record ${recordId} is ${state} (${reason})`);
    /** the refused record, kept by memtx with its reason */ this.recordId = recordId;
    /** @type {string} */ this.state = state;
    /** a memtx reason code, e.g. stale_late_write */ this.reason = reason;
  }
}

const SEPARATOR = ':';
const DELETE_NOTE = 'deleted through the LangGraph store';
// recall's largest k (SPEC §14): a query search ranks at most this many matches
const RECALL_MAX = 1000;

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

/** Labels compared one by one, by code unit; a shorter tuple first. */
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
 * @param {Record<string, unknown>} filter
 * @param {unknown[]} params
 * @param {string} value the SQL expression of the item's value
 */
function filterSql(filter, params, value) {
  const p = (v) => { params.push(v); return `$${params.length}`; };
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
 * createdAt of the item on record r's slot: the first active or superseded
 * record after the slot's last revoked one (a delete revokes).
 */
const CREATED_AT = `(SELECT min(c.created_at) FROM memtx.records c
   WHERE c.namespace = r.namespace AND c.entity = r.entity AND c.attribute = r.attribute
     AND (memtx.is_active(c.state) OR c.state = 'superseded')
     AND c.id > coalesce((SELECT max(d.id) FROM memtx.records d
                           WHERE d.namespace = r.namespace AND d.entity = r.entity
                             AND d.attribute = r.attribute AND d.state = 'revoked'), 0))`;

/** An Item (or SearchItem, with score) of a row with entity, attribute, value, updated_at, created_at. */
function toItem(row, withScore = false) {
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
   */
  constructor({ pool, connectionOptions, namespace = 'default', source, scope = 'private', readers = [], writers = [] } = {}) {
    super();
    this.ownsPool = !pool;
    this.pool = pool ?? new pg.Pool(typeof connectionOptions === 'string'
      ? { connectionString: connectionOptions } : connectionOptions);
    this.namespace = namespace;
    this.source = source ?? null;
    this.scope = scope;
    this.readers = readers;
    this.writers = writers;
  }

  /** @param {string} connectionString */
  static fromConnectionString(connectionString, options = {}) {
    return new MemtxStore({ ...options, connectionOptions: connectionString });
  }

  /** Checks that memtx is installed in the database (it creates nothing). */
  async setup() {
    const { rows } = await this.pool.query("SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'memtx'");
    if (!rows.length) throw new MemtxError('memtx is not installed in this database', { hint: 'Run CREATE EXTENSION memtx CASCADE as a superuser.' });
  }

  /** Ends the store's own pool (not a pool it was given). */
  async stop() {
    if (this.ownsPool && !this.pool.ended) await this.pool.end();
  }

  /**
   * Runs the operations in order on one connection; the result of each at
   * its index.  Every operation is checked before any runs, so a batch with
   * an invalid one writes nothing.
   * @param {import('@langchain/langgraph-checkpoint').Operation[]} operations
   */
  async batch(operations) {
    for (const op of operations) validateOperation(op);
    const client = await this.pool.connect();
    try {
      const results = [];
      for (const op of operations) results.push(await this.#run(client, op));
      return results;
    } catch (err) {
      throw fromPg(err) ?? err;
    } finally {
      client.release();
    }
  }

  async #run(client, op) {
    if ('namespacePrefix' in op) return op.query ? this.#recall(client, op) : this.#list(client, op);
    if ('matchConditions' in op || !('key' in op)) return this.#namespaces(client, op);
    if (!('value' in op)) return this.#get(client, op);
    if (op.value === null) return this.#delete(client, op);
    return this.#put(client, op);
  }

  /** A memtx transaction in the store's namespace, at the role's configured tier. */
  async #begin(client) {
    return (await client.query('SELECT memtx.begin(namespace => $1) AS tx', [this.namespace])).rows[0].tx;
  }

  async #get(client, { namespace, key }) {
    const { rows } = await client.query(
      `SELECT r.entity, r.attribute, r.value, r.created_at AS updated_at, ${CREATED_AT} AS created_at
         FROM memtx.lookup($1, $2, $3) r ORDER BY r.id DESC LIMIT 1`,
      [encodeNamespace(namespace), key, this.namespace]);
    return rows.length ? toItem(rows[0]) : null;
  }

  async #put(client, { namespace, key, value }) {
    const outcome = await transaction(client, async () => {
      const tx = await this.#begin(client);
      await client.query(`SELECT memtx.stage($1, $2, $3, $4::jsonb, source => $5, scope => $6::memtx.scope,
                                              readers => $7::text[], writers => $8::text[])`,
        [tx, encodeNamespace(namespace), key, JSON.stringify(value), this.source, this.scope, this.readers, this.writers]);
      return (await client.query('SELECT record_id, state, reason FROM memtx.commit($1)', [tx])).rows[0];
    });
    if (outcome.state !== 'committed' && outcome.state !== 'action_safe') {
      throw new PutRefused({ recordId: Number(outcome.record_id), state: outcome.state, reason: outcome.reason, namespace, key });
    }
  }

  async #delete(client, { namespace, key }) {
    await transaction(client, () => client.query(
      'SELECT memtx.revoke(r.id, $4) FROM memtx.lookup($1, $2, $3) r ORDER BY r.id',
      [encodeNamespace(namespace), key, this.namespace, DELETE_NOTE]));
  }

  /** A search without a query: the latest value of each item under the prefix, newest first. */
  async #list(client, { namespacePrefix, filter, limit = 10, offset = 0 }) {
    const params = [this.namespace, encodeNamespace(namespacePrefix)];
    const where = filterSql(filter, params, 'r.value');
    params.push(limit, offset);
    const { rows } = await client.query(
      `SELECT * FROM (
         SELECT DISTINCT ON (r.entity, r.attribute) r.id, r.entity, r.attribute, r.value,
                r.created_at AS updated_at, ${CREATED_AT} AS created_at
           FROM memtx.records r
          WHERE r.namespace = $1 AND memtx.is_active(r.state) AND starts_with(r.entity, $2)
            AND ${where}
          ORDER BY r.entity, r.attribute, r.id DESC) latest
        ORDER BY updated_at DESC, id DESC
        LIMIT $${params.length - 1} OFFSET $${params.length}`, params);
    return rows.map((row) => toItem(row, true));
  }

  /** A search with a query: memtx.recall's ranking, best first, filtered and paged. */
  async #recall(client, { namespacePrefix, query, filter, limit = 10, offset = 0 }) {
    const k = filter && Object.keys(filter).length ? RECALL_MAX : Math.min(RECALL_MAX, offset + limit);
    return transaction(client, async () => {
      const tx = await this.#begin(client);
      const params = [tx, query, k, encodeNamespace(namespacePrefix)];
      const where = filterSql(filter, params, 'h.value');
      params.push(limit, offset);
      const { rows } = await client.query(
        `SELECT * FROM (
           SELECT DISTINCT ON (h.entity, h.attribute) h.record_id, h.entity, h.attribute, h.value,
                  h.rank AS score, r.created_at AS updated_at, ${CREATED_AT} AS created_at
             FROM memtx.recall($1, $2, $3, $4) h JOIN memtx.records r ON r.id = h.record_id
            WHERE ${where}
            ORDER BY h.entity, h.attribute, h.record_id DESC) best
          ORDER BY score DESC, record_id
          LIMIT $${params.length - 1} OFFSET $${params.length}`, params);
      await client.query('SELECT memtx.commit($1)', [tx]);
      return rows.map((row) => toItem(row, true));
    });
  }

  async #namespaces(client, { matchConditions = [], maxDepth, limit = 100, offset = 0 }) {
    // the literal labels a prefix starts with narrow the read; the rest is matched here
    const prefix = matchConditions.find((c) => c.matchType === 'prefix')?.path ?? [];
    const star = prefix.indexOf('*');
    const literal = star < 0 ? prefix : prefix.slice(0, star);
    const { rows } = await client.query(
      `SELECT DISTINCT r.entity FROM memtx.records r
        WHERE r.namespace = $1 AND memtx.is_active(r.state) AND starts_with(r.entity, $2)`,
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

/**
 * Checks an operation's namespace as the library's own stores do: a put
 * (value given) needs a non-empty namespace without the reserved root; a
 * search may name the empty prefix (everything).
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
  } else {
    validateNamespace(op.namespace, { allowReservedRoot: true });
  }
}

/** Runs fn inside BEGIN ... COMMIT on client (ROLLBACK when it throws). */
async function transaction(client, fn) {
  await client.query('BEGIN');
  try {
    const result = await fn();
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}
