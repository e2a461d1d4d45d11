/**
 * A loopback stand-in for Microsoft Edge's read-aloud WebSocket service, checking what the real one
 * checks: the connect URL (TrustedClientToken, a Sec-MS-GEC token valid for the server's clock,
 * Sec-MS-GEC-Version, a ConnectionId), the browser's Origin, then a `speech.config` text message
 * asking for 24 kHz MP3 and an `ssml` message whose SSML has one voice and one prosody element. It
 * answers like the service: `turn.start`, binary frames (2-byte header length, a header block with
 * `Path:audio` and `Content-Type:audio/mpeg`, MP3 bytes), `turn.end`. The token is computed here
 * independently of the client's code. Misbehaviours for attack tests: `mode`.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

const TOKEN = "6A5AA1D4EAFF4E9FB37E23D68491D6F4";
const PATH = "/consumer/speech/synthesize/readaloud/edge/v1";
const SSML =
  /^<speak version='1\.0' xmlns='http:\/\/www\.w3\.org\/2001\/10\/synthesis' xml:lang='en-US'><voice name='Microsoft Server Speech Text to Speech Voice \(([a-z]{2,3}-[A-Za-z0-9-]+), ([A-Za-z0-9]+Neural)\)'><prosody pitch='([+-]\d+Hz)' rate='([+-]\d+%)' volume='([+-]\d+%)'>([^<>]*)<\/prosody><\/voice><\/speak>$/;

export type EdgeMode =
  /** The service's normal answer. */
  | "normal"
  /** Audio, then silence: no `turn.end` ever. */
  | "no-turn-end"
  /** Audio frames without end (until the client hangs up or 64 MB went out). */
  | "endless-audio"
  /** Refuses every handshake with HTTP 503. */
  | "unavailable";

export interface EdgeTurn {
  /** The voice's short name, e.g. en-US-AriaNeural. */
  voice: string;
  rate: string;
  pitch: string;
  volume: string;
  /** The spoken text with the XML entities decoded. */
  text: string;
  ssml: string;
}

export interface FakeEdgeTts {
  /** `ws://127.0.0.1:<port>/consumer/speech/synthesize/readaloud/edge/v1`. */
  readonly url: string;
  readonly turns: EdgeTurn[];
  /** Handshakes refused and why (bad token, wrong origin...). */
  readonly refused: string[];
  /** Protocol errors seen in messages (the connection is closed as the service does). */
  readonly errors: string[];
  mode: EdgeMode;
  /** The server's clock skew against this process, in ms (the Sec-MS-GEC check uses it). */
  skewMs: number;
  close(): Promise<void>;
}

/** The token valid at `ms` (Windows-epoch seconds rounded down to 5 minutes, in 100 ns ticks). */
function gec(ms: number): string {
  const windowsSeconds = Math.floor(ms / 1000) + 11_644_473_600;
  const rounded = windowsSeconds - (windowsSeconds % 300);
  return createHash("sha256")
    .update(`${BigInt(rounded) * 10_000_000n}${TOKEN}`)
    .digest("hex")
    .toUpperCase();
}

function headersOf(block: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of block.split("\r\n")) {
    const i = line.indexOf(":");
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

function decodeXml(text: string): string {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");
}

function audioFrame(requestId: string, payload: Buffer): Buffer {
  const header = Buffer.from(
    `X-RequestId:${requestId}\r\nContent-Type:audio/mpeg\r\nX-StreamId:F00D\r\nPath:audio\r\n`,
    "utf8",
  );
  const length = Buffer.alloc(2);
  length.writeUInt16BE(header.length);
  return Buffer.concat([length, header, payload]);
}

/** Starts the fake; `audio` is the MP3 it streams for every turn. */
export async function startFakeEdgeTts(audio: Buffer): Promise<FakeEdgeTts> {
  const sockets = new Set<Socket>();
  const wss = new WebSocketServer({ noServer: true });
  const fake: FakeEdgeTts = {
    url: "",
    turns: [],
    refused: [],
    errors: [],
    mode: "normal",
    skewMs: 0,
    close: async () => {},
  };
  const refuse = (socket: Socket, status: number, why: string) => {
    fake.refused.push(why);
    socket.end(
      `HTTP/1.1 ${status} Refused\r\nDate: ${new Date(Date.now() + fake.skewMs).toUTCString()}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    );
  };
  const server = createServer((_req, res) => {
    res.writeHead(404).end();
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://fake");
    const q = url.searchParams;
    const serverNow = Date.now() + fake.skewMs;
    if (fake.mode === "unavailable") return refuse(socket, 503, "unavailable");
    if (url.pathname !== PATH) return refuse(socket, 404, `path ${url.pathname}`);
    if (q.get("TrustedClientToken") !== TOKEN) return refuse(socket, 403, "TrustedClientToken");
    const token = q.get("Sec-MS-GEC") ?? "";
    // The service accepts the current 5-minute step (and the one just before, at a boundary).
    if (token !== gec(serverNow) && token !== gec(serverNow - 300_000))
      return refuse(socket, 403, "Sec-MS-GEC");
    if (!/^1-\d+\.\d+\.\d+\.\d+$/.test(q.get("Sec-MS-GEC-Version") ?? ""))
      return refuse(socket, 403, "version");
    if (!/^[0-9a-f]{32}$/.test(q.get("ConnectionId") ?? "")) return refuse(socket, 400, "ConnectionId");
    if (req.headers.origin !== "chrome-extension://jdiccldimpdaibmpdkjnbmckianbfold")
      return refuse(socket, 403, `origin ${req.headers.origin}`);
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws));
  });

  function serve(ws: WebSocket) {
    let configured = false;
    const fail = (why: string) => {
      fake.errors.push(why);
      ws.close(1007, why.slice(0, 100));
    };
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (isBinary) return fail("client sent a binary frame");
      const text = data.toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      if (split < 0) return fail("message without a header block");
      const headers = headersOf(text.slice(0, split));
      const body = text.slice(split + 4);
      if (!headers["X-Timestamp"]) return fail("no X-Timestamp");
      if (headers["Path"] === "speech.config") {
        if (!headers["Content-Type"]?.startsWith("application/json"))
          return fail("speech.config is not JSON");
        const format = (
          JSON.parse(body) as { context?: { synthesis?: { audio?: { outputFormat?: string } } } }
        ).context?.synthesis?.audio?.outputFormat;
        if (format !== "audio-24khz-48kbitrate-mono-mp3") return fail(`format ${format}`);
        configured = true;
        return;
      }
      if (headers["Path"] !== "ssml") return fail(`unknown path ${headers["Path"]}`);
      if (!configured) return fail("ssml before speech.config");
      if (headers["Content-Type"] !== "application/ssml+xml") return fail("ssml content type");
      const requestId = headers["X-RequestId"] ?? "";
      if (!/^[0-9a-f]{32}$/.test(requestId)) return fail("X-RequestId");
      const m = SSML.exec(body);
      if (!m) return fail(`malformed SSML: ${body.slice(0, 200)}`);
      fake.turns.push({
        voice: `${m[1]}-${m[2]}`,
        pitch: m[3] ?? "",
        rate: m[4] ?? "",
        volume: m[5] ?? "",
        text: decodeXml(m[6] ?? ""),
        ssml: body,
      });
      const meta = (path: string, json: string) =>
        ws.send(
          `X-RequestId:${requestId}\r\nContent-Type:application/json; charset=utf-8\r\nPath:${path}\r\n\r\n${json}`,
        );
      meta("turn.start", '{"context":{"serviceTag":"fake"}}');
      if (fake.mode === "endless-audio") {
        let sent = 0;
        const chunk = Buffer.alloc(60_000, 0x55);
        const pump = () => {
          while (ws.readyState === ws.OPEN && sent < 64 * 1024 * 1024 && ws.bufferedAmount < 1_000_000) {
            ws.send(audioFrame(requestId, chunk));
            sent += chunk.length;
          }
          if (ws.readyState === ws.OPEN && sent < 64 * 1024 * 1024) setTimeout(pump, 5);
        };
        pump();
        return;
      }
      for (let i = 0; i < audio.length; i += 4096)
        ws.send(audioFrame(requestId, audio.subarray(i, i + 4096)));
      meta("audio.metadata", '{"Metadata":[{"Type":"WordBoundary","Data":{"Offset":1000000}}]}');
      if (fake.mode === "no-turn-end") return;
      meta("turn.end", "{}");
    });
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(fake, {
    url: `ws://127.0.0.1:${port}${PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        for (const socket of sockets) socket.destroy();
        wss.close();
        server.close(() => resolve());
      }),
  });
}
