/**
 * Embeddings from an OpenAI-compatible HTTP endpoint (`POST /v1/embeddings`:
 * OpenAI's, or a local server that speaks the same API), for memtx-mcp and
 * for any Memory or MemtxStore that wants one.
 *
 * One request per call, a plain POST with the platform's fetch: `{ model,
 * input: [texts], encoding_format: "float" }` (and `dimensions` when set),
 * with `Authorization: Bearer <key>` when a key is given.  The answer's
 * `data[i].embedding` are the vectors, ordered by `data[i].index`.  Anything
 * else -- a network error, a timeout, an HTTP status other than 2xx, a body
 * that is not such JSON, a count other than one vector per text -- is an
 * EmbeddingError that says which (with the endpoint's own error message when
 * it sent one) and never contains the key.  Nothing is retried: the caller
 * (memtx-mcp reports it as a tool error; nothing was written) decides.
 *
 * memtx-mcp reads its settings from the environment (embeddingFromEnv):
 *
 *   MEMTX_EMBEDDINGS_URL         the endpoint: its base URL (https://api.openai.com/v1,
 *                                http://localhost:11434/v1) or the full .../embeddings URL
 *   MEMTX_EMBEDDINGS_MODEL       the model the endpoint is asked for
 *   MEMTX_EMBEDDINGS_KEY         the API key (optional)
 *   MEMTX_EMBEDDINGS_DIMENSIONS  asks the endpoint for vectors of this many dimensions
 *                                (optional; OpenAI's text-embedding-3 models take it)
 *   MEMTX_EMBEDDINGS_TIMEOUT_MS  how long one request may take (default 30000)
 *   MEMTX_VECTOR_MODEL           the memtx_vector model the vectors are stored under
 *                                (default: MEMTX_EMBEDDINGS_MODEL), which a harness
 *                                registers with memtx.register_embedding_model
 *
 * @module memtx/embeddings
 */
import { checkVectors, EmbeddingError } from './memory.js';

/** memtx_vector's rule for model names (SPEC §19). */
const MODEL_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * The URL to POST to: `url` itself when it ends in /embeddings, else
 * `url` + /embeddings.
 * @param {string} url
 */
export function embeddingsUrl(url) {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError(`the embeddings URL must be http or https, not ${parsed.protocol}`);
  }
  const path = parsed.pathname.replace(/\/+$/, '');
  parsed.pathname = path.endsWith('/embeddings') ? path : `${path}/embeddings`;
  return parsed.toString();
}

/**
 * An embedder (texts → vectors) that asks an OpenAI-compatible endpoint.
 * @param {{ url: string, model: string, key?: string, dimensions?: number, timeoutMs?: number,
 *           fetch?: typeof globalThis.fetch }} options
 * @returns {(texts: string[]) => Promise<number[][]>}
 */
export function openAiEmbedder({ url, model, key, dimensions, timeoutMs = 30_000, fetch = globalThis.fetch }) {
  const endpoint = embeddingsUrl(url);
  if (typeof model !== 'string' || model === '') throw new TypeError('the embeddings model must be a non-empty string');
  const where = `the embeddings endpoint ${new URL(endpoint).origin}`;
  return async (texts) => {
    if (texts.length === 0) return [];
    let response;
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key && { authorization: `Bearer ${key}` }) },
        body: JSON.stringify({ model, input: texts, encoding_format: 'float', ...(dimensions && { dimensions }) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const e = /** @type {Error} */ (err);
      const why = e.name === 'TimeoutError' ? `did not answer within ${timeoutMs} ms`
        : `could not be reached (${/** @type {any} */ (e).cause?.code ?? e.message})`;
      throw new EmbeddingError(`${where} ${why}`, { cause: err });
    }
    const body = await response.text();
    /** @type {any} */
    let json = null;
    try {
      json = JSON.parse(body);
    } catch {
      // reported below with the status
    }
    if (!response.ok) {
      const message = typeof json?.error?.message === 'string' ? json.error.message
        : typeof json?.error === 'string' ? json.error : body.slice(0, 200);
      throw new EmbeddingError(`${where} answered HTTP ${response.status}: ${message}`);
    }
    if (!Array.isArray(json?.data)) throw new EmbeddingError(`${where} answered without a data array`);
    const data = [...json.data].sort((a, b) => (a?.index ?? 0) - (b?.index ?? 0));
    return checkVectors(data.map((d) => d?.embedding), texts.length, where, dimensions);
  };
}

/**
 * @typedef {object} EmbeddingSettings what memtx-mcp embeds with
 * @property {(texts: string[]) => Promise<number[][]>} embedder
 * @property {string} embeddingModel the memtx_vector model
 * @property {string} description for the log: endpoint and models, never the key
 */

/**
 * memtx-mcp's embeddings from the environment (see the module comment):
 * null when MEMTX_EMBEDDINGS_URL and MEMTX_EMBEDDINGS_MODEL are both unset;
 * a TypeError naming the variable for a setting it cannot use.
 * @param {Record<string, string | undefined>} env
 * @param {typeof globalThis.fetch} [fetch]
 * @returns {EmbeddingSettings | null}
 */
export function embeddingFromEnv(env, fetch) {
  const url = env.MEMTX_EMBEDDINGS_URL?.trim();
  const model = env.MEMTX_EMBEDDINGS_MODEL?.trim();
  if (!url && !model) return null;
  if (!url) throw new TypeError('MEMTX_EMBEDDINGS_MODEL is set but MEMTX_EMBEDDINGS_URL is not');
  if (!model) throw new TypeError('MEMTX_EMBEDDINGS_URL is set but MEMTX_EMBEDDINGS_MODEL is not');
  /** @param {string} name */
  const positive = (name) => {
    const text = env[name]?.trim();
    if (!text) return undefined;
    const n = Number(text);
    if (!Number.isInteger(n) || n <= 0) throw new TypeError(`${name} must be a positive integer, not ${JSON.stringify(text)}`);
    return n;
  };
  let endpoint;
  try {
    endpoint = embeddingsUrl(url);
  } catch (err) {
    throw new TypeError(`MEMTX_EMBEDDINGS_URL: ${/** @type {Error} */ (err).message}`);
  }
  const embeddingModel = env.MEMTX_VECTOR_MODEL?.trim() || model;
  if (!MODEL_NAME.test(embeddingModel)) {
    throw new TypeError(`${env.MEMTX_VECTOR_MODEL?.trim() ? 'MEMTX_VECTOR_MODEL' : 'MEMTX_EMBEDDINGS_MODEL'} `
      + `${JSON.stringify(embeddingModel)} is not a memtx_vector model name (^[A-Za-z0-9_.:-]{1,64}$): `
      + 'set MEMTX_VECTOR_MODEL to the name the harness registered');
  }
  const embedder = openAiEmbedder({
    url, model, key: env.MEMTX_EMBEDDINGS_KEY || undefined, dimensions: positive('MEMTX_EMBEDDINGS_DIMENSIONS'),
    timeoutMs: positive('MEMTX_EMBEDDINGS_TIMEOUT_MS'), ...(fetch && { fetch }),
  });
  return { embedder, embeddingModel, description: `${model} at ${new URL(endpoint).origin}, stored as model ${embeddingModel}` };
}
