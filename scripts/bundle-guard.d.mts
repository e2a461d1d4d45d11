// Types of scripts/bundle-guard.mjs for the TypeScript tests that import it.
import type { Metafile } from "esbuild";

export declare const BUNDLE_LIMIT_BYTES: number;
export declare const OUT_OF_BUNDLE_PACKAGES: readonly string[];
export declare const SIDE_BUNDLE_LIMITS: Readonly<Record<string, number>>;
export declare function sideBundleLimit(name: string): number;

export interface BundleReport {
  outfile: string;
  bytes: number;
  /** Bytes of the project's own source. */
  source: number;
  /** Bytes per npm package, largest first. */
  packages: { name: string; bytes: number }[];
}

export declare function packageOf(inputPath: string): string | undefined;
export declare function bundleReport(metafile: Metafile, outfile: string): BundleReport;
export declare function topContributors(report: BundleReport, count?: number): string;
export declare function bundleProblems(
  report: BundleReport,
  options?: { limitBytes?: number; optionalDependencies?: readonly string[] },
): string[];
