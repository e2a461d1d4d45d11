/**
 * `/browser connect [URL] | disconnect | status`: points this chat's browser tools at a Chrome or
 * Chromium you started with remote debugging (`chromium --remote-debugging-port=9222`), so the
 * agent works in your logged-in browser, or goes back to the headless one. The setting lasts for
 * this chat (`browser.cdp_url`, like `BROWSER_CDP_URL`); the browser the tools had open is closed.
 */
import { browserSessions } from "../tools/browser/session.js";
import type { CommandContext, CommandDef } from "./types.js";

const DEFAULT_CDP = "http://127.0.0.1:9222";

function browserSection(ctx: CommandContext): Record<string, unknown> {
  const config = ctx.session.agent.config as unknown as Record<string, unknown>;
  const current = config["browser"];
  if (current && typeof current === "object" && !Array.isArray(current))
    return current as Record<string, unknown>;
  const fresh: Record<string, unknown> = {};
  config["browser"] = fresh;
  return fresh;
}

/** The DevTools version endpoint answers for an http(s) address; a ws:// one is tried on first use. */
async function probe(url: string): Promise<string> {
  if (!/^https?:\/\//i.test(url)) return "";
  const response = await fetch(`${url.replace(/\/+$/, "")}/json/version`, {
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok) throw new Error(`${url}/json/version answered ${response.status}`);
  const info = (await response.json()) as { Browser?: string };
  return info.Browser ?? "";
}

const browserCommand: CommandDef = {
  name: "browser",
  description:
    "connect the browser tools to your Chrome over CDP: /browser connect [URL] | disconnect | status",
  category: "Settings",
  // It drives a browser on the machine Hermes runs on, which a chat user cannot see.
  surfaces: "repl",
  async run(args, ctx) {
    const s = ctx.paint;
    const [action = "status", target] = args.trim().split(/\s+/).filter(Boolean);
    const section = browserSection(ctx);
    switch (action) {
      case "connect": {
        const url = target ?? DEFAULT_CDP;
        let version: string;
        try {
          version = await probe(url);
        } catch (error) {
          ctx.reply(
            `${s.red("✗")} No browser answers at ${url}: ${error instanceof Error ? error.message : String(error)}`,
            s.dim(
              "Start one with: chromium --remote-debugging-port=9222 (or google-chrome …), then try again.",
            ),
          );
          return;
        }
        section["cdp_url"] = url;
        await browserSessions(ctx.session.toolRuntime).closeAll();
        ctx.reply(`${s.green("✓")} Browser tools now use ${version ? `${version} at ` : ""}${url}.`);
        return;
      }
      case "disconnect": {
        delete section["cdp_url"];
        await browserSessions(ctx.session.toolRuntime).closeAll();
        ctx.reply(`${s.green("✓")} Browser tools are back on their own headless browser.`);
        return;
      }
      case "status": {
        const url = section["cdp_url"] ?? process.env["BROWSER_CDP_URL"];
        ctx.reply(
          typeof url === "string" && url
            ? `Browser tools use the browser at ${url} (CDP).`
            : "Browser tools use their own headless browser (or Browserbase when BROWSERBASE_API_KEY is set).",
        );
        return;
      }
      default:
        ctx.reply(s.red(`Unknown /browser action "${action}". Use connect [URL], disconnect or status.`));
    }
  },
};

export const BROWSER_COMMANDS: readonly CommandDef[] = [browserCommand];
