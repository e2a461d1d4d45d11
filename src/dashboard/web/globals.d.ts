/** The package version, written into the bundle by scripts/build-web.mjs. */
declare const __HERMES_VERSION__: string;
