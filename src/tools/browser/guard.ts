/**
 * Keeps a page off private addresses. Playwright's `page.route` never sees redirect hops, so the
 * guard pauses every document request (top-level, iframe, each redirect hop, script-driven
 * navigation) through the DevTools Fetch domain, checks its URL with the shared URL guard, and
 * fails refused ones with ERR_BLOCKED_BY_CLIENT before anything is sent.
 */
import type { CDPSession, Page } from "playwright-core";
import { checkUrl, UrlBlockedError, type UrlGuardOptions } from "../web/url-guard.js";

/** A document request the guard refused. */
export interface BlockedNavigation {
  url: string;
  /** The address the host resolved to. */
  address: string;
  /** True when the request was a redirect hop (the page asked for another URL first). */
  redirect: boolean;
  /** True when it was a frame inside the page rather than the page itself. */
  subframe: boolean;
}

interface RequestPausedEvent {
  requestId: string;
  request: { url: string };
  frameId: string;
  redirectedRequestId?: string;
}

/**
 * The reason a URL may not be opened, or undefined when it may. Only http(s) URLs reach the
 * network; a host that does not resolve is left for the browser to report.
 */
export async function refusal(url: string, policy: UrlGuardOptions): Promise<UrlBlockedError | undefined> {
  if (policy.allowPrivate || !/^https?:/i.test(url)) return undefined;
  try {
    await checkUrl(url, policy);
    return undefined;
  } catch (error) {
    return error instanceof UrlBlockedError ? error : undefined;
  }
}

/**
 * Installs the guard on `page`; `onBlocked` hears each refusal. Resolves once interception is on.
 * Does nothing when private addresses are allowed.
 */
export async function guardPage(
  page: Page,
  policy: UrlGuardOptions,
  onBlocked: (blocked: BlockedNavigation) => void,
): Promise<void> {
  if (policy.allowPrivate) return;
  let session: CDPSession;
  try {
    session = await page.context().newCDPSession(page);
  } catch (error) {
    throw new Error(
      `Could not protect the browser page from private addresses (${(error as Error).message}). Set security.allow_private_urls: true only if reaching internal addresses is intended.`,
    );
  }
  const mainFrameId = await mainFrameIdOf(session);
  session.on("Fetch.requestPaused", (event: RequestPausedEvent) => {
    void decide(session, event, { policy, mainFrameId, onBlocked });
  });
  await session.send("Fetch.enable", {
    patterns: [{ urlPattern: "*", resourceType: "Document", requestStage: "Request" }],
  });
}

async function mainFrameIdOf(session: CDPSession): Promise<string | undefined> {
  try {
    const { frameTree } = await session.send("Page.getFrameTree");
    return frameTree.frame.id;
  } catch {
    return undefined;
  }
}

async function decide(
  session: CDPSession,
  event: RequestPausedEvent,
  how: {
    policy: UrlGuardOptions;
    mainFrameId: string | undefined;
    onBlocked: (blocked: BlockedNavigation) => void;
  },
): Promise<void> {
  const { policy, mainFrameId, onBlocked } = how;
  const url = event.request.url;
  const refused = await refusal(url, policy);
  try {
    if (refused) {
      onBlocked({
        url,
        address: refused.address,
        redirect: event.redirectedRequestId !== undefined,
        subframe: mainFrameId !== undefined && event.frameId !== mainFrameId,
      });
      await session.send("Fetch.failRequest", { requestId: event.requestId, errorReason: "BlockedByClient" });
    } else {
      await session.send("Fetch.continueRequest", { requestId: event.requestId });
    }
  } catch {
    // The page or its target went away while the request was paused.
  }
}

/** One sentence for the model about a refused navigation. */
export function describeBlocked(blocked: BlockedNavigation): string {
  const what = blocked.subframe
    ? "A frame in the page tried to load"
    : blocked.redirect
      ? "The page redirected to"
      : "Refused to open";
  return `${what} ${blocked.url}, which resolves to ${blocked.address}, a private, loopback or otherwise internal address; it was blocked. Set security.allow_private_urls: true in config.yaml to allow internal addresses.`;
}
