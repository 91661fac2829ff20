// The service worker: registers the content scripts where the settings say (an MV3
// service worker cannot start workers, so the engine lives in an offscreen
// document, which it creates on a page's first call and closes when the engine's
// settings change), and records which sites used the API (origins only).

import { DEFAULT_SETTINGS, MATCHES, engineConfig, readSettings } from './settings.js';

const OFFSCREEN = 'offscreen.html';
let creating = null;

async function hasEngine() {
  const contexts = await chrome.runtime.getContexts({ contextTypes: ['OFFSCREEN_DOCUMENT'] });
  return contexts.length > 0;
}

async function ensureEngine() {
  if (await hasEngine()) return;
  creating ??= (async () => {
    const config = engineConfig(await readSettings());
    await chrome.offscreen.createDocument({
      url: `${OFFSCREEN}?config=${encodeURIComponent(JSON.stringify(config))}`,
      reasons: ['WORKERS'],
      justification: 'Runs the Prompt API engine (Pyodide and ONNX Runtime Web in a worker) for every tab.',
    });
  })().finally(() => { creating = null; });
  await creating;
}

async function closeEngine() {
  await creating?.catch(() => {});
  if (await hasEngine()) await chrome.offscreen.closeDocument();
}

/** Whether the browser's own LanguageModel is usable (asked in the offscreen document). */
async function nativeAvailability() {
  await ensureEngine();
  return chrome.runtime.sendMessage({ kind: 'offscreen-native' });
}

let registering = Promise.resolve();

/** (Re-)register the two content scripts for the current settings. */
function register() {
  registering = registering.then(async () => {
    const settings = await readSettings();
    await chrome.scripting.unregisterContentScripts();
    const native = settings.install === 'auto' ? await nativeAvailability() : null;
    const installs = settings.install === 'force' || native === null || native === 'unavailable';
    if (installs) {
      const common = {
        matches: MATCHES,
        excludeMatches: settings.blocked.map((origin) => `${origin}/*`),
        runAt: 'document_start',
        allFrames: true,
      };
      await chrome.scripting.registerContentScripts([
        { id: 'bridge', js: ['bridge.js'], world: 'ISOLATED', ...common },
        { id: 'page', js: ['page.js'], world: 'MAIN', ...common },
      ]);
    }
    await chrome.storage.local.set({ status: { installs, native, at: Date.now() } });
  }).catch((error) => console.error('Prompt API runtime: registering failed', error));
  return registering;
}

let recording = Promise.resolve();

/** Count a site's connection (its origin and when; never a prompt or an answer). */
function recordSite(origin) {
  recording = recording.then(async () => {
    const { sites = {} } = await chrome.storage.local.get('sites');
    const entry = sites[origin] ?? { connections: 0 };
    sites[origin] = { connections: entry.connections + 1, lastUsed: Date.now() };
    await chrome.storage.local.set({ sites });
  });
  return recording;
}

chrome.runtime.onInstalled.addListener(() => { register(); });
chrome.runtime.onStartup.addListener(() => { register(); });

chrome.storage.onChanged.addListener((changes, area) => {
  if (area !== 'local' || !changes.settings) return;
  const before = JSON.stringify(engineConfig({ ...DEFAULT_SETTINGS, ...changes.settings.oldValue }));
  const after = JSON.stringify(engineConfig({ ...DEFAULT_SETTINGS, ...changes.settings.newValue }));
  (async () => {
    if (before !== after) await closeEngine(); // the next call starts the new engine
    await register();
  })();
});

chrome.runtime.onMessage.addListener((message, sender, reply) => {
  if (message?.kind !== 'engine' || sender.id !== chrome.runtime.id) return false;
  (async () => {
    const fromPage = sender.tab !== undefined && sender.origin && sender.origin !== `chrome-extension://${chrome.runtime.id}`;
    if (fromPage) {
      const settings = await readSettings();
      if (settings.blocked.includes(sender.origin)) {
        reply({ error: 'This site is blocked in the extension\'s options.' });
        return;
      }
      await recordSite(sender.origin);
    }
    await ensureEngine();
    reply({ ok: true });
  })().catch((error) => reply({ error: String(error?.message ?? error) }));
  return true;
});
