/**
 * One agent's memtx session over `pg`: a memtx transaction per turn, the
 * memory operations as methods.  The Node twin of the Python client
 * (clients/python/memtx_client).
 *
 * A memtx transaction is logical and long-lived: it spans many SQL calls
 * (one agent turn).  Each method here is one statement, `SELECT ... FROM
 * memtx.fn(name => $1::type, ...)`, so on an idle connection it is its own
 * SQL transaction and a failed call writes nothing and leaves the memtx
 * transaction usable.  (Inside a SQL transaction the caller opened, a failed
 * call aborts that transaction like any failed statement: set a SAVEPOINT
 * first to keep it.)  The principal is the role the connection runs as:
 * give each agent a connection of its own (or `SET ROLE` to its role).  The
 * queryable may be a `pg.Client`, a `pg.PoolClient` or a `pg.Pool` (a memtx
 * transaction outlives the connection that began it, so calls of one turn
 * may use different pooled connections as long as they log in as the same
 * role).
 *
 * Arguments go as bound parameters by their SQL names, each cast to its
 * declared SQL type; an argument left `undefined` (or `null`) is not sent, so
 * the function's default applies (a JSON argument's null is the JSON null).  bigint ids come back as JavaScript
 * numbers (memtx ids stay far below 2^53), ranges as their text form,
 * timestamps as `Date`.
 *
 * @module memtx/memory
 */

/**
 * A JSON value (its members are JSON values too; JSDoc has no recursive alias).
 * @typedef {null | boolean | number | string | unknown[] | { [key: string]: unknown }} JsonValue
 */

/**
 * @typedef {object} Queryable anything with pg's `query(text, values)`:
 *   a pg.Client, a pg.PoolClient or a pg.Pool
 * @property {(text: string, values?: unknown[]) => Promise<{ rows: Record<string, any>[] }>} query
 */

/**
 * @typedef {object} MemoryRecord a record as `read` and `lookup` return it
 * @property {number} id
 * @property {number} tx_id
 * @property {string} namespace
 * @property {string} entity
 * @property {string} attribute
 * @property {JsonValue} value
 * @property {string} kind
 * @property {string} state
 * @property {string | null} source
 * @property {number} authority
 * @property {number} confidence
 * @property {string} owner
 * @property {string[]} readers
 * @property {string[]} writers
 * @property {string} scope
 * @property {string} valid a tstzrange in text form
 * @property {Date | null} observed_at
 * @property {string | null} reason
 */

/**
 * @typedef {object} Recalled one ranked match of `recall`
 * @property {number} record_id
 * @property {string} entity
 * @property {string} attribute
 * @property {JsonValue} value
 * @property {number} rank
 */

/**
 * @typedef {object} Similar one match of `recallSimilar` (SPEC §19)
 * @property {number} record_id
 * @property {string} entity
 * @property {string} attribute
 * @property {JsonValue} value
 * @property {number | null} distance the model's distance to the query's embedding (null: found by words only)
 * @property {number} rank 1/(60 + position), summed over the rankings that found the record
 */

/**
 * Turns texts into embeddings, one vector per text, in order (what
 * LangGraph's stores call `embed`); it may be async.
 * @typedef {(texts: string[]) => Promise<number[][]> | number[][]} Embedder
 */

/**
 * @typedef {object} CommitResult what the commit pipeline decided for one staged record
 * @property {number} record_id
 * @property {string} state
 * @property {string | null} reason
 */

/**
 * @typedef {object} Repair one rollback-log row written by `abort` or `revoke`
 * @property {number} id
 * @property {number} root_id
 * @property {number} record_id
 * @property {string} kind
 * @property {string} action
 * @property {string} reason
 * @property {string | null} note
 */

/**
 * @typedef {object} GateResult whether a tool may run now; a refusal is a result
 * @property {boolean} allowed
 * @property {string | null} reason
 * @property {number[]} blockers
 */

/**
 * @typedef {object} ActResult the decision on one tool call
 * @property {boolean} allowed
 * @property {string | null} reason
 * @property {number | null} action_id the tool_action record of an allowed call
 * @property {number[]} blockers
 * @property {boolean} repeated the stored decision of the effect key's first call (SPEC §17)
 */

/**
 * @typedef {object} Outcome the disposition of a proposal id (SPEC §10)
 * @property {number} record_id
 * @property {number} tx_id
 * @property {string} state
 * @property {string | null} reason
 * @property {string} tx_status
 */

/**
 * @typedef {object} ProposeResult what `propose` did: its transaction, the record, the commit outcome
 * @property {number} tx_id
 * @property {number} record_id
 * @property {string} state
 * @property {string | null} reason
 */

/**
 * @typedef {object} HistoryEntry one state change of a record (SPEC §13)
 * @property {number} record_id
 * @property {string} state
 * @property {string | null} reason
 * @property {Date} at millisecond precision (the server keeps microseconds)
 * @property {number} pos the global position: the exact order
 */

/**
 * @typedef {object} WriterEpoch one fence of a role (SPEC §12)
 * @property {string} role_name
 * @property {number} epoch
 * @property {number} pos
 * @property {Date} fenced_at
 * @property {Date | null} unfenced_at null while the role is fenced
 */

/**
 * @typedef {object} StageOptions the optional arguments of `stage` (and `propose`)
 * @property {string} [kind]
 * @property {string} [source]
 * @property {number} [confidence]
 * @property {number[]} [derived_from]
 * @property {string} [scope]
 * @property {string[]} [readers]
 * @property {string[]} [writers]
 * @property {string} [valid] a tstzrange in text form, e.g. '[2026-01-01,2026-02-01)'
 * @property {string | Date} [observed_at]
 * @property {number} [expected_head]
 * @property {string} [proposal]
 */

/** SQL types of the content arguments of stage and propose (SPEC §4, §10). */
const CONTENT = {
  entity: 'text', attribute: 'text', value: 'jsonb', kind: 'memtx.kind',
  source: 'text', confidence: 'double precision', derived_from: 'bigint[]',
  scope: 'memtx.scope', readers: 'text[]', writers: 'text[]', valid: 'tstzrange',
  observed_at: 'timestamptz', expected_head: 'bigint', proposal: 'text',
};

/**
 * SQL types of the named arguments of each memtx function this client calls,
 * in the functions' order.  test/python/test_client_tables.py holds them (and COLUMNS, ENUMS
 * and the error classes) against the catalog, errcodes.txt and the Python client.
 */
export const SIGNATURES = Object.freeze({
  begin: { tier: 'memtx.risk_tier', agent: 'text', namespace: 'text', isolation: 'memtx.isolation' },
  recall: { tx: 'bigint', query: 'text', k: 'integer', entity_prefix: 'text', valid_at: 'timestamptz' },
  read: { tx: 'bigint', entity: 'text', attribute: 'text' },
  stage: { tx: 'bigint', ...CONTENT },
  propose: { ...CONTENT, namespace: 'text' },
  commit: { tx: 'bigint' },
  abort: { tx: 'bigint' },
  revoke: { record: 'bigint', note: 'text' },
  gate: { tx: 'bigint', tool: 'text' },
  act: { tx: 'bigint', tool: 'text', args: 'jsonb', derived_from: 'bigint[]', effect_key: 'text' },
  lookup: { entity: 'text', attribute: 'text', namespace: 'text', valid_at: 'timestamptz' },
  outcome: { proposal: 'text', namespace: 'text', agent: 'text' },
  read_as_of: { at: 'timestamptz', entity: 'text', attribute: 'text', namespace: 'text', valid_at: 'timestamptz' },
  restore: { tx: 'bigint', entity: 'text', attribute: 'text', at: 'timestamptz', valid_at: 'timestamptz' },
  fence: { role: 'text' },
  unfence: { role: 'text' },
  erase: { record: 'bigint', note: 'text' },
  tool_specs: { format: 'text' },
  // memtx_vector (SPEC §19): there when that companion extension is installed
  embed: { record: 'bigint', model: 'text', embedding: 'vector' },
  recall_similar: {
    tx: 'bigint', embedding: 'vector', model: 'text', k: 'integer', entity_prefix: 'text', query: 'text',
    valid_at: 'timestamptz',
  },
});

/** The functions of the companion extension memtx_vector, not of memtx itself. */
export const VECTOR_FUNCTIONS = Object.freeze(['embed', 'recall_similar']);

/**
 * Trailing arguments SPEC.md gives a function that a server may not have yet
 * (§17: outcome's harness-only agent).  The client sends one only when the
 * caller gives it, so an older server answers every other call.
 */
export const PENDING_ARGUMENTS = Object.freeze({ outcome: ['agent'] });

/** The labels of memtx's enum types (SPEC §1), in their order. */
export const ENUMS = Object.freeze({
  'memtx.state': ['raw', 'tentative', 'validated', 'committed', 'action_safe', 'quarantined', 'superseded', 'revoked'],
  'memtx.isolation': ['raw_read', 'committed_read', 'verified_read', 'causally_stable_read', 'action_safe_read'],
  'memtx.risk_tier': ['low', 'medium', 'high', 'external_action'],
  'memtx.kind': ['belief', 'summary', 'profile', 'index_entry', 'shared_copy', 'tool_action'],
  'memtx.scope': ['private', 'shared', 'public'],
});

// The tables read directly (what no function returns): a record's history, in
// order, and the writer epochs the caller may see (both under row-level security).
const HISTORY_SQL = 'SELECT record_id, state, reason, at, pos FROM memtx.history'
  + ' WHERE record_id = $1::bigint ORDER BY pos, at';
const WRITER_EPOCHS_SQL = 'SELECT role_name, epoch, pos, fenced_at, unfenced_at FROM memtx.writer_epochs'
  + ' WHERE $1::text IS NULL OR role_name = $1::text ORDER BY role_name, epoch';

/** The columns each result shape takes (valid is selected as text). */
export const COLUMNS = Object.freeze({
  record: ['id', 'tx_id', 'namespace', 'entity', 'attribute', 'value', 'kind', 'state', 'source',
    'authority', 'confidence', 'owner', 'readers', 'writers', 'scope', 'valid', 'observed_at',
    'reason'],
  recalled: ['record_id', 'entity', 'attribute', 'value', 'rank'],
  similar: ['record_id', 'entity', 'attribute', 'value', 'distance', 'rank'],
  commit: ['record_id', 'state', 'reason'],
  repair: ['id', 'root_id', 'record_id', 'kind', 'action', 'reason', 'note'],
  gate: ['allowed', 'reason', 'blockers'],
  act: ['allowed', 'reason', 'action_id', 'blockers', 'repeated'],
  outcome: ['record_id', 'tx_id', 'state', 'reason', 'tx_status'],
  propose: ['tx_id', 'record_id', 'state', 'reason'],
});

// bigint columns (pg returns int8 as text) and bigint[] columns
const IDS = new Set(['id', 'tx_id', 'record_id', 'root_id', 'action_id', 'pos', 'epoch']);
const ID_ARRAYS = new Set(['blockers']);

// ---------------------------------------------------------------- errors

/** An error reported by memtx (or PostgreSQL) for one call. */
export class MemtxError extends Error {
  /**
   * @param {string} message
   * @param {{ sqlstate?: string | null, detail?: string | null, hint?: string | null, cause?: unknown }} [info]
   */
  constructor(message, { sqlstate = null, detail = null, hint = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    /** @type {string | null} */ this.sqlstate = sqlstate;
    /** @type {string | null} */ this.detail = detail;
    /** @type {string | null} */ this.hint = hint;
  }

  /** Whether repeating the same call may succeed (serialization failure, deadlock). */
  get retryable() {
    return this.sqlstate !== null && this.sqlstate.startsWith('40');
  }

  /** The error as a plain object (what a tool result carries). */
  toJSON() {
    return { sqlstate: this.sqlstate, message: this.message, detail: this.detail, hint: this.hint };
  }
}

/** Bad input: a value out of range or of the wrong form (SQLSTATE class 22). */
export class InvalidArgument extends MemtxError {}
/** An unknown or unreadable transaction, record or function (42704, 42883, class 02). */
export class NotFound extends MemtxError {}
/** The calling role may not do this (42501). */
export class PermissionDenied extends MemtxError {}
/** A uniqueness rule refused the call (class 23): a proposal id or effect key bound to other content. */
export class Conflict extends MemtxError {}
/** The call does not fit the state it meets (classes 25 and 55, 0A000). */
export class InvalidState extends MemtxError {}
/** A limit was reached (classes 53 and 54). */
export class LimitExceeded extends MemtxError {}
/** A serialization failure or deadlock (class 40): the call can be repeated. */
export class Retryable extends MemtxError {}
/** The call needs a memtx transaction and the session has none (begin one first). */
export class NoTransaction extends MemtxError {}
/**
 * Embedding failed: the embedder threw (its error is the cause), or answered
 * other than one vector of finite numbers per text.  Nothing was written.
 */
export class EmbeddingError extends MemtxError {}

/** @type {Record<string, typeof MemtxError>} */
const BY_CODE = { '42501': PermissionDenied, '42704': NotFound, '42883': NotFound, '0A000': InvalidState };
/** @type {Record<string, typeof MemtxError>} */
const BY_CLASS = {
  '02': NotFound, '22': InvalidArgument, '23': Conflict, '25': InvalidState, '40': Retryable,
  '53': LimitExceeded, '54': LimitExceeded, '55': InvalidState,
};

/**
 * The error class for a SQLSTATE (MemtxError when no subclass fits).
 * @param {string} sqlstate
 * @returns {typeof MemtxError}
 */
export function errorClass(sqlstate) {
  return BY_CODE[sqlstate] ?? BY_CLASS[sqlstate.slice(0, 2)] ?? MemtxError;
}

/**
 * The MemtxError for an error pg raised, or null when it is no error the
 * server reported for a call: a socket error such as EPIPE, a connection
 * failure (class 08), or a report that ends the session (FATAL or PANIC,
 * e.g. 57P01 when the server shuts down).
 * @param {any} err
 * @returns {MemtxError | null}
 */
export function fromPg(err) {
  const code = err?.code;
  // the server's errors (pg's DatabaseError) have a severity; Node's socket errors do not
  if (typeof err?.severity !== 'string' || typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)
    || code.startsWith('08') || err.severity === 'FATAL' || err.severity === 'PANIC') return null;
  const Cls = errorClass(code);
  return new Cls(err.message, { sqlstate: code, detail: err.detail ?? null, hint: err.hint ?? null, cause: err });
}

/**
 * The transaction a fence refused, when err is that refusal (SQLSTATE 42501
 * "memtx transaction N was fenced", SPEC §12): no call on it is ever
 * accepted again, so a session holding it should forget it.  Null otherwise.
 * @param {unknown} err
 * @returns {number | null}
 */
export function fencedTransaction(err) {
  if (!(err instanceof MemtxError) || err.sqlstate !== '42501') return null;
  const m = /^memtx transaction (\d+) was fenced$/.exec(err.message);
  return m ? Number(m[1]) : null;
}

// ---------------------------------------------------------------- calls

/**
 * The JSON text of a jsonb argument; a TypeError naming the argument for a
 * value JSON cannot carry faithfully (JSON.stringify would turn a Set or Map
 * into {}, NaN into null and drop functions without a word).
 * @param {string} name @param {unknown} value
 */
function jsonText(name, value) {
  /** @param {unknown} v @param {string} path */
  const check = (v, path) => {
    const where = path ? `${name}${path}` : name;
    // inside a value, undefined is left out (in an array: null), as JSON.stringify does
    if (v === null || typeof v === 'string' || typeof v === 'boolean' || (v === undefined && path)) return;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new TypeError(`${where} must be JSON: ${v} is not a JSON number`);
      return;
    }
    if (typeof v !== 'object') throw new TypeError(`${where} must be JSON: a ${typeof v} is not`);
    if (Array.isArray(v)) {
      v.forEach((item, i) => check(item, `${path}[${i}]`));
      return;
    }
    if (v instanceof Date || typeof (/** @type {any} */ (v)).toJSON === 'function') return;
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      const kind = v instanceof Set ? 'a Set is not (use an array)' : v instanceof Map
        ? 'a Map is not (use an object)' : `a ${proto?.constructor?.name ?? 'class instance'} is not`;
      throw new TypeError(`${where} must be JSON: ${kind}`);
    }
    for (const [key, item] of Object.entries(v)) check(item, `${path}.${key}`);
  };
  check(value, '');
  return JSON.stringify(value);
}

/**
 * The text form of a vector argument ('[1,0.5,-2]'); a TypeError naming the
 * argument unless it is an array (or typed array) of finite numbers.
 * @param {string} name @param {unknown} value
 */
export function vectorText(name, value) {
  if (!(Array.isArray(value) || ArrayBuffer.isView(value)) || ArrayBuffer.isView(value) && !('length' in value)) {
    throw new TypeError(`${name} must be an array of numbers`);
  }
  const numbers = Array.from(/** @type {ArrayLike<unknown>} */ (value));
  numbers.forEach((x, i) => {
    if (typeof x !== 'number' || !Number.isFinite(x)) {
      throw new TypeError(`${name}[${i}] must be a finite number, not ${JSON.stringify(x) ?? String(x)}`);
    }
  });
  return `[${numbers.join(',')}]`;
}

/**
 * InvalidArgument (22P02, as the server would say) naming the argument and
 * listing the labels, unless value is a label of the enum type.
 * @param {string} name @param {string} type @param {unknown} value
 */
function checkLabel(name, type, value) {
  const labels = ENUMS[/** @type {keyof typeof ENUMS} */ (type)];
  if (labels && !labels.includes(/** @type {string} */ (value))) {
    throw new InvalidArgument(`${name} must be one of ${labels.join(', ')}; got ${JSON.stringify(value)}`,
      { sqlstate: '22P02' });
  }
}

/**
 * `SELECT columns FROM memtx.fn(name => $1::type, ...)` and its values, for
 * the arguments that are given (undefined and null mean: the SQL default).
 * @param {string} fn
 * @param {Record<string, unknown>} args
 * @param {string[] | null} columns
 * @returns {[string, unknown[]]}
 */
export function callSql(fn, args, columns = null) {
  const types = /** @type {Record<string, string> | undefined} */ (SIGNATURES[/** @type {keyof typeof SIGNATURES} */ (fn)]);
  if (!types) throw new TypeError(`no memtx function ${fn} in this client`);
  // a JSON null is a value (jsonb 'null'); elsewhere null means: not given
  const names = Object.keys(args).filter((name) => args[name] !== undefined
    && (args[name] !== null || types[name] === 'jsonb'));
  const unknown = names.filter((name) => !(name in types));
  if (unknown.length) throw new TypeError(`memtx.${fn} has no argument ${unknown.sort().join(', ')}`);
  for (const name of names) checkLabel(name, types[name], args[name]);
  // a vector goes as text with no cast: the function's declared type reads it, wherever
  // pgvector's schema is (memtx_vector's functions name the type, the caller's path need not)
  const params = names.map((name, i) => `${name} => $${i + 1}${types[name] === 'vector' ? '' : `::${types[name]}`}`);
  const values = names.map((name) => (types[name] === 'jsonb' ? jsonText(name, args[name])
    : types[name] === 'vector' ? vectorText(name, args[name]) : args[name]));
  const cols = columns === null ? '*'
    : columns.map((c) => (c === 'valid' ? 'valid::text AS valid' : `"${c}"`)).join(', ');
  return [`SELECT ${cols} FROM memtx.${fn}(${params.join(', ')})`, values];
}

/** @param {Record<string, any>} row */
function decode(row) {
  for (const key of Object.keys(row)) {
    const v = row[key];
    if (IDS.has(key) && typeof v === 'string') row[key] = Number(v);
    else if (ID_ARRAYS.has(key)) row[key] = (v ?? []).map(Number);
  }
  return row;
}

/**
 * @typedef {object} MemoryOptions
 * @property {string} [namespace] the memtx namespace (default 'default')
 * @property {number | null} [tx] a memtx transaction to resume
 * @property {'private' | 'shared' | 'public'} [scope] the default scope of what this session
 *   stages and proposes (memtx's own default: private, readable by the owner alone)
 * @property {string[]} [readers] the default readers (roles) of what it stages and proposes
 * @property {string[]} [writers] the default writers (roles) of what it stages and proposes
 * @property {boolean} [allowUnregisteredTools] act on tools memtx.register_tool never
 *   registered without a warning (memtx treats them as irreversible)
 * @property {Embedder | LangChainEmbeddings} [embedder] embeds what the session stages and
 *   proposes (in the same statement as the write) and the queries of recallSimilar
 * @property {string} [embeddingModel] the memtx_vector model its embeddings are stored
 *   under (registered by a harness with memtx.register_embedding_model); needed with embedder
 * @property {(entity: string, attribute: string, value: JsonValue) => string} [embeddingText]
 *   the text of a record that is embedded (default: embeddingText)
 */

/**
 * An embeddings object of LangChain's shape (what LangGraph's stores accept as `embed`).
 * @typedef {{ embedDocuments: (texts: string[]) => Promise<number[][]>,
 *             embedQuery?: (text: string) => Promise<number[]> }} LangChainEmbeddings
 */

/**
 * The text embedded for a record: its entity, its attribute and its value (a
 * JSON string's text, any other value's JSON text), separated by spaces --
 * the words memtx.recall indexes.  The Python client makes the same text.
 * @param {string} entity @param {string} attribute @param {JsonValue} value
 */
export function embeddingText(entity, attribute, value) {
  return `${entity} ${attribute} ${typeof value === 'string' ? value : JSON.stringify(value)}`;
}

/**
 * The two uses of an embedder, a function of texts or a LangChain
 * embeddings object: documents (one vector per text) and a query.  Each
 * checks the answer (one vector of finite numbers per text, of `dims`
 * numbers when given) and reports any failure as an EmbeddingError whose
 * cause is the embedder's own error.
 * @param {Embedder | LangChainEmbeddings} embed @param {string} name what to call it in errors
 * @param {number} [dims]
 */
export function embeddingFunctions(embed, name, dims) {
  const isObject = typeof embed === 'object' && embed !== null && typeof embed.embedDocuments === 'function';
  if (typeof embed !== 'function' && !isObject) {
    throw new TypeError(`${name} must be a function of texts to vectors, or an object with embedDocuments`);
  }
  /** @param {() => unknown} call @param {number} count */
  const run = async (call, count) => {
    let vectors;
    try {
      vectors = await call();
    } catch (err) {
      throw new EmbeddingError(`${name} failed: ${/** @type {Error} */ (err)?.message ?? err}`, { cause: err });
    }
    return checkVectors(vectors, count, name, dims);
  };
  const documents = isObject
    ? (/** @type {string[]} */ texts) => run(() => /** @type {LangChainEmbeddings} */ (embed).embedDocuments(texts), texts.length)
    : (/** @type {string[]} */ texts) => run(() => /** @type {Embedder} */ (embed)(texts), texts.length);
  const query = isObject && typeof embed.embedQuery === 'function'
    ? async (/** @type {string} */ text) => (await run(async () => [await /** @type {any} */ (embed).embedQuery(text)], 1))[0]
    : async (/** @type {string} */ text) => (await documents([text]))[0];
  return { documents, query };
}

/**
 * The vectors an embedder answered, checked: an array of `count` arrays of
 * finite numbers (of `dims` numbers, when given); EmbeddingError otherwise.
 * @param {unknown} vectors @param {number} count @param {string} name @param {number} [dims]
 * @returns {number[][]}
 */
export function checkVectors(vectors, count, name, dims) {
  if (!Array.isArray(vectors) || vectors.length !== count) {
    const got = Array.isArray(vectors) ? `${vectors.length} vectors` : JSON.stringify(vectors)?.slice(0, 80) ?? String(vectors);
    throw new EmbeddingError(`${name} answered ${got} for ${count} text${count === 1 ? '' : 's'}`);
  }
  return vectors.map((v, i) => {
    if (!(Array.isArray(v) || ArrayBuffer.isView(v))) throw new EmbeddingError(`${name}: vector ${i} is not an array of numbers`);
    const numbers = Array.from(/** @type {ArrayLike<unknown>} */ (v));
    if (!numbers.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw new EmbeddingError(`${name}: vector ${i} has a value that is not a finite number`);
    }
    if (dims !== undefined && numbers.length !== dims) {
      throw new EmbeddingError(`${name}: vector ${i} has ${numbers.length} dimensions, not ${dims}`);
    }
    return /** @type {number[]} */ (numbers);
  });
}

/**
 * A missing memtx_vector (its functions unknown, 42883) said as such.
 * @param {unknown} err
 */
function vectorMissing(err) {
  if (!(err instanceof MemtxError) || err.sqlstate !== '42883' || !/memtx\.(embed|recall_similar)\(/.test(err.message)) return err;
  return new NotFound('memtx_vector is not installed in this database', {
    sqlstate: '42883', hint: 'A superuser runs CREATE EXTENSION memtx_vector CASCADE (pgvector 0.8.0 or later).', cause: err,
  });
}

/** An agent's memory session in one namespace, over one pg queryable. */
export class Memory {
  /**
   * The permission block (scope, readers, writers) applies to every stage
   * and propose of the session that does not give its own: records are
   * private to their owner unless shared, so agents that share memory say so
   * once here.
   * @param {Queryable} db
   * @param {MemoryOptions} [options]
   */
  constructor(db, { namespace = 'default', tx = null, scope, readers, writers, allowUnregisteredTools = false,
    embedder, embeddingModel, embeddingText: textOf = embeddingText } = {}) {
    this.db = db;
    this.namespace = namespace;
    if (scope !== undefined) checkLabel('scope', 'memtx.scope', scope);
    for (const [name, roles] of [['readers', readers], ['writers', writers]]) {
      if (roles !== undefined && !(Array.isArray(roles) && roles.every((r) => typeof r === 'string'))) {
        throw new TypeError(`${name} must be an array of role names`);
      }
    }
    /** the permission block stage and propose use when not given one */
    this.defaults = Object.freeze({ scope, readers, writers });
    this.allowUnregisteredTools = allowUnregisteredTools;
    /** @type {number | null} */ this._tx = tx;
    this._open = tx !== null;
    /** what the last commit() (also the one turn() makes) decided @type {CommitResult[]} */
    this.lastCommit = [];
    /** @type {Set<string>} tool names found in memtx.tools */
    this._registered = new Set();
    if (embedder !== undefined && typeof embeddingModel !== 'string') {
      throw new TypeError('an embedder needs embeddingModel: the memtx_vector model its vectors are stored under');
    }
    /** what embeds the session's writes and queries (none: they are not embedded) */
    this.embedder = embedder ?? null;
    this.embeddingModel = embeddingModel ?? null;
    this.embeddingText = textOf;
    this._embed = embedder === undefined ? null : embeddingFunctions(embedder, 'the embedder');
  }

  /**
   * The options a stage or propose sends: the session's permission block
   * where the call gives none.
   * @param {StageOptions} options
   */
  _withDefaults(options) {
    const out = { ...options };
    for (const [name, value] of Object.entries(this.defaults)) {
      if (value !== undefined && (out[/** @type {keyof StageOptions} */ (name)] ?? null) === null) {
        /** @type {any} */ (out)[name] = value;
      }
    }
    return out;
  }

  /**
   * A session like this one (same connection, namespace, permission block and
   * tool policy) with no transaction of its own.
   * @returns {Memory}
   */
  sibling() {
    return new Memory(this.db, { namespace: this.namespace, ...this.defaults,
      allowUnregisteredTools: this.allowUnregisteredTools, embedder: this.embedder ?? undefined,
      embeddingModel: this.embeddingModel ?? undefined, embeddingText: this.embeddingText });
  }

  /**
   * Run one memtx function; errors with a SQLSTATE become MemtxError.
   * @param {string} fn
   * @param {Record<string, unknown>} args
   * @param {string[] | null} [columns]
   * @returns {Promise<Record<string, any>[]>}
   */
  async call(fn, args, columns = null) {
    return this._query(...callSql(fn, args, columns));
  }

  /**
   * Run one statement; errors with a SQLSTATE become MemtxError.
   * @param {string} text
   * @param {unknown[]} values
   * @returns {Promise<Record<string, any>[]>}
   */
  async _query(text, values) {
    try {
      const { rows } = await this.db.query(text, values);
      return rows.map(decode);
    } catch (err) {
      throw fromPg(err) ?? err;
    }
  }

  /** @param {string} fn @param {Record<string, unknown>} args */
  async _scalar(fn, args) {
    const [row] = await this.call(fn, args);
    return Object.values(row)[0];
  }

  /** The current memtx transaction (NoTransaction when none was begun). */
  get tx() {
    if (this._tx === null) throw new NoTransaction('no memtx transaction: call begin() or use turn() first');
    return this._tx;
  }

  /** Whether this session began (or attached) a transaction it has not ended. */
  get isOpen() {
    return this._open;
  }

  // -------------------------------------------------------- transactions

  /**
   * Open a memtx transaction in the namespace and make it current.  tier,
   * agent and isolation are for a harness opening a turn on an agent's behalf.
   * @param {{ tier?: string, agent?: string, isolation?: string }} [options]
   * @returns {Promise<number>}
   */
  async begin({ tier, agent, isolation } = {}) {
    const tx = Number(await this._scalar('begin', { namespace: this.namespace, tier, agent, isolation }));
    this.attach(tx);
    this.lastCommit = [];
    return tx;
  }

  /** Make an existing memtx transaction current (e.g. one a harness began). @param {number} tx */
  attach(tx) {
    this._tx = tx;
    this._open = true;
  }

  /** Forget the current transaction (it was ended, or its lease expired, elsewhere). */
  detach() {
    this._open = false;
  }

  /**
   * Run the commit pipeline; one result per staged record, in staging order.
   * Idempotent: a repeat returns the stored outcome.
   * @returns {Promise<CommitResult[]>}
   */
  async commit() {
    this.lastCommit = /** @type {CommitResult[]} */ (await this.call('commit', { tx: this.tx }, COLUMNS.commit));
    this._open = false;
    return this.lastCommit;
  }

  /**
   * Abort the transaction: its staging is revoked and repaired like any retraction.
   * @returns {Promise<Repair[]>}
   */
  async abort() {
    const repairs = /** @type {Repair[]} */ (await this.call('abort', { tx: this.tx }, COLUMNS.repair));
    this._open = false;
    return repairs;
  }

  /**
   * One agent turn: begin, run fn(this); then commit if still open (the
   * outcome is in lastCommit), or, when fn throws, abort if still open and
   * rethrow.
   * @template T
   * @param {(memory: Memory) => Promise<T> | T} fn
   * @param {{ tier?: string, agent?: string, isolation?: string }} [options]
   * @returns {Promise<T>}
   */
  async turn(fn, options = {}) {
    await this.begin(options);
    let result;
    try {
      result = await fn(this);
    } catch (err) {
      if (this._open) {
        try {
          await this.abort();
        } catch (abortErr) {
          throw new AggregateError([err, abortErr], `the turn failed and memtx.abort(${this._tx}) failed too`);
        }
      }
      throw err;
    }
    if (this._open) await this.commit();
    return result;
  }

  // ---------------------------------------------------------------- reads

  /**
   * What the transaction sees (a slot, an entity, or the namespace); joins its read set.
   * @param {string} [entity]
   * @param {string} [attribute]
   * @returns {Promise<MemoryRecord[]>}
   */
  async read(entity, attribute) {
    return /** @type {any} */ (await this.call('read', { tx: this.tx, entity, attribute }, COLUMNS.record));
  }

  /**
   * The best k visible full-text matches (valid at valid_at, when given),
   * best first; they join the read set.
   * @param {string} query
   * @param {{ k?: number, entity_prefix?: string, valid_at?: string | Date }} [options]
   * @returns {Promise<Recalled[]>}
   */
  async recall(query, { k, entity_prefix, valid_at } = {}) {
    return /** @type {any} */ (await this.call('recall', { tx: this.tx, query, k, entity_prefix, valid_at },
      COLUMNS.recalled));
  }

  /**
   * Active records on the slot (or entity) readable by the role (valid at
   * valid_at, when given), without a transaction: no read set, no lease, no
   * write (works on a hot standby).
   * @param {string} entity
   * @param {string} [attribute]
   * @param {{ valid_at?: string | Date }} [options]
   * @returns {Promise<MemoryRecord[]>}
   */
  async lookup(entity, attribute, { valid_at } = {}) {
    return /** @type {any} */ (await this.call('lookup',
      { entity, attribute, namespace: this.namespace, valid_at }, COLUMNS.record));
  }

  /**
   * The disposition of a proposal id, or null when unknown or unreadable.
   * Proposal ids are per agent (SPEC §17): a harness names the agent whose
   * proposal it asks about (a server before SPEC §17 has no such argument).
   * @param {string} proposal
   * @param {{ agent?: string }} [options]
   * @returns {Promise<Outcome | null>}
   */
  async outcome(proposal, { agent } = {}) {
    const rows = await this.call('outcome', { proposal, namespace: this.namespace, agent }, COLUMNS.outcome);
    return /** @type {any} */ (rows[0] ?? null);
  }

  /**
   * Every state change of a record, in `pos` order (SPEC §13); empty when the
   * record does not exist or the role may not read it.  No transaction needed.
   * @param {number} record
   * @returns {Promise<HistoryEntry[]>}
   */
  async history(record) {
    return /** @type {any} */ (await this._query(HISTORY_SQL, [record]));
  }

  /**
   * The records of the namespace (or entity, or slot) that were active at
   * `at`, with their state and reason as then, in id order; `valid_at` keeps
   * those whose validity contains it.  No transaction needed; writes nothing.
   * A Date has millisecond precision: to read as of an instant the server
   * reported with microseconds, pass its text form.
   * @param {string | Date} at
   * @param {{ entity?: string, attribute?: string, valid_at?: string | Date }} [options]
   * @returns {Promise<MemoryRecord[]>}
   */
  async readAsOf(at, { entity, attribute, valid_at } = {}) {
    return /** @type {any} */ (await this.call('read_as_of',
      { at, entity, attribute, namespace: this.namespace, valid_at }, COLUMNS.record));
  }

  // --------------------------------------------------------------- writes

  /**
   * Stage a tentative record (value: any JSON value); returns its id.  With
   * an embedder, the record's text (embeddingText) is embedded first and the
   * vector attached in the same statement as the stage: when either fails,
   * nothing is written.
   * @param {string} entity
   * @param {string} attribute
   * @param {JsonValue} value
   * @param {StageOptions} [options]
   * @returns {Promise<number>}
   */
  async stage(entity, attribute, value, options = {}) {
    const args = { ...this._withDefaults(options), tx: this.tx, entity, attribute, value };
    if (!this._embed) return Number(await this._scalar('stage', args));
    return Number((await this._writeEmbedded('stage', args, null, 'stage'))[0].stage);
  }

  /**
   * Begin, stage and commit one record in one call, at the role's tier (SPEC
   * §10); needs no turn and leaves the session's transaction alone.  Options
   * as for `stage`.  A stale expected_head is a result (state quarantined,
   * reason stale_head), not an error.  After a lost reply, call again with the
   * same proposal and content: the stored result comes back and nothing is
   * written (other content under the id rejects with Conflict, 23505).  With
   * an embedder, the record is embedded in the same statement, as for `stage`.
   * @param {string} entity
   * @param {string} attribute
   * @param {JsonValue} value
   * @param {StageOptions} [options]
   * @returns {Promise<ProposeResult>}
   */
  async propose(entity, attribute, value, options = {}) {
    const args = { ...this._withDefaults(options), namespace: this.namespace, entity, attribute, value };
    const [row] = this._embed ? await this._writeEmbedded('propose', args, COLUMNS.propose, 'record_id')
      : await this.call('propose', args, COLUMNS.propose);
    return /** @type {ProposeResult} */ (row);
  }

  /**
   * Stage in the current transaction a copy of the record that was active on
   * the slot at `at` (valid at valid_at, when given), expecting the slot's
   * current head; returns the new record's id.  No such single record:
   * InvalidArgument (22023).
   * @param {string} entity
   * @param {string} attribute
   * @param {string | Date} at
   * @param {{ valid_at?: string | Date }} [options]
   * @returns {Promise<number>}
   */
  async restore(entity, attribute, at, { valid_at } = {}) {
    return Number(await this._scalar('restore', { tx: this.tx, entity, attribute, at, valid_at }));
  }

  /**
   * Retract a record and repair everything derived from it, by kind.
   * @param {number} record
   * @param {string} [note]
   * @returns {Promise<Repair[]>}
   */
  async revoke(record, note) {
    return /** @type {any} */ (await this.call('revoke', { record, note }, COLUMNS.repair));
  }

  // ------------------------------------------- embeddings (memtx_vector, SPEC §19)

  /**
   * One vector per text from the session's embedder, checked.
   * @param {string[]} texts
   * @returns {Promise<number[][]>}
   */
  async embedTexts(texts) {
    if (!this._embed) throw new TypeError('this session has no embedder (Memory option embedder)');
    return this._embed.documents(texts);
  }

  /**
   * fn's statement (stage or propose) and, in the same statement, the
   * embedding of the record it writes (column `id` of its row): the vector
   * is computed first, so an embedder that fails writes nothing, and a
   * vector memtx.embed refuses rolls the write back with it.
   * @param {string} fn @param {Record<string, any>} args @param {string[] | null} columns @param {string} id
   */
  async _writeEmbedded(fn, args, columns, id) {
    const [vector] = await this.embedTexts([this.embeddingText(args.entity, args.attribute, args.value)]);
    const [text, values] = callSql(fn, args, columns);
    const n = values.length;
    try {
      return await this._query(`SELECT s.* FROM (${text} OFFSET 0) s`
        + ` CROSS JOIN LATERAL memtx.embed(s."${id}", $${n + 1}::text, $${n + 2}) e`,
      [...values, this.embeddingModel, vectorText('embedding', vector)]);
    } catch (err) {
      throw vectorMissing(err);
    }
  }

  /**
   * Attach a record's embedding under a model (memtx.embed: the record's
   * owner or a harness, in any state but erased; the same vector again does
   * nothing).  The vector is `embedding` when given, else the embedder's for
   * `text`, else for the record's own text (read under row-level security),
   * so a record written without one (or before the model) is embedded later.
   * @param {number} record
   * @param {{ model?: string, embedding?: number[], text?: string }} [options] model: default embeddingModel
   * @returns {Promise<void>}
   */
  async embed(record, { model = this.embeddingModel ?? undefined, embedding, text } = {}) {
    if (model === undefined) throw new TypeError('embed needs a model (or the session option embeddingModel)');
    let vector = embedding;
    if (vector === undefined) {
      let content = text;
      if (content === undefined) {
        const [row] = await this._query('SELECT entity, attribute, value FROM memtx.records WHERE id = $1::bigint', [record]);
        if (!row) throw new NotFound(`record ${record} does not exist or is not readable`, { sqlstate: '42704' });
        content = this.embeddingText(row.entity, row.attribute, row.value);
      }
      [vector] = await this.embedTexts([content]);
    }
    try {
      await this.call('embed', { record, model, embedding: vector });
    } catch (err) {
      throw vectorMissing(err);
    }
  }

  /**
   * Recall by meaning (memtx.recall_similar): the k records visible to the
   * transaction nearest to the query's embedding, nearest first; with
   * `hybrid` (the default) the query's words are ranked too and the two
   * rankings fused.  The embedding is `embedding` when given, else the
   * embedder's for the query.  They join the read set.
   * @param {string | null} query
   * @param {{ k?: number, entity_prefix?: string, valid_at?: string | Date, embedding?: number[],
   *           model?: string, hybrid?: boolean }} [options] model: default embeddingModel
   * @returns {Promise<Similar[]>}
   */
  async recallSimilar(query, { k, entity_prefix, valid_at, embedding, model = this.embeddingModel ?? undefined,
    hybrid = true } = {}) {
    const tx = this.tx; // NoTransaction before anything is embedded
    if (model === undefined) throw new TypeError('recallSimilar needs a model (or the session option embeddingModel)');
    if (embedding === undefined && typeof query !== 'string') throw new TypeError('recallSimilar needs a query or an embedding');
    if (embedding === undefined && !this._embed) throw new TypeError('this session has no embedder (Memory option embedder)');
    const vector = embedding ?? await /** @type {NonNullable<Memory['_embed']>} */ (this._embed).query(/** @type {string} */ (query));
    try {
      return /** @type {any} */ (await this.call('recall_similar', {
        tx, embedding: vector, model, k, entity_prefix, query: hybrid ? query : undefined, valid_at,
      }, COLUMNS.similar));
    } catch (err) {
      throw vectorMissing(err);
    }
  }

  // ---------------------------------------------------------- action time

  /**
   * Whether the tool may run now; writes nothing.
   * @param {string} tool
   * @returns {Promise<GateResult>}
   */
  async gate(tool) {
    const [row] = await this.call('gate', { tx: this.tx, tool }, COLUMNS.gate);
    return /** @type {GateResult} */ (row);
  }

  /**
   * Gate a tool call on its declared inputs and record the decision.  Run the
   * effect only when `allowed`; a repeat under the same effectKey returns the
   * stored decision (same action_id, `repeated` true) and records nothing.
   *
   * A tool memtx.register_tool never registered is legal (memtx treats it as
   * irreversible, SPEC §5) but usually a misspelt or made-up name: act emits
   * a warning (process.emitWarning, code MEMTX_UNREGISTERED_TOOL) before
   * acting, unless the session or the call allows unregistered tools.
   * @param {string} tool
   * @param {JsonValue} args
   * @param {number[]} [derivedFrom]
   * @param {string} [effectKey]
   * @param {{ allowUnregistered?: boolean }} [options]
   * @returns {Promise<ActResult>}
   */
  async act(tool, args, derivedFrom = [], effectKey, { allowUnregistered = this.allowUnregisteredTools } = {}) {
    const tx = this.tx; // NoTransaction before anything is asked
    if (!allowUnregistered && !(await this.isRegistered(tool))) {
      process.emitWarning(`memtx.act: tool ${JSON.stringify(tool)} is not registered; memtx treats it as irreversible `
        + '(register it with memtx.register_tool, or pass allowUnregistered to act on it without this warning)',
      { code: 'MEMTX_UNREGISTERED_TOOL' });
    }
    const [row] = await this.call('act', {
      tx, tool, args, derived_from: derivedFrom, effect_key: effectKey,
    }, COLUMNS.act);
    return /** @type {ActResult} */ (row);
  }

  /**
   * Whether memtx.register_tool registered the tool (memtx.tools, readable by
   * every role); a name found once is remembered, as tools are never
   * unregistered.
   * @param {string} tool
   * @returns {Promise<boolean>}
   */
  async isRegistered(tool) {
    if (this._registered.has(tool)) return true;
    const rows = await this._query('SELECT 1 FROM memtx.tools WHERE name = $1::text', [tool]);
    if (rows.length) this._registered.add(tool);
    return rows.length > 0;
  }

  // -------------------------------- harness operations (a harness's connection)

  /**
   * Advance the role's writer epoch and return it: its open transactions are
   * aborted (reason fenced) and its writes refused (42501) until `unfence`.
   * @param {string} role
   * @returns {Promise<number>}
   */
  async fence(role) {
    return Number(await this._scalar('fence', { role }));
  }

  /**
   * Let a fenced role write again; transactions opened before the fence stay refused.
   * @param {string} role
   * @returns {Promise<void>}
   */
  async unfence(role) {
    await this.call('unfence', { role });
  }

  /**
   * Legal erasure: revoke the record (reason erased, with cascade) unless
   * revoked already, then remove its value everywhere memtx keeps it; returns
   * the repairs (none when it was erased already).
   * @param {number} record
   * @param {string} [note]
   * @returns {Promise<Repair[]>}
   */
  async erase(record, note) {
    return /** @type {any} */ (await this.call('erase', { record, note }, COLUMNS.repair));
  }

  /**
   * The fences of a role (or of every role), by role and epoch: what the
   * caller may see, i.e. a harness every role's and any other role its own.
   * @param {string} [role]
   * @returns {Promise<WriterEpoch[]>}
   */
  async writerEpochs(role) {
    return /** @type {any} */ (await this._query(WRITER_EPOCHS_SQL, [role ?? null]));
  }

  // ----------------------------------------------------- tool definitions

  /**
   * Tool definitions for LLM function calling: 'openai', 'anthropic' or 'mcp'.
   * @param {string} [format]
   * @returns {Promise<Record<string, any>[]>}
   */
  async toolSpecs(format = 'openai') {
    return /** @type {any} */ (await this._scalar('tool_specs', { format }));
  }
}
