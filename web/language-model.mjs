// The ES module build: import { LanguageModel } from '.../language-model.mjs'.
import { install } from './src/install.js';

const script = document.querySelector('script[data-model][type="module"]');
export const {
  LanguageModel, LanguageModelToolCall, LanguageModelToolSuccess, LanguageModelToolError,
} = install(new URL('.', import.meta.url).href, script);
