// Model files in the Cache API, by URL: downloaded once, then read from the cache
// at every later start, with no request. The cache belongs to the worker's origin:
// a page's own, or the extension's, which every site then shares. Where there is
// no CacheStorage (an insecure context) files are simply fetched.

export const CACHE_NAME = 'prompt-api-runtime-models';
/** The byte count a cached file must have; a shorter one (a cut write) is fetched again. */
const SIZE_HEADER = 'X-Prompt-API-Size';
/** The key of the marker kept for a file the server does not have (an optional file). */
const MISSING = 'prompt-api-missing';
const missingKey = (url) => `${url}${url.includes('?') ? '&' : '?'}${MISSING}`;

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
  if (String(blob.size) === hit.headers.get(SIZE_HEADER)) return blob;
  await cache.delete(url);
  return null;
}

async function store(cache, url, bytes, contentType) {
  const headers = { [SIZE_HEADER]: String(bytes.byteLength), 'Content-Type': contentType || 'application/octet-stream' };
  try {
    await cache.put(url, new Response(bytes, { headers }));
  } catch (error) {
    // The file was downloaded: the model still loads, but will be fetched again.
    console.warn(`Prompt API runtime: ${url} could not be cached (${error?.name ?? error}).`);
  }
}

async function download(url, onProgress) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  const total = Number(response.headers.get('Content-Length')) || 0;
  const reader = response.body.getReader();
  const parts = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.length;
    if (total) onProgress?.(loaded / total);
  }
  const bytes = new Uint8Array(loaded);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  return { bytes, contentType: response.headers.get('Content-Type') };
}

/**
 * The bytes of the model file at `url`, from the cache or downloaded (then cached).
 * @param {string} url
 * @param {(fraction: number) => void} [onProgress]
 * @returns {Promise<Uint8Array>}
 */
export async function modelBytes(url, onProgress) {
  const cache = await openCache();
  const blob = cache && await cachedBlob(cache, url);
  if (blob) {
    onProgress?.(1);
    return new Uint8Array(await blob.arrayBuffer());
  }
  const { bytes, contentType } = await download(url, onProgress);
  // Written in the background: the model's load need not wait for the disk.
  if (cache) store(cache, url, bytes, contentType);
  return bytes;
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
    if (await cache.match(missingKey(url))) return null;
  }
  const response = await fetch(url);
  if (response.status === 404) {
    if (cache) await store(cache, missingKey(url), new Uint8Array(0), 'text/plain');
    return null;
  }
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (cache) await store(cache, url, bytes, response.headers.get('Content-Type'));
  return new TextDecoder().decode(bytes);
}

/**
 * Whether the server has the file at `url` (a HEAD request, remembered either way).
 * @param {string} url
 */
export async function modelFileExists(url) {
  const cache = await openCache();
  if (cache) {
    if (await cache.match(url)) return true;
    if (await cache.match(missingKey(url))) return false;
  }
  const response = await fetch(url, { method: 'HEAD' });
  if (!response.ok && cache) await store(cache, missingKey(url), new Uint8Array(0), 'text/plain');
  return response.ok;
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
    if (request.url.endsWith(MISSING)) continue;
    const response = await cache.match(request);
    entries.push({ url: request.url, bytes: Number(response?.headers.get(SIZE_HEADER)) || 0 });
  }
  return entries;
}

/** Drop every cached model file. */
export async function clearCached() {
  if (self.caches) await self.caches.delete(CACHE_NAME);
}
