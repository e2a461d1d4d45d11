/**
 * Trust levels per hub source and what each allows. A source's trust decides what a scan verdict
 * means for an install:
 *
 * | trust     | safe    | caution                               | dangerous |
 * |-----------|---------|---------------------------------------|-----------|
 * | builtin   | install | install                               | refuse    |
 * | trusted   | install | install (findings shown)              | refuse    |
 * | community | install | --force, or a yes on a terminal       | refuse    |
 *
 * `builtin` is what ships in this package (`official/…` optional skills); `trusted` is a GitHub
 * repository on {@link TRUSTED_REPOS} (and the sources that delegate to it); everything else is
 * `community`. Unlike Python Hermes, a dangerous verdict is refused at every level: nothing, not
 * even `--force` or a builtin source, installs a skill the scanner calls dangerous.
 */
import type { Verdict } from "./scan-patterns.js";

export type TrustLevel = "builtin" | "trusted" | "community";

/** GitHub repositories whose skills count as `trusted` (as upstream's skills guard lists them). */
export const TRUSTED_REPOS: ReadonlySet<string> = new Set(["openai/skills", "anthropics/skills"]);

export type PolicyDecision = "install" | "confirm" | "refuse";

/** What a verdict allows at a trust level; `confirm` means --force or a yes on a terminal. */
export function installDecision(trust: TrustLevel, verdict: Verdict): PolicyDecision {
  if (verdict === "dangerous") return "refuse";
  if (verdict === "caution") return trust === "community" ? "confirm" : "install";
  return "install";
}

/** Trust for a GitHub `owner/repo/…` identifier. */
export function githubTrust(identifier: string): TrustLevel {
  const [owner, repo] = identifier.split("/");
  return owner && repo && TRUSTED_REPOS.has(`${owner}/${repo}`.toLowerCase()) ? "trusted" : "community";
}

export const TRUST_RANK: Record<TrustLevel, number> = { builtin: 3, trusted: 2, community: 1 };

export function isTrustLevel(value: unknown): value is TrustLevel {
  return value === "builtin" || value === "trusted" || value === "community";
}
