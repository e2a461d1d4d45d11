/**
 * Reads the dashboard chat's server-sent events (`POST /api/chat`) over raw HTTP, as a script
 * would: each `event:`/`data:` frame is parsed as it arrives, so a test can wait for one (an
 * approval question) while the turn is still running, and see how many frames the text came in.
 */
import { request } from "node:http";

export interface ChatEvent {
  event: string;
  data: Record<string, unknown>;
  /** ms since the request was sent. */
  at: number;
}

export interface ChatStream {
  status: Promise<number>;
  events: ChatEvent[];
  /** Resolves with the first event named `name` (already seen or still to come). */
  next(name: string, timeoutMs?: number): Promise<ChatEvent>;
  /** Resolves when the stream ends, with every event; `text` joins the `text` frames. */
  done: Promise<{ status: number; events: ChatEvent[]; text: string; body: string }>;
  close(): void;
}

export function openChatStream(
  port: number,
  headers: Record<string, string>,
  body: Record<string, unknown>,
): ChatStream {
  const started = Date.now();
  const events: ChatEvent[] = [];
  const waiters: Array<{ name: string; resolve: (e: ChatEvent) => void }> = [];
  const payload = JSON.stringify(body);
  let resolveStatus!: (s: number) => void;
  const status = new Promise<number>((r) => {
    resolveStatus = r;
  });
  let raw = "";
  const req = request({
    host: "127.0.0.1",
    port,
    method: "POST",
    path: "/api/chat",
    setHost: false,
    headers: {
      host: `127.0.0.1:${port}`,
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(payload)),
      ...headers,
    },
  });
  const done = new Promise<{ status: number; events: ChatEvent[]; text: string; body: string }>(
    (resolve, reject) => {
      req.on("response", (res) => {
        resolveStatus(res.statusCode ?? 0);
        let buffer = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          raw += chunk;
          buffer += chunk;
          let end = buffer.indexOf("\n\n");
          while (end >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf("\n\n");
            const name = /^event: (.*)$/m.exec(frame)?.[1];
            const data = /^data: (.*)$/m.exec(frame)?.[1];
            if (!name || data === undefined) continue;
            const event = {
              event: name,
              data: JSON.parse(data) as Record<string, unknown>,
              at: Date.now() - started,
            };
            events.push(event);
            for (const w of [...waiters]) {
              if (w.name === name) {
                waiters.splice(waiters.indexOf(w), 1);
                w.resolve(event);
              }
            }
          }
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            events,
            text: events
              .filter((e) => e.event === "text")
              .map((e) => String(e.data["text"]))
              .join(""),
            body: raw,
          }),
        );
        res.on("error", reject);
      });
      req.on("error", reject);
    },
  );
  req.end(payload);
  return {
    status,
    events,
    done,
    next: (name, timeoutMs = 20_000) => {
      const seen = events.find((e) => e.event === name);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `no "${name}" event within ${timeoutMs} ms; got ${events.map((e) => e.event).join(", ")}`,
              ),
            ),
          timeoutMs,
        );
        waiters.push({
          name,
          resolve: (e) => {
            clearTimeout(timer);
            resolve(e);
          },
        });
      });
    },
    close: () => {
      // The test left on purpose: the cut-off stream is not a failure.
      done.catch(() => undefined);
      req.destroy();
    },
  };
}
