import { readFileSync } from "node:fs";

/** The package version: injected at build time; read from package.json when running from source. */
export function hermesVersion(): string {
  if (typeof __HERMES_VERSION__ === "string") return __HERMES_VERSION__;
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version?: string;
    };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}
