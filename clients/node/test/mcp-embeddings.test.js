// memtx-mcp with embeddings: an OpenAI-compatible /v1/embeddings endpoint
// named by the environment (here a stub HTTP server in this process that
// answers deterministic vectors: no network).  What memory_stage and the
// graph tools store is embedded in the same statement; memory_recall's
// `semantic` and search_nodes find by meaning; the endpoint down, an HTTP
// error or vectors of the wrong size are clear tool errors that write
// nothing; each graph write stays one statement.  The Node Memory's own
// embedder (stage, propose, embed, recallSimilar) is here too.  Needs
// pgvector >= 0.8.0: skipped without it, except under CI.
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { embeddingFromEnv, embeddingsUrl, openAiEmbedder } from '../src/embeddings.js';
import { resources as kgResources, tools as kgTools } from '../src/kg.js';
import { createServer } from '../src/mcp.js';
import { EmbeddingError, Memory } from '../src/memory.js';
import { freshDatabase } from './db.js';
import { needsVector, serverVectorMissing } from './vector.js';

const DATABASE = 'memtx_node_mcp_embeddings';
const AGENT = 'memtx_node_mcp_embedder';
const MODEL = 'stub-embed';
const SERVER = fileURLToPath(new URL('../bin/memtx-mcp.js', import.meta.url));
const KEY = 'sk-test-not-a-secret';
const missing = await serverVectorMissing();

/** The stub's meanings: words of one group share a dimension (the first dimension is a constant). */
const GROUPS = [['cat', 'kitten', 'feline'], ['dog', 'puppy', 'canine'], ['car', 'automobile', 'vehicle'],
  ['boat', 'ship', 'vessel'], ['tea', 'coffee', 'drink']];
const DIMS = GROUPS.length + 1;
/** @param {string} text */
const meaning = (text) => {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  return [1, ...GROUPS.map((g) => words.filter((w) => g.includes(w)).length * 3)];
};

/** The stub endpoint: answers as `mode` says, and keeps what it was asked. */
const stub = {
  mode: 'ok',
  /** @type {{ path: string, auth: string | undefined, body: any }[]} */
  requests: [],
  url: '',
  server: createHttpServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const json = JSON.parse(body);
      stub.requests.push({ path: req.url ?? '', auth: req.headers.authorization, body: json });
      res.setHeader('content-type', 'application/json');
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.statusCode = 404;
        res.end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
      } else if (stub.mode === 'error') {
        res.statusCode = 500;
        res.end(JSON.stringify({ error: { message: 'the model is overloaded' } }));
      } else {
        const size = stub.mode === 'wrong-dims' ? DIMS + 2 : DIMS;
        // listed in reverse: the client orders them by index
        const data = json.input.map((t, index) => ({ object: 'embedding', index,
          embedding: [...meaning(t), ...Array(size - DIMS).fill(0.5)] })).reverse();
        res.end(JSON.stringify({ object: 'list', model: json.model, data }));
      }
    });
  }),
};

let fx;
before(async () => {
  await new Promise((resolve) => { stub.server.listen(0, '127.0.0.1', resolve); });
  stub.url = `http://127.0.0.1:${/** @type {any} */ (stub.server.address()).port}/v1`;
  fx = await freshDatabase(DATABASE, [AGENT]);
  await fx.harness.query(`SELECT memtx.grant_namespace('pets', '${AGENT}')`);
  if (!missing) {
    await fx.harness.query('CREATE EXTENSION memtx_vector CASCADE');
    await fx.harness.query('SELECT memtx.register_embedding_model($1, $2)', [MODEL, DIMS]);
  }
});
after(async () => {
  await new Promise((resolve) => { stub.server.close(resolve); });
  await fx?.drop();
});

describe('the endpoint client (src/embeddings.js)', () => {
  test('asks POST {url}/embeddings with the model, the texts and the key; answers the vectors in order', async () => {
    stub.mode = 'ok';
    stub.requests.length = 0;
    const embed = openAiEmbedder({ url: stub.url, model: 'm1', key: KEY });
    assert.deepEqual(await embed(['a kitten', 'a ship']), [meaning('a kitten'), meaning('a ship')]);
    assert.deepEqual(stub.requests, [{ path: '/v1/embeddings', auth: `Bearer ${KEY}`,
      body: { model: 'm1', input: ['a kitten', 'a ship'], encoding_format: 'float' } }]);
    // no key: no Authorization; the full URL works as well; no texts, no request
    await openAiEmbedder({ url: `${stub.url}/embeddings`, model: 'm1' })(['x']);
    assert.equal(stub.requests[1].auth, undefined);
    assert.equal(stub.requests[1].path, '/v1/embeddings');
    assert.deepEqual(await embed([]), []);
    assert.equal(stub.requests.length, 2);
    assert.equal(embeddingsUrl('http://h:1/v1/'), 'http://h:1/v1/embeddings');
    assert.throws(() => embeddingsUrl('ftp://h/v1'), /must be http or https/);
  });

  test('failures are EmbeddingErrors that say which, and never show the key', async () => {
    stub.mode = 'error';
    const embed = openAiEmbedder({ url: stub.url, model: 'm1', key: KEY });
    await assert.rejects(embed(['x']), (err) => err instanceof EmbeddingError
      && /answered HTTP 500: the model is overloaded/.test(err.message) && !err.message.includes(KEY));
    stub.mode = 'ok';
    await assert.rejects(openAiEmbedder({ url: `${stub.url.replace('/v1', '')}/nowhere`, model: 'm1' })(['x']),
      /answered HTTP 404: no route \/nowhere\/embeddings/);
    // a port nothing listens on
    const down = createHttpServer();
    await new Promise((resolve) => { down.listen(0, '127.0.0.1', resolve); });
    const port = /** @type {any} */ (down.address()).port;
    await new Promise((resolve) => { down.close(resolve); });
    await assert.rejects(openAiEmbedder({ url: `http://127.0.0.1:${port}/v1`, model: 'm1', key: KEY })(['x']),
      (err) => err instanceof EmbeddingError && /could not be reached \(ECONNREFUSED\)/.test(err.message)
        && !err.message.includes(KEY));
    // dimensions asked for and not given
    await assert.rejects(openAiEmbedder({ url: stub.url, model: 'm1', dimensions: 3 })(['x']), /vector 0 has 6 dimensions, not 3/);
  });

  test('the environment: both or neither of URL and model, a model name memtx_vector takes', () => {
    assert.equal(embeddingFromEnv({}), null);
    assert.throws(() => embeddingFromEnv({ MEMTX_EMBEDDINGS_URL: stub.url }), /MEMTX_EMBEDDINGS_URL is set but MEMTX_EMBEDDINGS_MODEL is not/);
    assert.throws(() => embeddingFromEnv({ MEMTX_EMBEDDINGS_MODEL: 'm' }), /MEMTX_EMBEDDINGS_MODEL is set but MEMTX_EMBEDDINGS_URL is not/);
    assert.throws(() => embeddingFromEnv({ MEMTX_EMBEDDINGS_URL: stub.url, MEMTX_EMBEDDINGS_MODEL: 'org/model name' }),
      /set MEMTX_VECTOR_MODEL to the name the harness registered/);
    assert.throws(() => embeddingFromEnv({ MEMTX_EMBEDDINGS_URL: stub.url, MEMTX_EMBEDDINGS_MODEL: 'm',
      MEMTX_EMBEDDINGS_TIMEOUT_MS: 'soon' }), /MEMTX_EMBEDDINGS_TIMEOUT_MS must be a positive integer/);
    const settings = embeddingFromEnv({ MEMTX_EMBEDDINGS_URL: stub.url, MEMTX_EMBEDDINGS_MODEL: 'org/model name',
      MEMTX_VECTOR_MODEL: 'stored-as', MEMTX_EMBEDDINGS_KEY: KEY });
    assert.equal(settings?.embeddingModel, 'stored-as');
    assert.ok(!settings?.description.includes(KEY));
  });
});

/** The environment of a memtx-mcp of the agent with the stub as its endpoint. */
const serverEnv = (extra = {}) => ({
  PATH: process.env.PATH ?? '',
  PGHOST: process.env.PGHOST ?? 'localhost',
  PGPORT: process.env.PGPORT ?? '5432',
  PGDATABASE: DATABASE,
  PGUSER: AGENT,
  PGPASSWORD: fx.password,
  MEMTX_NAMESPACE: 'pets',
  MEMTX_EMBEDDINGS_URL: stub.url,
  MEMTX_EMBEDDINGS_MODEL: MODEL,
  MEMTX_EMBEDDINGS_KEY: KEY,
  ...extra,
});

/** A memtx-mcp child process on stdio, driven by the SDK's client. */
async function startServer(env) {
  const client = new Client({ name: 'memtx-test-host', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER], env, stderr: 'pipe' }));
  /** tools/call: its structured result, or its error text */
  const call = async (/** @type {string} */ name, /** @type {any} */ args) => {
    const r = await client.callTool({ name, arguments: args });
    return r.isError ? { error: r.content[0].text, ...(r.structuredContent && { structured: r.structuredContent }) } : r.structuredContent;
  };
  return { client, call };
}

/** The embeddings of the namespace, as the harness sees them: { "entity attribute": dims }. */
async function embedded() {
  const { rows } = await fx.harness.query(`SELECT r.entity || ' ' || r.attribute AS slot, vector_dims(e.embedding) AS dims
    FROM memtx.embeddings e JOIN memtx.records r ON r.id = e.record_id WHERE e.namespace = 'pets' AND e.model = $1 ORDER BY r.id`, [MODEL]);
  return Object.fromEntries(rows.map((r) => [r.slot, r.dims]));
}
const recordCount = async () => (await fx.harness.query("SELECT count(*)::int AS n FROM memtx.records WHERE namespace = 'pets'")).rows[0].n;

describe('memtx-mcp with MEMTX_EMBEDDINGS_URL', () => {
  test('memory_stage embeds what it stages; memory_recall with semantic finds by meaning', needsVector(missing), async () => {
    assert.equal(missing, null, missing ?? '');
    stub.mode = 'ok';
    stub.requests.length = 0;
    const { client, call } = await startServer(serverEnv());
    try {
      const recall = (await client.listTools()).tools.find((t) => t.name === 'memory_recall');
      assert.equal(recall?.inputSchema.properties?.semantic?.type, 'boolean');
      const staged = await call('memory_stage', { entity: 'pet:tom', attribute: 'species', value: 'a small kitten' });
      assert.equal(staged.error, undefined, staged.error);
      assert.deepEqual(await embedded(), { 'pet:tom species': DIMS });
      assert.deepEqual(stub.requests.map((r) => [r.auth, r.body.model, r.body.input]),
        [[`Bearer ${KEY}`, MODEL, ['pet:tom species a small kitten']]]);
      await call('memory_stage', { entity: 'pet:rex', attribute: 'species', value: 'a loud puppy' });
      // "feline" is in neither text: only the meaning finds it, nearest first
      const byWords = await call('memory_recall', { query: 'feline' });
      assert.deepEqual(byWords.records ?? byWords.rows ?? Object.values(byWords)[0], []);
      const byMeaning = await call('memory_recall', { query: 'feline', semantic: true });
      const rows = byMeaning.records ?? byMeaning.rows ?? Object.values(byMeaning)[0];
      assert.deepEqual(rows.map((r) => r.entity), ['pet:tom', 'pet:rex']);
      assert.ok(rows[0].distance < rows[1].distance);
      assert.equal(stub.requests.at(-1).body.input[0], 'feline');
      const committed = await call('memory_commit', {});
      assert.equal(committed.error, undefined, committed.error);
    } finally {
      await client.close();
    }
  });

  test('the graph tools embed what they stage; search_nodes finds by meaning too', needsVector(missing), async () => {
    assert.equal(missing, null, missing ?? '');
    stub.mode = 'ok';
    const { call, client } = await startServer(serverEnv());
    try {
      const made = await call('create_entities', { entities: [
        { name: 'tom', entityType: 'animal', observations: ['a grey kitten'] },
        { name: 'queen mary', entityType: 'vessel', observations: ['crossed the atlantic'] }] });
      assert.equal(made.error, undefined, made.error);
      const rel = await call('create_relations', { relations: [{ from: 'tom', to: 'queen mary', relationType: 'sails on' }] });
      assert.equal(rel.error, undefined, rel.error);
      const obs = await call('add_observations', { observations: [{ entityName: 'tom', contents: ['drinks tea'] }] });
      assert.equal(obs.error, undefined, obs.error);
      const slots = Object.keys(await embedded()).filter((s) => s.startsWith('kg:'));
      // every fact: two entity records, three observations, one relation
      assert.equal(slots.length, 6, slots.join(', '));
      assert.ok(slots.some((s) => s.startsWith('kg:tom relation:')));
      // words: the reference's substring match; meaning: "feline" is tom's, "ship" the vessel's
      assert.deepEqual((await call('search_nodes', { query: 'feline' })).entities.map((e) => e.name), ['tom']);
      assert.deepEqual((await call('search_nodes', { query: 'ship' })).entities.map((e) => e.name), ['queen mary']);
      assert.deepEqual((await call('search_nodes', { query: 'automobile' })).entities, []);
      assert.deepEqual((await call('search_nodes', { query: 'GREY kitten' })).entities.map((e) => e.name), ['tom']);
      // a relation between two entities found comes with them
      const both = await call('search_nodes', { query: 'kitten ship' });
      assert.deepEqual(both.entities.map((e) => e.name).sort(), ['queen mary', 'tom']);
      assert.deepEqual(both.relations, [{ from: 'tom', to: 'queen mary', relationType: 'sails on' }]);
    } finally {
      await client.close();
    }
  });

  test('the endpoint down, failing, or answering the wrong dimensions: a clear tool error, nothing written', needsVector(missing), async () => {
    assert.equal(missing, null, missing ?? '');
    const before = await recordCount();
    const before2 = Object.keys(await embedded()).length;
    // wrong dimensions: memtx.embed refuses the vector, and the stage goes with it
    stub.mode = 'wrong-dims';
    let server = await startServer(serverEnv());
    try {
      const wrong = await server.call('memory_stage', { entity: 'pet:x', attribute: 'a', value: 'cat' });
      assert.match(wrong.error ?? JSON.stringify(wrong), /dimensions|dims/);
      const graph = await server.call('create_entities', { entities: [{ name: 'x', entityType: 'cat', observations: [] }] });
      assert.match(graph.error, /dimensions|dims/);
      stub.mode = 'error';
      const failing = await server.call('memory_stage', { entity: 'pet:x', attribute: 'a', value: 'cat' });
      assert.match(JSON.stringify(failing), /answered HTTP 500: the model is overloaded/);
      assert.ok(!JSON.stringify(failing).includes(KEY));
      const search = await server.call('search_nodes', { query: 'cat' });
      assert.match(search.error, /answered HTTP 500/);
    } finally {
      await server.client.close();
    }
    // nothing listens at the URL
    stub.mode = 'ok';
    server = await startServer(serverEnv({ MEMTX_EMBEDDINGS_URL: 'http://127.0.0.1:9/v1' }));
    try {
      const down = await server.call('memory_stage', { entity: 'pet:x', attribute: 'a', value: 'cat' });
      assert.match(JSON.stringify(down), /could not be reached/);
      const graph = await server.call('add_observations', { observations: [{ entityName: 'tom', contents: ['sleeps'] }] });
      assert.match(graph.error, /could not be reached/);
    } finally {
      await server.client.close();
    }
    assert.equal(await recordCount(), before);
    assert.equal(Object.keys(await embedded()).length, before2);
  });

  test('a model no harness registered: the error names the call that registers it, nothing written', needsVector(missing), async () => {
    assert.equal(missing, null, missing ?? '');
    stub.mode = 'ok';
    const before = await recordCount();
    const { client, call } = await startServer(serverEnv({ MEMTX_VECTOR_MODEL: 'nobody-registered' }));
    try {
      const staged = await call('memory_stage', { entity: 'pet:x', attribute: 'a', value: 'cat' });
      assert.match(staged.structured?.error?.message ?? '', /embedding model "nobody-registered" does not exist/);
      assert.match(staged.structured?.error?.hint ?? '', /memtx\.register_embedding_model/);
      const graph = await call('create_entities', { entities: [{ name: 'y', entityType: 'cat', observations: [] }] });
      assert.match(graph.error, /SELECT memtx\.register_embedding_model\('nobody-registered', <its dimensions>\)/);
      const search = await call('search_nodes', { query: 'cat' });
      assert.match(search.error, /register_embedding_model\('nobody-registered'/);
    } finally {
      await client.close();
    }
    assert.equal(await recordCount(), before);
  });

  test('without the settings, memory_recall offers no semantic and refuses it', needsVector(missing), async () => {
    const { client, call } = await startServer(serverEnv({ MEMTX_EMBEDDINGS_URL: '', MEMTX_EMBEDDINGS_MODEL: '' }));
    try {
      const recall = (await client.listTools()).tools.find((t) => t.name === 'memory_recall');
      assert.equal(recall?.inputSchema.properties?.semantic, undefined);
      const refused = await call('memory_recall', { query: 'cat', semantic: true });
      assert.match(JSON.stringify(refused), /semantic|no embedding model/);
    } finally {
      await client.close();
    }
  });
});

describe('createServer with an embedder, in process', () => {
  test('each graph write is still one round trip with its embeddings, search_nodes by meaning two', needsVector(missing), async () => {
    assert.equal(missing, null, missing ?? '');
    const db = await fx.connect(AGENT);
    const wire = { roundTrips: 0 };
    const c = /** @type {any} */ (db).connection;
    for (const method of ['query', 'sync']) {
      const send = c[method].bind(c);
      c[method] = (/** @type {any[]} */ ...args) => { wire.roundTrips += 1; return send(...args); };
    }
    const asked = /** @type {string[][]} */ ([]);
    const { session } = createServer({ db, namespace: 'pets', extraTools: kgTools, resources: kgResources,
      embedder: async (texts) => { asked.push(texts); return texts.map(meaning); }, embeddingModel: MODEL });
    const rounds = async (/** @type {string} */ name, /** @type {any} */ args) => {
      wire.roundTrips = 0;
      const r = await session.callTool(name, args);
      assert.ok(!r.isError, `${name}: ${r.content?.[0]?.text}`);
      return wire.roundTrips;
    };
    // the first calls ask once what pgvector's type is called and whether the optional search is set up
    await rounds('create_entities', { entities: [{ name: 'warmup', entityType: 'dog', observations: [] }] });
    await rounds('search_nodes', { query: 'warmup' });
    assert.deepEqual({
      create_entities: await rounds('create_entities', { entities: [{ name: 'felix', entityType: 'cat', observations: ['a black kitten'] }] }),
      create_relations: await rounds('create_relations', { relations: [{ from: 'felix', to: 'warmup', relationType: 'chases' }] }),
      add_observations: await rounds('add_observations', { observations: [{ entityName: 'felix', contents: ['purrs'] }] }),
      search_nodes: await rounds('search_nodes', { query: 'feline' }),
    }, { create_entities: 1, create_relations: 1, add_observations: 1, search_nodes: 2 });
    assert.deepEqual(asked.slice(2), [['felix (cat)', 'felix: a black kitten'], ['felix chases warmup'], ['felix: purrs'], ['feline']]);
    const { rows } = await fx.harness.query(`SELECT count(*)::int AS n FROM memtx.embeddings e JOIN memtx.records r ON r.id = e.record_id
      WHERE r.namespace = 'pets' AND r.entity = 'kg:felix'`);
    assert.equal(rows[0].n, 4);
  });
});

describe('Memory with an embedder (the Node client itself)', () => {
  test('stage and propose embed in their statement; embed later; recallSimilar by meaning; failures write nothing', needsVector(missing), async () => {
    assert.equal(missing, null, missing ?? '');
    const db = await fx.connect(AGENT);
    const asked = /** @type {string[][]} */ ([]);
    const mem = new Memory(db, { namespace: 'pets', embeddingModel: MODEL,
      embedder: async (texts) => { asked.push(texts); return texts.map(meaning); } });
    let kitten = 0;
    await mem.turn(async (m) => {
      kitten = await m.stage('mem:tom', 'kind', 'a kitten');
      await m.stage('mem:rex', 'kind', { animal: 'puppy' });
    });
    assert.deepEqual(asked, [['mem:tom kind a kitten'], ['mem:rex kind {"animal":"puppy"}']]);
    const proposed = await mem.propose('mem:ship', 'kind', 'a ship');
    assert.equal(proposed.state, 'committed');
    const slots = await embedded();
    for (const slot of ['mem:tom kind', 'mem:rex kind', 'mem:ship kind']) assert.equal(slots[slot], DIMS, slot);
    await mem.turn(async (m) => {
      const found = await m.recallSimilar('feline', { hybrid: false, entity_prefix: 'mem:' });
      // tom first; the two others (as far from "feline" as each other, but for rounding) after it
      assert.equal(found[0].entity, 'mem:tom');
      assert.deepEqual(found.slice(1).map((r) => r.entity).sort(), ['mem:rex', 'mem:ship']);
      assert.ok(found[0].distance < found[1].distance && found[1].distance <= found[2].distance);
      const given = await m.recallSimilar(null, { embedding: meaning('vessel'), hybrid: false, k: 1, entity_prefix: 'mem:' });
      assert.deepEqual(given.map((r) => r.entity), ['mem:ship']);
      await assert.rejects(m.recallSimilar('cat', { k: 0 }), (err) => err.sqlstate === '22003');
    });
    // a record written without an embedder, embedded later from its own text
    const plain = new Memory(db, { namespace: 'pets' });
    const { record_id: car } = await plain.propose('mem:car', 'kind', 'an automobile');
    assert.equal((await embedded())['mem:car kind'], undefined);
    await mem.embed(car);
    assert.equal((await embedded())['mem:car kind'], DIMS);
    await mem.embed(car); // the same vector again does nothing
    await assert.rejects(mem.embed(car, { embedding: meaning('boat') }), (err) => err.sqlstate === '23505');
    assert.ok(kitten > 0);
    // failures: the embedder throws, answers the wrong count, the wrong dimensions
    const before = await recordCount();
    const failing = new Memory(db, { namespace: 'pets', embeddingModel: MODEL, embedder: async () => { throw new Error('down'); } });
    await assert.rejects(failing.propose('mem:x', 'a', 'cat'), (err) => err instanceof EmbeddingError && /the embedder failed: down/.test(err.message));
    const none = new Memory(db, { namespace: 'pets', embeddingModel: MODEL, embedder: async () => [] });
    await assert.rejects(none.propose('mem:x', 'a', 'cat'), /answered 0 vectors for 1 text/);
    const wrong = new Memory(db, { namespace: 'pets', embeddingModel: MODEL, embedder: async (t) => t.map(() => [1, 2]) });
    await assert.rejects(wrong.propose('mem:x', 'a', 'cat'), (err) => err.sqlstate === '22023');
    assert.equal(await recordCount(), before);
    assert.throws(() => new Memory(db, { embedder: async () => [] }), /an embedder needs embeddingModel/);
  });
});
