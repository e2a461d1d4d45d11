/**
 * The registry sources of the hub in one place: which adapter an identifier belongs to, searching
 * one, several or every source, and the `github` source over the taps. Local folders, git remotes,
 * direct URLs and well-known indexes are handled by sources.ts; the registries here are
 * `official`, `skills-sh`, `github`, `clawhub`, `claude-marketplace`, `lobehub` and `browse-sh`.
 */

import type { HubAdapter, HubContext, HubMeta } from "./adapter.js";
import { cachedListing, matchesWords } from "./adapter.js";
import { HubError, type SkillBundle } from "./bundle.js";
import { browseShAdapter, lobehubAdapter } from "./catalogs.js";
import { clawhubAdapter } from "./clawhub.js";
import { fetchGithubSkill, inspectGithub, listTapSkills } from "./github.js";
import { claudeMarketplaceAdapter, skillsShAdapter } from "./marketplaces.js";
import { officialAdapter } from "./official.js";
import { allTaps } from "./taps.js";
import { TRUST_RANK } from "./trust.js";

export const githubAdapter: HubAdapter = {
  id: "github",
  label: "GitHub repositories: the default taps and `hermes skills tap add` (owner/repo/path)",
  claims: (identifier) => identifier.startsWith("github/"),
  async search(query, limit, ctx) {
    const out: HubMeta[] = [];
    for (const tap of await allTaps(ctx.home)) {
      const listing = () => listTapSkills(ctx, tap.repo, tap.path);
      const skills = await cachedListing(ctx, `tap_${tap.repo}_${tap.path}`, listing).catch(
        (error: unknown) => {
          ctx.log?.(
            `hermes skills: tap ${tap.repo}: ${error instanceof Error ? error.message : String(error)}`,
          );
          return [];
        },
      );
      for (const meta of skills)
        if (matchesWords(query, meta.name, meta.description, meta.tags)) out.push(meta);
    }
    return out.slice(0, limit);
  },
  inspect: (identifier, ctx) => inspectGithub(ctx, identifier.replace(/^github\//, "")),
  fetch: (identifier, ctx): Promise<SkillBundle> =>
    fetchGithubSkill(ctx, identifier.replace(/^github\//, "")),
};

export const HUB_ADAPTERS: readonly HubAdapter[] = [
  officialAdapter,
  skillsShAdapter,
  githubAdapter,
  clawhubAdapter,
  claudeMarketplaceAdapter,
  lobehubAdapter,
  browseShAdapter,
];

/** Every `--source` name: the registries, plus `well-known` (configured indexes) and `all`. */
export const SOURCE_NAMES = [...HUB_ADAPTERS.map((a) => a.id), "well-known"] as const;

/** The adapter for a source id (also the `skills.sh` spelling lock.json records). */
export function adapterById(id: string): HubAdapter | undefined {
  const wanted = id === "skills.sh" ? "skills-sh" : id;
  return HUB_ADAPTERS.find((a) => a.id === wanted);
}

/** The adapter whose prefix `identifier` carries, if any. */
export function adapterClaiming(identifier: string): HubAdapter | undefined {
  return HUB_ADAPTERS.find((a) => a.claims(identifier));
}

export interface SourceSearch {
  results: HubMeta[];
  /** Per source: how many results, or the error that stopped it. */
  perSource: Array<{ source: string; count: number; error?: string }>;
}

/** Searches the given sources concurrently; a failing source is reported, never fatal. */
export async function searchSources(
  query: string,
  sources: readonly string[],
  limit: number,
  ctx: HubContext,
): Promise<SourceSearch> {
  for (const id of sources) if (!adapterById(id)) throw new HubError(`unknown source "${id}".`, 2);
  // Sources are independent: ask them all at once, so one slow registry does not hold up the rest.
  const answers = await Promise.all(
    sources.map(async (id) => {
      try {
        const found = await (adapterById(id) as HubAdapter).search(query, limit, ctx);
        return { source: id, found };
      } catch (error) {
        return {
          source: id,
          found: [] as HubMeta[],
          error: error instanceof Error ? error.message : String(error),
        };
      }
    }),
  );
  const results = answers.flatMap((a) => a.found);
  const perSource: SourceSearch["perSource"] = answers.map((a) => ({
    source: a.source,
    count: a.found.length,
    ...(a.error !== undefined ? { error: a.error } : {}),
  }));
  const seen = new Map<string, HubMeta>();
  for (const r of results) {
    const prior = seen.get(r.identifier);
    if (!prior || TRUST_RANK[r.trust] > TRUST_RANK[prior.trust]) seen.set(r.identifier, r);
  }
  const deduped = [...seen.values()].sort(
    (a, b) => TRUST_RANK[b.trust] - TRUST_RANK[a.trust] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  return { results: deduped, perSource };
}
