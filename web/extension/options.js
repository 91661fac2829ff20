// The options page: the model, what is cached, which sites used the API (and
// blocking them), and the engine's state. It runs the API itself, with the
// extension-only members (LanguageModel.params(), topK, temperature…).

import { CACHE_NAME } from '../worker/model-cache.mjs';
import { NAMED_MODELS, readSettings } from './settings.js';

const $ = (selector) => /** @type {any} */ (document.querySelector(selector));

function formatBytes(bytes) {
  const units = ['B', 'KB', 'MB', 'GB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit ? 1 : 0)} ${units[unit]}`;
}

function row(cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) {
    const td = document.createElement('td');
    if (cell instanceof Node) td.append(cell);
    else td.textContent = String(cell);
    tr.append(td);
  }
  return tr;
}

async function showModel() {
  const settings = await readSettings();
  const form = $('#model');
  const named = settings.model === 'echo' || settings.model in NAMED_MODELS;
  form.elements.model.value = named ? settings.model : 'url';
  form.elements.url.value = named ? '' : settings.model;
  form.elements.dtype.value = settings.dtype;
  form.elements.device.value = settings.device;
  form.elements.force.checked = settings.install === 'force';
}

async function saveModel(event) {
  event.preventDefault();
  const form = $('#model');
  const choice = form.elements.model.value;
  const settings = await readSettings();
  settings.model = choice === 'url' ? form.elements.url.value : choice;
  settings.dtype = form.elements.dtype.value;
  settings.device = form.elements.device.value;
  settings.install = form.elements.force.checked ? 'force' : 'auto';
  await chrome.storage.local.set({ settings });
  $('#saved').textContent = 'Saved: pages get the new model when they reload.';
}

async function showCache() {
  const rows = [];
  let total = 0;
  const cache = await caches.open(CACHE_NAME);
  for (const request of await cache.keys()) {
    const response = await cache.match(request);
    const bytes = Number(response?.headers.get('X-Prompt-API-Size')) || 0;
    if (!bytes) continue; // the marker of a file the server does not have
    total += bytes;
    rows.push(row([request.url, formatBytes(bytes)]));
  }
  $('#cache tbody').replaceChildren(...rows);
  $('#cache-total').textContent = formatBytes(total);
}

async function showSites() {
  const { sites = {} } = await chrome.storage.local.get('sites');
  const settings = await readSettings();
  const rows = [];
  const origins = new Set([...Object.keys(sites), ...settings.blocked]);
  for (const origin of [...origins].sort()) {
    const blocked = settings.blocked.includes(origin);
    const button = document.createElement('button');
    button.textContent = blocked ? 'Allow' : 'Block';
    button.onclick = async () => {
      const current = await readSettings();
      current.blocked = blocked ? current.blocked.filter((o) => o !== origin) : [...current.blocked, origin];
      await chrome.storage.local.set({ settings: current });
      showSites();
    };
    const entry = sites[origin];
    rows.push(row([origin, entry?.connections ?? 0,
      entry ? new Date(entry.lastUsed).toLocaleString() : '', button]));
  }
  $('#sites tbody').replaceChildren(...rows);
}

async function showEngine() {
  const status = await chrome.runtime.sendMessage({ kind: 'offscreen-status' }).catch(() => null);
  const params = await LanguageModel.params();
  $('#engine').textContent = JSON.stringify({ engine: status ?? 'not started', params }, null, 2);
}

async function tryPrompt() {
  const session = await LanguageModel.create();
  $('#answer').textContent = `${await session.prompt($('#prompt').value)}\n(topK ${session.topK}, temperature ${session.temperature})`;
  session.destroy();
  showEngine();
}

$('#model').addEventListener('submit', saveModel);
$('#cache-clear').addEventListener('click', async () => {
  await caches.delete(CACHE_NAME);
  showCache();
});
$('#try').addEventListener('click', () => tryPrompt().catch((error) => { $('#answer').textContent = String(error); }));
showModel();
showCache();
showSites();
showEngine();
