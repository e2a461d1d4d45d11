// Types of scripts/side-bundles.mjs for the TypeScript tests that import it.
import type { BuildResult, Metafile } from "esbuild";

export interface SideBundle {
  name: string;
  what: string;
  seams: RegExp[];
}

export declare const SIDE_BUNDLES: readonly SideBundle[];
export declare const STATELESS_SHARED: readonly string[];
/** The end of a side bundle's function: hands it to the side loader, or refuses to run alone. */
export declare const sideFooter: { js: string };
export declare function sideOutfile(name: string, mainOutfile?: string): string;
export declare function seamOf(path: string, sides?: readonly SideBundle[]): SideBundle | undefined;
export declare function outputModules(metafile: Metafile, outfile: string): Set<string>;
export declare function bundleOverlaps(
  bundles: Record<string, Iterable<string>>,
  stateless?: readonly string[],
): { path: string; bundles: string[] }[];

export interface BuiltBundle {
  outfile: string;
  result: BuildResult & { metafile: Metafile };
}

export interface BuiltSideBundle extends BuiltBundle {
  name: string;
  /** Project-relative modules the main bundle lends this side bundle. */
  hostModules: string[];
  /** Project-relative targets of the dynamic imports cut out of the main bundle. */
  seams: string[];
}

export declare function buildCliBundles(options?: {
  write?: boolean;
  outdir?: string;
  sides?: readonly SideBundle[];
}): Promise<{ main: BuiltBundle; sides: BuiltSideBundle[]; hoisted: string[] }>;
