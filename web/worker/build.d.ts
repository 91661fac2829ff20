// Defined by build/build.py when it bundles the worker (esbuild --define).
declare const BUILD: {
  /** The gzipped Pyodide memory snapshot, relative to dist/. */
  snapshot: string;
  /** The engine's wheels, unpacked at boot. */
  wheels: string[];
  /** The chat-template engine's wheels, unpacked when a real model is configured. */
  modelWheels: string[];
};
