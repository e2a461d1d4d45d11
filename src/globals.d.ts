/** Injected by esbuild at build time; read through util/version.ts, which falls back under tsx/vitest. */
declare const __HERMES_VERSION__: string | undefined;

declare module "*.md" {
  const text: string;
  export default text;
}
