// The extension APIs the extension's scripts use (untyped here: no @types/chrome).
declare const chrome: any;
// The options page's Prompt API (language-model.js, loaded before it).
declare const LanguageModel: any;
