// The classic-script build: <script src=".../language-model.js" data-model="echo">.
import { install } from './src/install.js';

const script = /** @type {HTMLScriptElement} */ (document.currentScript);
install(new URL('.', script.src).href, script);
