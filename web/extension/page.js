// The MAIN-world content script: installs the Prompt API globals into a secure page
// before its own scripts run. Calls reach the extension's one engine through the
// bridge (./bridge.js); results and errors are created here, in the page's realm.
// The service worker registers this script only where it should run (its settings:
// blocked sites, and whether the browser's own API is usable).

import { Client } from '../src/client.js';
import { installGlobals, installRuntime } from '../src/install.js';
import { PageChannelTransport } from './transports.js';

// The channel opens at the first call, so a page that never uses the API costs nothing.
if (globalThis.isSecureContext) {
  const client = new Client(new PageChannelTransport(), {});
  installGlobals(client, false);
  installRuntime(client);
}
