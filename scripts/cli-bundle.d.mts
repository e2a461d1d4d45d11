// Types of scripts/cli-bundle.mjs for the TypeScript tests that import it.
import type { BuildOptions } from "esbuild";

export declare const common: BuildOptions;
export declare const cliBundleOptions: BuildOptions & { outfile: string };
