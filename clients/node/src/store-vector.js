/**
 * MemtxStore's vector index: the `index: { dims, embed, fields }` option of
 * LangGraph's PostgresStore, over memtx_vector (SPEC §19).
 *
 * What is embedded.  As in PostgresStore, a put embeds the texts its value
 * has at the index's field paths (`fields`, default `["$"]`, the whole
 * value; a put's own `index` array replaces them, `index: false` embeds
 * nothing): `$` is the value's JSON; `a.b` a nested field; `a[0]`, `a[-1]`
 * (the last) an element; `a[*]` every element (and `a[*].b` each element's
 * field).  A string is its own text, any other value its JSON (numbers,
 * booleans their text); blank texts are left out.  The embedder is called
 * once per put, with every text of the item, before anything is written.
 *
 * How an item maps onto memtx.  An item is one record (MemtxStore's
 * mapping), and memtx keeps one embedding per record per model.
 * PostgresStore keeps one vector per (item, field path) and ranks an item
 * by its nearest one, so an item here has up to `maxTexts` vectors, the
 * j-th text's under the j-th model of the store: `model` itself, then
 * `model:1`, `model:2`, ... (default maxTexts: the number of fields).  The
 * models are memtx_vector models like any other, each with its HNSW index,
 * registered by a harness (`setup()` registers them when its role is one).
 * Every embedding belongs to the record the put wrote, attached in the same
 * statement as the put's memtx.propose, so a put is still one statement,
 * with its embeddings or not at all; the item's earlier records keep theirs
 * (superseded, they are never recalled); a delete revokes, an erasure
 * deletes them (memtx_vector's trigger), and expired items are not recalled
 * (SPEC §18).  A put with more texts than models is refused before
 * anything is written, naming the models to register.
 *
 * Search.  With a query, `mode` is PostgresStore's: `auto` (the default) is
 * `vector` when the store has an index, `text` is memtx.recall's ranking
 * (store.js), `vector` and `hybrid` are here.  Both embed the query
 * (embedQuery of an Embeddings object, else the function) and then, in one
 * statement, begin a memtx transaction, take the `limit + offset` records (1000 with a filter)
 * nearest to it under each of the store's models -- memtx.recall_similar:
 * only records the search's transaction may see, through each model's
 * index, joining its read set -- and for `hybrid` also recall's best
 * matches of the query's words, commit the transaction empty, and filter
 * them.  An item's distance is that of its nearest vector, recomputed from
 * the vectors themselves (memtx.embeddings, readable with the record, read
 * by the same statement) when the item has several models, the search asks
 * for another distance than the store's, or it is hybrid.  Scores, as PostgresStore's: cosine similarity (1 −
 * distance) for cosine, 1 / (1 + distance) for l2, the inner product for
 * inner_product; `similarityThreshold` keeps the items scoring at least
 * that (when above 0).  Hybrid scores `vectorWeight` × cosine similarity +
 * (1 − vectorWeight) × the words' rank (recall's ts_rank; 0 when the words
 * do not match), over the items the words match or whose similarity reaches
 * the threshold (0 by default), and only items with vectors.  Results come
 * by score, best first, then record id; `offset` and `limit` page them.
 *
 * @module memtx/store-vector
 */
import { embeddingFunctions, EmbeddingError, InvalidArgument, MemtxError, vectorText } from './memory.js';

/** The vectors a put attaches: operations carry them from prepare() to the put. */
export const EMBEDDINGS = Symbol('memtx.store.embeddings');
/** The query's embedding a vector or hybrid search carries from prepare(). */
export const QUERY_VECTOR = Symbol('memtx.store.queryVector');

const METRICS = ['cosine', 'l2', 'inner_product'];
// memtx_vector's rules for model names and dimensions (SPEC §19)
const MODEL_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;
const MAX_DIMS = 2000;
// recall_similar's largest k (SPEC §19): a vector search ranks at most this many records per model
const K_MAX = 1000;

/**
 * @typedef {object} IndexConfig PostgresStore's index option, as MemtxStore takes it
 * @property {number} dims the vectors' dimensions (1..2000)
 * @property {import('./memory.js').Embedder | import('./memory.js').LangChainEmbeddings} embed
 *   texts → vectors, or an Embeddings object (embedDocuments, embedQuery)
 * @property {string[]} [fields] JSON paths of the texts to embed (default ["$"], the whole value)
 * @property {'cosine' | 'l2' | 'inner_product'} [distanceMetric] the models' distance (default cosine)
 * @property {string} [model] the memtx_vector model (default `langgraph-<distanceMetric>-<dims>`)
 * @property {number} [maxTexts] how many texts an item may have embedded (default: fields.length)
 * @property {'hnsw'} [indexType] memtx_vector's indexes are HNSW
 */

/**
 * The tokens of a field path: `a.b[0][*]` → ['a', 'b', 0, '*'].
 * @param {string} path
 * @returns {(string | number)[]}
 */
function parsePath(path) {
  /** @type {(string | number)[]} */
  const tokens = [];
  for (const part of path.split('.')) {
    const m = /^([^[\]]*)((?:\[(?:\*|-?\d+)\])*)$/.exec(part);
    if (!m || (m[1] === '' && m[2] === '')) throw new InvalidArgument(`invalid field path ${JSON.stringify(path)}`);
    if (m[1] !== '') tokens.push(m[1]);
    for (const [, index] of m[2].matchAll(/\[(\*|-?\d+)\]/g)) tokens.push(index === '*' ? '*' : Number(index));
  }
  return tokens;
}

/**
 * The text of a value at the end of a path: a string itself, null nothing,
 * anything else its JSON (numbers and booleans their text).
 * @param {unknown} v
 */
const textOf = (v) => (typeof v === 'string' ? v : v === null || v === undefined ? null
  : typeof v === 'object' ? JSON.stringify(v) : String(v));

/**
 * The texts at a field path of a value (several through `[*]`).
 * @param {unknown} value @param {string} path
 * @returns {string[]}
 */
export function textsAt(value, path) {
  if (path === '$') return [JSON.stringify(value)];
  /** @param {unknown} v @param {(string | number)[]} tokens @returns {string[]} */
  const walk = (v, tokens) => {
    if (tokens.length === 0) {
      const t = textOf(v);
      return t === null ? [] : [t];
    }
    const [token, ...rest] = tokens;
    if (token === '*') return Array.isArray(v) ? v.flatMap((item) => (item == null ? [] : walk(item, rest))) : [];
    if (typeof token === 'number') {
      if (!Array.isArray(v)) return [];
      const i = token < 0 ? v.length + token : token;
      return i >= 0 && i < v.length ? walk(v[i], rest) : [];
    }
    return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, token)
      ? walk(/** @type {Record<string, unknown>} */ (v)[token], rest) : [];
  };
  return walk(value, parsePath(path));
}

/**
 * The (path, text) pairs a put embeds: each field's non-blank texts, trimmed,
 * a field with several named `path[i]`.
 * @param {unknown} value @param {string[]} fields
 */
export function textsToEmbed(value, fields) {
  return fields.flatMap((path) => {
    const texts = textsAt(value, path);
    return texts.map((t, i) => ({ path: texts.length > 1 ? `${path}[${i}]` : path, text: t.trim() }))
      .filter((t) => t.text !== '');
  });
}

/** Distance between two vectors by a metric, as pgvector measures it. @param {string} metric @param {number[]} a @param {number[]} b */
function distance(metric, a, b) {
  let dot = 0;
  let na = 0;
  let nb = 0;
  let sq = 0;
  for (let i = 0; i < a.length; i += 1) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
    sq += (a[i] - b[i]) ** 2;
  }
  if (metric === 'l2') return Math.sqrt(sq);
  if (metric === 'inner_product') return -dot;
  return na === 0 || nb === 0 ? NaN : 1 - dot / Math.sqrt(na * nb);
}

/** A score from a distance, as PostgresStore scores: higher is nearer. @param {string} metric @param {number} d */
function score(metric, d) {
  if (metric === 'l2') return 1 / (1 + d);
  if (metric === 'inner_product') return -d;
  return 1 - d;
}

/**
 * @typedef {object} SqlKit what the index borrows from store.js
 * @property {(filter: Record<string, unknown> | undefined, params: unknown[], value: string) => string} filterSql
 * @property {string} createdAt the SQL of an item's createdAt (over record r)
 * @property {(row: Record<string, any>, withScore?: boolean) => any} toItem
 * @property {(labels: string[]) => string} encodeNamespace
 */

export class StoreIndex {
  /**
   * @param {IndexConfig} config @param {SqlKit} kit
   */
  constructor(config, kit) {
    const { dims, embed, fields = ['$'], distanceMetric = 'cosine', model, maxTexts, indexType, ...others } = config ?? {};
    /** @type {Record<string, unknown>} */
    const rest = others;
    if (!Number.isInteger(dims) || dims < 1 || dims > MAX_DIMS) {
      throw new InvalidArgument(`index.dims must be an integer from 1 to ${MAX_DIMS}; got ${JSON.stringify(dims)}`);
    }
    if (!Array.isArray(fields) || !fields.every((f) => typeof f === 'string' && f !== '')) {
      throw new InvalidArgument('index.fields must be an array of field paths ("$" for the whole value)');
    }
    for (const f of fields) if (f !== '$') parsePath(f);
    if (!METRICS.includes(distanceMetric)) {
      throw new InvalidArgument(`index.distanceMetric must be one of ${METRICS.join(', ')}; got ${JSON.stringify(distanceMetric)}`);
    }
    if (indexType !== undefined && indexType !== 'hnsw') {
      throw new InvalidArgument(`index.indexType ${JSON.stringify(indexType)} is not supported: memtx_vector indexes each model with HNSW`);
    }
    // how PostgresStore builds its indexes: memtx_vector's registration does that here
    for (const [key, why] of [['hnsw', 'each model\'s HNSW index is built by memtx.register_embedding_model with pgvector\'s defaults '
      + '(set hnsw.ef_search for the store\'s role to search wider)'], ['ivfflat', 'memtx_vector indexes with HNSW'],
    ['createAllMetricIndexes', 'a memtx_vector model has one distance; a search by another is scored from the vectors']]) {
      if (rest[key] !== undefined && rest[key] !== false) throw new InvalidArgument(`index.${key} is not supported: ${why}`);
      delete rest[key];
    }
    const unknown = Object.keys(rest);
    if (unknown.length) throw new InvalidArgument(`index has no option ${unknown.sort().join(', ')}`);
    const slots = maxTexts ?? fields.length;
    if (!Number.isInteger(slots) || slots < 1) throw new InvalidArgument(`index.maxTexts must be a positive integer; got ${JSON.stringify(maxTexts)}`);
    const base = model ?? `langgraph-${distanceMetric}-${dims}`;
    /** the memtx_vector models of the store, the j-th text's the j-th */
    this.models = Array.from({ length: slots }, (_, j) => (j === 0 ? base : `${base}:${j}`));
    for (const name of this.models) {
      if (typeof name !== 'string' || !MODEL_NAME.test(name)) {
        throw new InvalidArgument(`index.model: ${JSON.stringify(name)} is not a memtx_vector model name (^[A-Za-z0-9_.:-]{1,64}$)`);
      }
    }
    this.dims = dims;
    this.fields = fields;
    this.metric = distanceMetric;
    this.embedding = embeddingFunctions(embed, 'index.embed', dims);
    this.kit = kit;
    /** @type {Promise<void> | null} the check that the models are registered, once it succeeded */
    this.checked = null;
    /** @type {Map<string, { name: string, text: string }>} put statements with n embeddings, by base name */
    this.statements = new Map();
  }

  /** The harness calls that register the store's models. */
  registrations() {
    return this.models.map((m) => `SELECT memtx.register_embedding_model('${m}', ${this.dims}, '${this.metric}');`).join(' ');
  }

  /**
   * Checks that memtx_vector is installed and the store's models are
   * registered with its dims and distance; with `register` and a harness
   * role, registers those missing.  MemtxError naming the calls otherwise.
   * @param {import('./store.js').Queryable} q @param {boolean} register
   */
  async check(q, register) {
    const { rows: [ext] } = await q.query("SELECT count(*)::int AS n FROM pg_catalog.pg_extension WHERE extname = 'memtx_vector'");
    if (!ext.n) {
      throw new MemtxError('memtx_vector is not installed in this database: MemtxStore\'s index needs it',
        { hint: 'A superuser runs CREATE EXTENSION memtx_vector CASCADE (pgvector 0.8.0 or later).' });
    }
    const found = async () => new Map((await q.query(
      'SELECT name, dims, distance FROM memtx.embedding_models WHERE name = ANY($1::text[])', [this.models])).rows
      .map((r) => [r.name, r]));
    let registered = await found();
    const missing = this.models.filter((m) => !registered.has(m));
    if (missing.length && register && (await q.query('SELECT memtx.is_harness() AS yes')).rows[0].yes) {
      for (const m of missing) await q.query('SELECT memtx.register_embedding_model($1::text, $2::int, $3::text)', [m, this.dims, this.metric]);
      registered = await found();
    }
    for (const m of this.models) {
      const row = registered.get(m);
      if (!row) {
        throw new MemtxError(`embedding model ${m} is not registered: MemtxStore's index stores its vectors under `
          + `${this.models.length > 1 ? `models ${this.models.join(', ')}` : `model ${m}`}`, {
          hint: `A harness runs ${this.registrations()} (or calls store.setup() on a harness's connection).`,
        });
      }
      if (row.dims !== this.dims || row.distance !== this.metric) {
        throw new MemtxError(`embedding model ${m} is registered with ${row.dims} dimensions and distance ${row.distance}; `
          + `the store's index has ${this.dims} and ${this.metric}`, { hint: 'Give the index another model name (index.model).' });
      }
    }
  }

  /**
   * check() once per store (again after a failure).
   * @param {import('./store.js').Queryable} q
   */
  async ready(q) {
    this.checked ??= this.check(q, false).catch((err) => { this.checked = null; throw err; });
    return this.checked;
  }

  /**
   * The operations with what they need embedded, before any of them runs:
   * a put (not a delete, not `index: false`) its texts' vectors, a vector
   * or hybrid search its query's.  The embedder is called once per put and
   * once per such search; a failure (EmbeddingError) writes nothing.
   * @param {any[]} operations
   * @returns {Promise<any[]>}
   */
  async prepare(operations) {
    const out = [];
    for (const op of operations) {
      if ('value' in op && op.value !== null && op.value !== undefined) {
        out.push(await this.prepareItem(op));
      } else if ('namespacePrefix' in op && op.query && this.isVectorMode(op)) {
        out.push({ ...op, [QUERY_VECTOR]: await this.embedQuery(op.query) });
      } else {
        out.push(op);
      }
    }
    return out;
  }

  /** @param {any} op a put */
  async prepareItem(op) {
    const { index } = op;
    if (index !== undefined && index !== false && !(Array.isArray(index) && index.every((f) => typeof f === 'string' && f !== ''))) {
      throw new InvalidArgument('index must be false or an array of field paths');
    }
    if (index === false) return { ...op, [EMBEDDINGS]: [] };
    const texts = textsToEmbed(op.value, index ?? this.fields);
    if (texts.length > this.models.length) {
      throw new InvalidArgument(`put of ${JSON.stringify(op.key)} has ${texts.length} texts to embed `
        + `(${texts.map((t) => t.path).join(', ')}); the store embeds at most ${this.models.length} per item `
        + `(index.maxTexts, one model each: ${this.models.join(', ')})`);
    }
    const vectors = texts.length ? await this.embedding.documents(texts.map((t) => t.text)) : [];
    return { ...op, [EMBEDDINGS]: vectors.map((v, j) => ({ model: this.models[j], vector: v })) };
  }

  /** @param {string} query */
  async embedQuery(query) {
    return this.embedding.query(query).catch((err) => {
      // PostgresStore's words for a query vector of the wrong size
      const m = /has (\d+) dimensions/.exec(err.message);
      throw m ? new EmbeddingError(`Query embedding dimension mismatch: expected ${this.dims}, got ${m[1]}`, { cause: err }) : err;
    });
  }

  /** Whether a search with a query ranks by vectors: mode vector, hybrid, or auto. @param {any} op */
  isVectorMode(op) {
    return op.mode === undefined || op.mode === 'auto' || op.mode === 'vector' || op.mode === 'hybrid';
  }

  /**
   * A put's statement with its embeddings: `statement` (which returns the
   * record in column record_id) and memtx.embed of each vector, in one
   * statement.  Prepared once per base statement and count.
   * @param {{ name: string, text: string }} statement @param {unknown[]} values
   * @param {{ model: string, vector: number[] }[]} embeddings
   * @returns {{ name: string, text: string, values: unknown[] }}
   */
  embedded(statement, values, embeddings) {
    if (!embeddings.length) return { ...statement, values };
    const key = `${statement.name}_e${embeddings.length}`;
    let prepared = this.statements.get(key);
    if (!prepared || !prepared.text.includes(statement.text)) {
      const n = values.length;
      const calls = embeddings.map((_, j) => `memtx.embed(p.record_id, $${n + 2 * j + 1}::text, $${n + 2 * j + 2})`);
      prepared = { name: key, text: `SELECT p.* FROM (${statement.text} OFFSET 0) p CROSS JOIN LATERAL (SELECT ${calls.join(', ')}) e` };
      this.statements.set(key, prepared);
    }
    return { ...prepared, values: [...values, ...embeddings.flatMap((e) => [e.model, vectorText('embedding', e.vector)])] };
  }

  /**
   * A vector or hybrid search (see the module comment), in one statement:
   * a memtx transaction of its own begun, recall_similar under each of the
   * store's models (and recall for hybrid), committed empty, then the
   * items, filtered (with their vectors when the nearest one per item is
   * not what recall_similar measured).  Alone (not in a batch), its SQL
   * transaction commits without waiting for its WAL flush, as a text
   * search does: it stages nothing.
   * @param {import('./store.js').Queryable} q @param {string} namespace the store's memtx namespace
   * @param {any} op a search operation from prepare()
   * @param {boolean} alone whether the statement is its own SQL transaction
   */
  async search(q, namespace, op, alone) {
    const { namespacePrefix, query, filter, limit = 10, offset = 0, mode = 'auto', similarityThreshold = 0,
      distanceMetric = this.metric, vectorWeight = 0.7 } = op;
    if (!METRICS.includes(distanceMetric)) {
      throw new InvalidArgument(`distanceMetric must be one of ${METRICS.join(', ')}; got ${JSON.stringify(distanceMetric)}`);
    }
    if (typeof similarityThreshold !== 'number' || !Number.isFinite(similarityThreshold)) {
      throw new InvalidArgument(`similarityThreshold must be a number; got ${JSON.stringify(similarityThreshold)}`);
    }
    if (typeof vectorWeight !== 'number' || !(vectorWeight >= 0 && vectorWeight <= 1)) {
      throw new InvalidArgument(`vectorWeight must be a number from 0 to 1; got ${JSON.stringify(vectorWeight)}`);
    }
    const hybrid = mode === 'hybrid';
    await this.ready(q);
    if (limit <= 0) return [];
    const metric = hybrid ? 'cosine' : distanceMetric;
    // the vectors themselves, when the nearest one per item is not what recall_similar measured
    // (several models, another metric, or a hybrid item only the words found)
    const remeasure = this.models.length > 1 || metric !== this.metric || hybrid;
    const k = filter && Object.keys(filter).length ? K_MAX : Math.min(K_MAX, offset + limit);
    const params = [namespace, vectorText('embedding', op[QUERY_VECTOR]), k,
      this.kit.encodeNamespace(namespacePrefix), Boolean(alone), this.models];
    const lists = this.models.map((_, j) => `SELECT v.record_id, v.entity, v.attribute, v.distance, NULL::real AS text_rank
        FROM tx, memtx.recall_similar(tx => tx.id, embedding => $2, model => ($6::text[])[${j + 1}], k => $3::integer,
                                      entity_prefix => $4::text, valid_at => memtx.now()) v`);
    if (hybrid) {
      params.push(query);
      lists.push(`SELECT t.record_id, t.entity, t.attribute, NULL::real, t.rank
        FROM tx, memtx.recall(tx => tx.id, query => $${params.length}::text, k => $3::integer,
                              entity_prefix => $4::text, valid_at => memtx.now()) t`);
    }
    const where = this.kit.filterSql(filter, params, 'r.value');
    const { rows: found } = await q.query(
      `WITH tx AS MATERIALIZED (
         SELECT memtx.begin(namespace => $1::text) AS id,
                -- a search stages nothing: alone, its SQL transaction need not wait for the WAL flush
                CASE WHEN $5::boolean THEN pg_catalog.set_config('synchronous_commit', 'off', true) END AS async),
       hits AS MATERIALIZED (${lists.join(' UNION ALL ')}),
       -- commit's argument waits for every recalled row
       closed AS MATERIALIZED (
         SELECT count(*) AS n FROM tx, LATERAL (SELECT count(*) AS n FROM hits) seen,
                LATERAL memtx.commit(CASE WHEN seen.n >= 0 THEN tx.id END) c),
       best AS (SELECT max(h.record_id) AS record_id, min(h.distance) AS distance, max(h.text_rank) AS text_rank
                  FROM hits h GROUP BY h.entity, h.attribute)
       SELECT item.* FROM closed LEFT JOIN LATERAL (
         SELECT b.record_id, b.distance, b.text_rank, r.entity, r.attribute, r.value,
                r.created_at AS updated_at, ${this.kit.createdAt} AS created_at,
                ${remeasure ? `(SELECT pg_catalog.array_agg(e.embedding::text) FROM memtx.embeddings e
                   WHERE e.record_id = b.record_id AND e.model = ANY ($6::text[]))` : 'NULL::text[]'} AS vectors
           FROM best b JOIN memtx.records r ON r.id = b.record_id
          WHERE ${where}) item ON closed.n >= 0`, params);
    // no hit: the one row of the commit, with no item
    const rows = found.filter((row) => row.record_id !== null);
    if (remeasure) this.remeasure(rows, metric, op[QUERY_VECTOR]);
    const scored = rows.filter((row) => row.distance !== null && Number.isFinite(row.distance)).map((row) => {
      const similarity = score(metric, row.distance);
      const textRank = row.text_rank ?? 0;
      return { row, similarity, textRank, total: hybrid ? vectorWeight * similarity + (1 - vectorWeight) * textRank : similarity };
    }).filter(({ row, similarity }) => (hybrid ? row.text_rank !== null || similarity >= similarityThreshold
      : similarityThreshold <= 0 || similarity >= similarityThreshold));
    scored.sort((a, b) => b.total - a.total || Number(a.row.record_id) - Number(b.row.record_id));
    return scored.slice(offset, offset + limit).map(({ row, total }) => this.kit.toItem({ ...row, score: total }, true));
  }

  /**
   * Sets each row's distance to that of its nearest vector under `metric`,
   * from the record's embeddings under the store's models (the search's
   * column `vectors`; null: none).
   * @param {Record<string, any>[]} rows @param {string} metric @param {number[]} query
   */
  remeasure(rows, metric, query) {
    for (const row of rows) {
      const distances = (row.vectors ?? []).map((/** @type {string} */ v) => distance(metric, JSON.parse(v), query));
      row.distance = distances.length ? Math.min(...distances) : null;
    }
  }
}
