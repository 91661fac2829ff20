// The Prompt API in the extension's own pages (the options page): the same globals,
// with the members the IDL exposes only in extension contexts, on the shared engine.

import { Client } from '../src/client.js';
import { installGlobals } from '../src/install.js';
import { ExtensionPortTransport } from './transports.js';

installGlobals(new Client(new ExtensionPortTransport(), {}), false);
