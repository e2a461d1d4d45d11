/**
 * A loopback Honcho API serving exactly the v3 routes `@honcho-ai/sdk` 2.5 calls for the Hermes
 * provider (read from node_modules/@honcho-ai/sdk/dist: client.js, peer.js, session.js,
 * conclusions.js), so the real SDK is the client under test:
 *
 *   POST /v3/workspaces                                   get-or-create workspace
 *   POST /v3/workspaces/:ws/peers                         get-or-create peer
 *   POST /v3/workspaces/:ws/sessions                      get-or-create session (with peers)
 *   POST /v3/workspaces/:ws/sessions/:sid/messages        add messages
 *   GET  /v3/workspaces/:ws/sessions/:sid/context         summary, representation, peer card
 *   POST /v3/workspaces/:ws/peers/:pid/chat               dialectic answer
 *   GET  /v3/workspaces/:ws/peers/:pid/card               peer card
 *   POST /v3/workspaces/:ws/peers/:pid/search             message search
 *   POST /v3/workspaces/:ws/conclusions(/list)            create / list conclusions
 *
 * Anything else answers 404 and is recorded, so a test sees an unexpected route. `failNext`
 * scripts 500s and `hangNext` requests that never answer (the SDK's timeout must end them).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface HonchoRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  authorization: string | undefined;
}

export interface StoredMessage {
  id: string;
  session_id: string;
  peer_id: string;
  content: string;
}

export interface FakeHoncho {
  url: string;
  requests: HonchoRequest[];
  /** Messages added, per session id. */
  messages: Map<string, StoredMessage[]>;
  /** Session id → peer ids it was created with. */
  sessions: Map<string, unknown>;
  conclusions: Array<{ id: string; content: string; observer_id: string; observed_id: string }>;
  /** What the context route returns. */
  context: { summary?: string; representation?: string; card?: string[] };
  /** What the dialectic chat returns. */
  dialectic: string;
  /** The next `count` requests whose path matches `pattern` answer 500. */
  failNext(pattern: RegExp, count?: number): void;
  /** The next `count` requests whose path matches `pattern` never answer. */
  hangNext(pattern: RegExp, count?: number): void;
  /** Forgets requests, stored data, scripted answers and failures not yet used (between tests). */
  reset(): void;
  /** Settles when a request matching `pattern` has been received (already received counts). */
  waitFor(pattern: RegExp, method?: string): Promise<HonchoRequest>;
  close(): Promise<void>;
}

export async function startFakeHoncho(): Promise<FakeHoncho> {
  const requests: HonchoRequest[] = [];
  const messages = new Map<string, StoredMessage[]>();
  const sessions = new Map<string, unknown>();
  const conclusions: FakeHoncho["conclusions"] = [];
  const failures: Array<{ pattern: RegExp; left: number; kind: "fail" | "hang" }> = [];
  const waiters: Array<{ pattern: RegExp; method?: string; resolve: (r: HonchoRequest) => void }> = [];
  const hanging = new Set<ServerResponse>();
  let nextId = 1;
  const now = () => new Date().toISOString();

  const fake: FakeHoncho = {
    url: "",
    requests,
    messages,
    sessions,
    conclusions,
    context: {},
    dialectic: "",
    failNext: (pattern, count = 1) => failures.push({ pattern, left: count, kind: "fail" }),
    hangNext: (pattern, count = 1) => failures.push({ pattern, left: count, kind: "hang" }),
    reset: () => {
      requests.length = 0;
      messages.clear();
      sessions.clear();
      conclusions.length = 0;
      failures.length = 0;
      fake.context = {};
      fake.dialectic = "";
    },
    waitFor: (pattern, method) => {
      const seen = requests.find((r) => pattern.test(r.path) && (!method || r.method === method));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ pattern, ...(method ? { method } : {}), resolve }));
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };

  type Handler = (m: RegExpMatchArray, body: Record<string, unknown>) => unknown;
  const routes: Array<[method: string, pattern: RegExp, handler: Handler]> = [
    [
      "POST",
      /^\/v3\/workspaces$/,
      (_m, body) => ({ id: body["id"], metadata: {}, configuration: {}, created_at: now() }),
    ],
    [
      "POST",
      /^\/v3\/workspaces\/([^/]+)\/peers$/,
      (m, body) => ({
        id: body["id"],
        workspace_id: m[1],
        metadata: {},
        configuration: {},
        created_at: now(),
      }),
    ],
    [
      "POST",
      /^\/v3\/workspaces\/([^/]+)\/sessions$/,
      (m, body) => {
        sessions.set(String(body["id"]), body["peers"]);
        const created = { metadata: {}, configuration: {}, is_active: true, created_at: now() };
        return { id: body["id"], workspace_id: m[1], ...created };
      },
    ],
    [
      "POST",
      /^\/v3\/workspaces\/([^/]+)\/sessions\/([^/]+)\/messages$/,
      (m, body) => {
        const [, ws = "", sid = ""] = m;
        const list = messages.get(sid) ?? [];
        const sent = (body["messages"] ?? []) as Array<{ peer_id: string; content: string }>;
        const added = sent.map((msg) => ({
          id: `msg-${nextId++}`,
          session_id: sid,
          workspace_id: ws,
          peer_id: msg.peer_id,
          content: msg.content,
          metadata: {},
          created_at: now(),
          token_count: Math.ceil(msg.content.length / 4),
        }));
        list.push(...added);
        messages.set(sid, list);
        return added;
      },
    ],
    [
      "GET",
      /^\/v3\/workspaces\/[^/]+\/sessions\/([^/]+)\/context$/,
      (m) => {
        const c = fake.context;
        const summary = c.summary
          ? {
              content: c.summary,
              message_id: "msg-0",
              summary_type: "short",
              created_at: now(),
              token_count: 10,
            }
          : null;
        return {
          id: m[1],
          messages: [],
          summary,
          peer_representation: c.representation ?? null,
          peer_card: c.card ?? null,
        };
      },
    ],
    ["POST", /^\/v3\/workspaces\/[^/]+\/peers\/[^/]+\/chat$/, () => ({ content: fake.dialectic })],
    [
      "GET",
      /^\/v3\/workspaces\/[^/]+\/peers\/([^/]+)\/card$/,
      (m) => ({ peer_id: m[1], peer_card: fake.context.card ?? null }),
    ],
    [
      "POST",
      /^\/v3\/workspaces\/[^/]+\/peers\/([^/]+)\/search$/,
      (m, body) => {
        const q = String(body["query"] ?? "").toLowerCase();
        const all = [...messages.values()].flat();
        const found = all.filter((x) => x.peer_id === m[1] && x.content.toLowerCase().includes(q));
        return found.slice(0, Number(body["limit"] ?? 10));
      },
    ],
    [
      "POST",
      /^\/v3\/workspaces\/[^/]+\/conclusions$/,
      (_m, body) => {
        const created = ((body["conclusions"] ?? []) as Array<Record<string, string>>).map((c) => ({
          id: `c-${nextId++}`,
          content: c["content"] ?? "",
          observer_id: c["observer_id"] ?? "",
          observed_id: c["observed_id"] ?? "",
          session_id: c["session_id"] ?? null,
          created_at: now(),
        }));
        conclusions.push(...created);
        return created;
      },
    ],
    [
      "POST",
      /^\/v3\/workspaces\/[^/]+\/conclusions\/list$/,
      () => ({ items: conclusions, page: 1, size: 50, total: conclusions.length, pages: 1 }),
    ],
  ];

  const route = (req: HonchoRequest, res: ServerResponse): void => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    for (const [method, pattern, handler] of routes) {
      const m = req.method === method ? req.path.match(pattern) : null;
      if (m) {
        send(res, 200, handler(m, body));
        return;
      }
    }
    send(res, 404, { detail: `fake Honcho has no route ${req.method} ${req.path}` });
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.on("data", (chunk: Buffer) => (raw += chunk.toString("utf8")));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://fake");
      const record: HonchoRequest = {
        method: req.method ?? "GET",
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        body: raw ? JSON.parse(raw) : undefined,
        authorization: req.headers.authorization,
      };
      requests.push(record);
      for (const w of [...waiters]) {
        if (w.pattern.test(record.path) && (!w.method || w.method === record.method)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(record);
        }
      }
      const failure = failures.find((f) => f.left > 0 && f.pattern.test(record.path));
      if (failure) {
        failure.left--;
        if (failure.kind === "hang") hanging.add(res);
        else send(res, 500, { detail: "fake Honcho failure" });
        return;
      }
      route(record, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
