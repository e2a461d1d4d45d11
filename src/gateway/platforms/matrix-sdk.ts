/**
 * Loading matrix-js-sdk (an optional dependency) and its Rust crypto quietly: the SDK and its
 * WebAssembly crypto log to the console at debug level, which is not the gateway's output.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { MatrixClient } from "matrix-js-sdk";
import { errorText } from "./media-files.js";
import { PlatformError } from "./types.js";

export type Sdk = typeof import("matrix-js-sdk");

/** The SDK's logs are not the gateway's: it reports what matters through `onError`. */
export const quietLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  getChild: () => quietLogger,
};

/**
 * Parts of the SDK log through `loglevel` loggers of their own (not the client's logger), each
 * set to debug and printing to the console; the adapter reports what matters itself. A logger's
 * output comes from its method factory, which new child loggers copy from their parent, so a
 * silent factory everywhere silences the ones created later too. `loglevel` is used by nothing
 * else in Hermes.
 */
function silenceSdkLoggers(sdkRequire: NodeJS.Require): void {
  type Level = { methodFactory: unknown; rebuild?: () => void };
  const loglevel = sdkRequire("loglevel") as Level & { getLoggers?: () => Record<string, Level> };
  const silent = () => () => undefined;
  for (const logger of [loglevel, ...Object.values(loglevel.getLoggers?.() ?? {})]) {
    logger.methodFactory = silent;
    logger.rebuild?.();
  }
}

export function loadMatrixSdk(): Promise<Sdk> {
  // require(), not import(): the bundled CLI runs as a compiled function where import() is not
  // available; Node 20.19+ loads the SDK's ES modules through require.
  const require = createRequire(import.meta.url);
  let sdk: Sdk;
  try {
    sdk = require("matrix-js-sdk") as Sdk;
  } catch (err) {
    return Promise.reject(
      new PlatformError(
        `Matrix needs the optional package matrix-js-sdk (${errorText(err)}): install it with "npm install matrix-js-sdk@37.5.0" in the directory Hermes is installed in`,
      ),
    );
  }
  try {
    silenceSdkLoggers(createRequire(require.resolve("matrix-js-sdk")));
  } catch {
    // Only the SDK's console chatter is lost.
  }
  return Promise.resolve(sdk);
}

/**
 * Starts the SDK's Rust crypto and turns the WebAssembly tracing down to warnings. With
 * `indexedDb` its store is the process's IndexedDB (`matrix-store.ts` saves it to the home),
 * else memory. Throws what the SDK threw.
 */
export async function startRustCrypto(client: MatrixClient, indexedDb = false): Promise<void> {
  // The WebAssembly side traces at debug level to the console while it starts.
  const original = { debug: console.debug, info: console.info };
  console.debug = () => undefined;
  console.info = () => undefined;
  try {
    await client.initRustCrypto({ useIndexedDB: indexedDb });
    let wasm:
      | { Tracing?: new (level: unknown) => { turnOn(): void }; LoggerLevel?: { Warn: unknown } }
      | undefined;
    try {
      // The SDK imports the ES module build; its sibling file is the same instance (the CommonJS
      // build would be a second WebAssembly instance whose tracing switch changes nothing).
      const fromSdk = createRequire(createRequire(import.meta.url).resolve("matrix-js-sdk"));
      const cjs = fromSdk.resolve("@matrix-org/matrix-sdk-crypto-wasm");
      wasm = fromSdk(join(dirname(cjs), "node.mjs")) as typeof wasm;
    } catch {
      wasm = undefined; // only the tracing level is lost
    }
    if (wasm?.Tracing && wasm.LoggerLevel) new wasm.Tracing(wasm.LoggerLevel.Warn).turnOn();
  } finally {
    console.debug = original.debug;
    console.info = original.info;
  }
}
