/**
 * The page registry: the shell's nav and router read this list. Each page lives in its own
 * file(s) under pages/ and adds one import and one entry here; `order` sets its place in the nav.
 */
import { chatPage } from "./chat.js";
import { overviewPage } from "./overview.js";
import type { PageDef } from "./types.js";

export const pages: PageDef[] = [overviewPage, chatPage].sort((a, b) => a.order - b.order);
