/**
 * The heavy parsing libraries of the web tools (linkedom, Readability, turndown, unpdf,
 * iconv-lite), loaded on first use so that starting Hermes never pays for them.
 */
import { createRequire } from "node:module";
import type { Readability as ReadabilityClass } from "@mozilla/readability";
import type * as IconvLite from "iconv-lite";
import type * as Linkedom from "linkedom";
import type TurndownService from "turndown";
import type * as Unpdf from "unpdf";

const require = createRequire(import.meta.url);

let linkedom: typeof Linkedom | undefined;
let readability: typeof ReadabilityClass | undefined;
let turndown: typeof TurndownService | undefined;
let unpdf: typeof Unpdf | undefined;
let iconv: typeof IconvLite | undefined;

export function loadLinkedom(): typeof Linkedom {
  linkedom ??= require("linkedom") as typeof Linkedom;
  return linkedom;
}

export function loadReadability(): typeof ReadabilityClass {
  readability ??= (require("@mozilla/readability") as { Readability: typeof ReadabilityClass }).Readability;
  return readability;
}

export function loadTurndown(): typeof TurndownService {
  turndown ??= require("turndown") as typeof TurndownService;
  return turndown;
}

export function loadUnpdf(): typeof Unpdf {
  unpdf ??= require("unpdf") as typeof Unpdf;
  return unpdf;
}

export function loadIconv(): typeof IconvLite {
  iconv ??= require("iconv-lite") as typeof IconvLite;
  return iconv;
}
