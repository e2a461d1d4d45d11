/**
 * Changing the home's "no" to bundled skills where every reader sees it: a file home's two files
 * (`bundled-opt-out.ts`, unchanged), or, when a shared backend registered its lists for the home
 * (PostgreSQL), the database's, which every instance writes into its own two files at each refresh
 * (seeding and the CLI read those). Reading stays on the files.
 */
import { knowledgeStores } from "../stores.js";
import { setOptedOut, setSuppressed } from "./bundled-opt-out.js";

/** Sets the whole-home opt-out; answers whether it changed. */
export async function setOptedOutShared(home: string, optedOut: boolean): Promise<boolean> {
  const shared = knowledgeStores(home).optOuts;
  return shared ? shared.setAll(optedOut) : setOptedOut(home, optedOut);
}

/** Adds or removes one name of `.curator_suppressed`; answers whether it changed. */
export async function setSuppressedShared(home: string, name: string, suppressed: boolean): Promise<boolean> {
  const shared = knowledgeStores(home).optOuts;
  return shared ? shared.setSkill(name, suppressed) : setSuppressed(home, name, suppressed);
}
