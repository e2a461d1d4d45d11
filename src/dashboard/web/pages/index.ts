/**
 * The page registry: the shell's nav and router read this list. Each page lives in its own
 * file(s) under pages/ and adds one import and one entry here; `order` sets its place in the nav.
 */

import { chatPage } from "./chat.js";
import { configPage } from "./config.js";
import { cronPage } from "./cron.js";
import { gatewayPage } from "./gateway.js";
import { logsPage } from "./logs.js";
import { memoryPage } from "./memory.js";
import { overviewPage } from "./overview.js";
import { sessionsPage } from "./sessions.js";
import { skillsPage } from "./skills.js";
import type { PageDef } from "./types.js";
import { usagePage } from "./usage.js";

export const pages: PageDef[] = [
  overviewPage,
  sessionsPage,
  chatPage,
  usagePage,
  memoryPage,
  skillsPage,
  cronPage,
  gatewayPage,
  configPage,
  logsPage,
].sort((a, b) => a.order - b.order);
