// Model files in the Cache API, by URL: downloaded once, then read from the cache
// at every later start, with no request. The cache belongs to the worker's origin:
// a page's own, or the extension's, which every site then shares. Where there is
// no CacheStorage (an insecure context) files are simply fetched.
//
// A cached file carries its size (a cut write is detected and fetched again) and
// its ETag. Once a model has loaded from the cache, its files are revalidated in
// the background, at most once a day by default (HEAD requests): a file whose ETag
// or size changed is dropped, so the next load fetches it again.

import { unpack } from './packed-data.mjs';

export const CACHE_NAME = 'prompt-api-runtime-models';
const SIZE = 'X-Prompt-API-Size';
const ETAG = 'X-Prompt-API-ETag';
/** For a file unpacked from `<url>.packed`: that URL and its size (what revalidation checks). */
const SOURCE = 'X-Prompt-API-Source';
const SOURCE_SIZE = 'X-Prompt-API-Source-Size';
/** The suffix of a file's packed form (packed-data.mjs). */
const PACKED = '.packed';
/** The key of the marker kept for a file the server does not have (an optional file). */
const MISSING = 'prompt-api-missing';
/** The key of the time a folder's files were last revalidated. */
const CHECKED = 'prompt-api-checked';
/** The key suffix of a file's prepared form (a tokenizer's: py_runtime/tokenizer/prepared.py). */
const PREPARED = 'prompt-api-prepared';
const DAY_MS = 24 * 60 * 60 * 1000;

const keyFor = (url, marker) => `${url}${url.includes('?') ? '&' : '?'}${marker}`;

/** How often cached files are revalidated: 'daily' (default), 'always' or 'never'. */
let revalidation = 'daily';
/** Files this worker downloaded: current by definition, not revalidated. */
const downloaded = new Set();

/** @param {string} [policy] */
export function setRevalidation(policy) {
  revalidation = policy === 'always' || policy === 'never' ? policy : 'daily';
}

async function openCache() {
  try {
    return self.caches ? await self.caches.open(CACHE_NAME) : null;
  } catch {
    return null; // e.g. storage disabled for this origin
  }
}

/** A cached file whose body has the size recorded with it, else null (and it is dropped). */
async function cachedBlob(cache, url) {
  const hit = await cache.match(url);
  if (!hit) return null;
  const blob = await hit.blob();
  if (String(blob.size) === hit.headers.get(SIZE)) return blob;
  await cache.delete(url);
  return null;
}

/**
 * The headers a file of `size` bytes is stored with: its size and the ETag of the
 * response it came from (and, where that was its packed form, that form's URL and size).
 */
function storedHeaders(size, response, packed = false) {
  const headers = {
    [SIZE]: String(size),
    'Content-Type': packed ? 'application/octet-stream'
      : response?.headers.get('Content-Type') || 'application/octet-stream',
  };
  const etag = response?.headers.get('ETag');
  if (etag) headers[ETAG] = etag;
  if (packed) {
    headers[SOURCE] = response.url;
    headers[SOURCE_SIZE] = response.headers.get('Content-Length') || '';
  }
  return headers;
}

async function store(cache, url, bytes, response, packed = false) {
  try {
    const headers = storedHeaders(bytes.byteLength, response, packed);
    await cache.put(url, new Response(bytes, { headers }));
  } catch (error) {
    // The file was downloaded: the model still loads, but is fetched again next time.
    const why = error?.name === 'QuotaExceededError'
      ? `the storage quota is exceeded (${(bytes.byteLength / 2 ** 20).toFixed(1)} MiB)` : String(error);
    console.warn(`Prompt API runtime: ${url} is not cached: ${why}.`);
  }
}

const markMissing = (cache, url) => store(cache, keyFor(url, MISSING), new Uint8Array(0), null);

/** Milliseconds a download may go without a byte (Config.downloadTimeout). */
let downloadTimeout = 30_000;

/** @param {number | string | undefined} seconds */
export function setDownloadTimeout(seconds) {
  const value = Number(seconds);
  downloadTimeout = Number.isFinite(value) && value > 0 ? value * 1000 : 30_000;
}

/** A download's failure: a DOMException named NetworkError, naming the file. */
const networkError = (url, why) => new DOMException(`${url}: ${why}`, 'NetworkError');

/**
 * `promise`, or a NetworkError once no byte came for downloadTimeout (`controller`
 * then cancels the request).
 */
function inTime(promise, url, controller) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      reject(networkError(url, `the server sent nothing for ${downloadTimeout / 1000} s`));
      controller.abort(); // after: the race is settled by the timeout, not by the abort
    }, downloadTimeout);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The response to a GET of `url` (its body unread); null for a 404 when `allowMissing`. */
async function request(url, controller, allowMissing = false) {
  const response = await inTime(
    fetch(url, { signal: controller.signal }).catch((error) => {
      throw networkError(url, `the request failed (${error?.message ?? error})`);
    }), url, controller);
  if (response.status === 404 && allowMissing) return null;
  if (!response.ok) throw networkError(url, `HTTP ${response.status}`);
  return response;
}

/**
 * The file at `url` as {bytes, response}; null for a 404 when `allowMissing`. A
 * failure (no answer, an HTTP error, a cut or stalled body) is a NetworkError.
 */
async function download(url, onBytes, allowMissing = false) {
  const controller = new AbortController();
  const response = await request(url, controller, allowMissing);
  if (!response) return null;
  const total = Number(response.headers.get('Content-Length')) || 0;
  const reader = response.body.getReader();
  // One buffer of the announced size, filled as chunks arrive: never the file twice.
  let bytes = new Uint8Array(total);
  let loaded = 0;
  for (;;) {
    const { done, value } = await inTime(reader.read(), url, controller).catch((error) => {
      throw error instanceof DOMException ? error : networkError(
        url, `the download was cut after ${loaded} bytes (${error?.message ?? error})`);
    });
    if (done) break;
    if (loaded + value.length > bytes.length) { // no (or a wrong) Content-Length: grow
      const grown = new Uint8Array(Math.max(2 * bytes.length, loaded + value.length));
      grown.set(bytes.subarray(0, loaded));
      bytes = grown;
    }
    bytes.set(value, loaded);
    loaded += value.length;
    onBytes?.(loaded, total);
  }
  if (total && loaded < total) {
    throw networkError(url, `the download was cut after ${loaded} of ${total} bytes`);
  }
  return { bytes: loaded === bytes.length ? bytes : bytes.slice(0, loaded), response };
}

/**
 * The bytes of the model file at `url`, from the cache or downloaded (then cached).
 * `onBytes(loaded, total)` follows the download (total 0 when the server gives none).
 * @param {string} url
 * @param {(loaded: number, total: number) => void} [onBytes]
 * @returns {Promise<Uint8Array>}
 */
export async function modelBytes(url, onBytes) {
  const cache = await openCache();
  const blob = cache && await cachedBlob(cache, url);
  if (blob) {
    onBytes?.(blob.size, blob.size);
    return new Uint8Array(await blob.arrayBuffer());
  }
  const controller = new AbortController();
  const packed = await fromPacked(url, controller, onBytes);
  const { bytes, response } = packed ? await collect(packed) : await download(url, onBytes);
  downloaded.add(url);
  // Written in the background: the model's load need not wait for the disk.
  if (cache) store(cache, url, bytes, response, Boolean(packed));
  return bytes;
}

/**
 * The model file at `url` as a Blob that refers to the Cache API's stored copy (its
 * bytes are read from disk when used, never held here). When it is not there, the
 * download is streamed into the cache, chunk by chunk; where it cannot be (no cache,
 * no Content-Length, not enough quota), the downloaded bytes themselves are returned.
 * @param {string} url
 * @param {(loaded: number, total: number) => void} [onBytes]
 * @returns {Promise<Blob | Uint8Array>}
 */
export async function modelBlob(url, onBytes) {
  const cache = await openCache();
  const blob = cache && await cachedBlob(cache, url);
  if (blob) {
    onBytes?.(blob.size, blob.size);
    return blob;
  }
  const controller = new AbortController();
  const packed = cache && await fromPacked(url, controller, onBytes);
  const response = packed ? packed.response : cache && await request(url, controller);
  const total = packed ? packed.size : Number(response?.headers.get('Content-Length')) || 0;
  if (!response || !total || !(await fits(total))) {
    controller.abort();
    return modelBytes(url, onBytes);
  }
  downloaded.add(url);
  const body = packed ? packed.body : counted(response, url, controller, onBytes);
  try {
    const headers = storedHeaders(total, response, Boolean(packed));
    await cache.put(url, new Response(body.stream, { headers }));
  } catch (error) {
    if (body.failure) throw body.failure; // the download's own: stalled or cut
    // Not stored (e.g. the quota): the model still loads, from a second download.
    console.warn(`Prompt API runtime: ${url} is not cached: ${error}.`);
    return modelBytes(url);
  }
  return (await cachedBlob(cache, url)) ?? modelBytes(url);
}

/**
 * The file at `url` from its packed form, where the server has one (`<url>.packed`):
 * `{size, response, body}`, the unpacked size, the packed file's response, and the
 * unpacked bytes as a stream (`body.failure`: the NetworkError that ended it, if one
 * did); else null. Progress is over the packed file's bytes.
 */
async function fromPacked(url, controller, onBytes) {
  const source = `${url}${PACKED}`;
  if ((await modelFileSize(source)) === null) return null;
  const response = await request(source, controller);
  const raw = counted(response, source, controller, onBytes);
  const reader = raw.stream.getReader();
  const next = async () => {
    const { done, value } = await reader.read();
    return done ? null : value;
  };
  /** The error a failure while unpacking is: the download's own, else a NetworkError. */
  const failure = (error) => raw.failure
    ?? networkError(source, `it could not be unpacked (${error?.message ?? error})`);
  const { size, chunks } = await unpack(next).catch((error) => {
    throw failure(error);
  });
  const body = { stream: /** @type {ReadableStream<Uint8Array>} */ (/** @type {unknown} */ (null)), failure: null };
  body.stream = new ReadableStream({
    async pull(sink) {
      /** @type {IteratorResult<Uint8Array>} */
      let step;
      try {
        step = await chunks.next();
      } catch (error) {
        body.failure = failure(error);
        throw body.failure;
      }
      if (step.done) sink.close();
      else sink.enqueue(step.value);
    },
    cancel(reason) {
      controller.abort(reason);
    },
  });
  return { size, response, body };
}

/** A packed file's unpacked bytes, in one buffer: {bytes, response}. */
async function collect(packed) {
  const bytes = new Uint8Array(packed.size);
  let at = 0;
  const reader = packed.body.stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes.set(value, at);
    at += value.length;
  }
  return { bytes, response: packed.response };
}

/** Whether the origin's storage quota has room for `bytes` more (true if unknown). */
async function fits(bytes) {
  const estimate = await navigator.storage?.estimate?.().catch(() => null);
  if (!estimate?.quota) return true;
  return (estimate.quota - (estimate.usage ?? 0)) > bytes * 1.1;
}

/**
 * The body of `response` as a stream that reports its progress and checks that it
 * ends at its announced size; `failure` is the NetworkError that ended it, if one did
 * (no byte for downloadTimeout, or cut), as download() fails.
 * @returns {{stream: ReadableStream<Uint8Array>, failure: DOMException | null}}
 */
function counted(response, url, controller, onBytes) {
  const total = Number(response.headers.get('Content-Length'));
  const reader = response.body.getReader();
  let loaded = 0;
  const body = { stream: /** @type {ReadableStream<Uint8Array>} */ (/** @type {unknown} */ (null)), failure: null };
  const fail = (error) => {
    body.failure = error instanceof DOMException ? error : networkError(
      url, `the download was cut after ${loaded} of ${total} bytes (${error?.message ?? error})`);
    throw body.failure;
  };
  body.stream = new ReadableStream({
    async pull(sink) {
      const { done, value } = await inTime(reader.read(), url, controller).catch(fail);
      if (done && total && loaded !== total) fail('it ended early');
      if (done) return sink.close();
      loaded += value.length;
      onBytes?.(loaded, total);
      sink.enqueue(value);
    },
    cancel(reason) {
      controller.abort(reason);
    },
  });
  return body;
}

/**
 * The text of a model file, or null when the server has none (a 404 is remembered).
 * @param {string} url
 * @returns {Promise<string | null>}
 */
export async function modelText(url) {
  const cache = await openCache();
  if (cache) {
    const blob = await cachedBlob(cache, url);
    if (blob) return blob.text();
    if (await cache.match(keyFor(url, MISSING))) return null;
  }
  const file = await download(url, undefined, true);
  if (!file) {
    if (cache) await markMissing(cache, url);
    return null;
  }
  const { bytes, response } = file;
  downloaded.add(url);
  if (cache) await store(cache, url, bytes, response);
  return new TextDecoder().decode(bytes);
}

/**
 * The prepared form kept for the file at `url` (keepPrepared), or null. Dropped with
 * the cache; a form made from another version of the file is the engine's to notice.
 * @param {string} url
 * @returns {Promise<Uint8Array | null>}
 */
export async function modelPrepared(url) {
  const cache = await openCache();
  const blob = cache && await cachedBlob(cache, keyFor(url, PREPARED));
  return blob ? new Uint8Array(await blob.arrayBuffer()) : null;
}

/**
 * Keep `bytes`, a form of the file at `url` slow to rebuild, in the model cache.
 * @param {string} url
 * @param {Uint8Array} bytes
 */
export async function keepModelPrepared(url, bytes) {
  const cache = await openCache();
  if (cache) await store(cache, keyFor(url, PREPARED), bytes, null);
}

/**
 * The size of the file at `url`, or null when the server does not have it
 * (answered from the cache when it knows; else a HEAD request, a miss remembered).
 * @param {string} url
 * @returns {Promise<number | null>}
 */
export async function modelFileSize(url) {
  const cache = await openCache();
  if (cache) {
    const hit = await cache.match(url);
    if (hit) return Number(hit.headers.get(SIZE));
    if (await cache.match(keyFor(url, MISSING))) return null;
  }
  const response = await fetch(url, { method: 'HEAD' });
  if (!response.ok) {
    if (cache && response.status === 404) await markMissing(cache, url);
    return null;
  }
  return Number(response.headers.get('Content-Length')) || 0;
}

/**
 * What the cache knows of each of `urls`: 'cached', 'missing' (the server has none)
 * or 'unknown'. A model whose files are all known needs no download.
 * @param {string[]} urls
 * @returns {Promise<string[]>}
 */
export async function modelCacheStates(urls) {
  const cache = await openCache();
  const states = [];
  for (const url of urls) {
    if (cache && await cache.match(url)) states.push('cached');
    else if (cache && await cache.match(keyFor(url, MISSING))) states.push('missing');
    else states.push('unknown');
  }
  return states;
}

/**
 * Revalidate the cached files among `urls` (a folder's, loaded from the cache), in
 * the background and as the policy allows: one whose ETag or size changed on the
 * server is dropped, so the next load fetches it again. Resolves when done.
 * @param {string} folder the folder's base URL (the key of its last check)
 * @param {string[]} urls
 */
export async function revalidate(folder, urls) {
  try {
    await revalidateFiles(folder, urls);
  } catch (error) {
    console.warn(`Prompt API runtime: revalidating ${folder} failed: ${error}`);
  }
}

async function revalidateFiles(folder, urls) {
  const cache = await openCache();
  if (!cache || revalidation === 'never') return;
  const checkedKey = keyFor(folder, CHECKED);
  const checked = await cache.match(checkedKey);
  if (revalidation === 'daily' && checked && Date.now() - Number(await checked.text()) < DAY_MS) return;
  await cache.put(checkedKey, new Response(String(Date.now())));
  for (const url of urls) {
    const hit = !downloaded.has(url) && await cache.match(url);
    if (!hit) continue;
    try {
      // A file unpacked from its packed form is checked against that form.
      const source = hit.headers.get(SOURCE);
      const response = await fetch(source || url, { method: 'HEAD' });
      const etag = response.headers.get('ETag');
      const size = response.headers.get('Content-Length');
      const changed = !response.ok || (etag && etag !== hit.headers.get(ETAG))
        || (size && size !== hit.headers.get(source ? SOURCE_SIZE : SIZE));
      if (changed) await cache.delete(url);
    } catch {
      // Offline: keep what is cached.
    }
  }
}

/**
 * What is cached: one entry per file, with its size in bytes.
 * @returns {Promise<{url: string, bytes: number}[]>}
 */
export async function listCached() {
  const cache = await openCache();
  if (!cache) return [];
  const entries = [];
  for (const request of await cache.keys()) {
    const response = await cache.match(request);
    const size = response?.headers.get(SIZE);
    if (size === null || size === undefined || request.url.endsWith(MISSING)) continue;
    if (request.url.endsWith(PREPARED)) continue; // not a file of the model
    entries.push({ url: request.url, bytes: Number(size) });
  }
  return entries;
}

/** Drop every cached model file. */
export async function clearCached() {
  if (self.caches) await self.caches.delete(CACHE_NAME);
}
