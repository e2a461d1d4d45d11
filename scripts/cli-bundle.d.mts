// Types of scripts/cli-bundle.mjs for the TypeScript tests that import it.
import type { BuildOptions } from "esbuild";

export declare const common: BuildOptions;
export declare const cliBundleOptions: BuildOptions & { outfile: string };
/** The end of the CLI bundle's function: hands it to bin/hermes, or runs it when Node runs the file. */
export declare const directRunFooter: string;
