/**
 * A loopback stand-in for the Google Cloud metadata server (`metadata.google.internal`), reached
 * through `GCE_METADATA_HOST=127.0.0.1:PORT` as Google's libraries allow. It speaks the two paths
 * Hermes reads, as the real server does:
 *
 * - `GET /computeMetadata/v1/instance/service-accounts/default/token` → `{"access_token":"ya29…",
 *   "expires_in":…,"token_type":"Bearer"}`;
 * - `GET /computeMetadata/v1/project/project-id` → the project id as plain text.
 *
 * A request without `Metadata-Flavor: Google` gets the real server's 403; every answer carries
 * `Metadata-Flavor: Google`. `mode` scripts a machine with no service account (404), a server that
 * never answers, and an impostor that answers without the header.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export type MetadataMode = "ok" | "no_account" | "hang" | "impostor";

export interface MetadataRequest {
  path: string;
  flavor: string | undefined;
}

export interface FakeGceMetadata {
  /** `127.0.0.1:PORT`, the value for GCE_METADATA_HOST. */
  readonly host: string;
  readonly requests: MetadataRequest[];
  /** Every access token handed out, in order. */
  readonly issued: string[];
  mode: MetadataMode;
  close(): Promise<void>;
}

const ROOT = "/computeMetadata/v1";

export async function startFakeGceMetadata(options: { projectId: string }): Promise<FakeGceMetadata> {
  const sockets = new Set<Socket>();
  const requests: MetadataRequest[] = [];
  const issued: string[] = [];
  const state = { mode: "ok" as MetadataMode };
  let counter = 0;

  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, {
      "content-type": type,
      ...(state.mode === "impostor" ? {} : { "metadata-flavor": "Google" }),
    });
    res.end(body);
  };

  const server = createServer((req, res) => {
    const flavor = req.headers["metadata-flavor"];
    const path = (req.url ?? "").split("?")[0] ?? "";
    requests.push({ path: req.url ?? "", flavor: typeof flavor === "string" ? flavor : undefined });
    if (state.mode === "hang") return;
    if (flavor !== "Google") {
      send(res, 403, "text/html", 'Missing required header "Metadata-Flavor": "Google"');
      return;
    }
    if (req.method !== "GET") {
      send(res, 405, "text/plain", "Method not allowed");
      return;
    }
    if (path === `${ROOT}/instance/service-accounts/default/token`) {
      if (state.mode === "no_account") {
        send(res, 404, "text/html", "Not Found");
        return;
      }
      counter++;
      const token = `ya29.c.metadata-${counter}-${Math.random().toString(36).slice(2, 10)}`;
      issued.push(token);
      send(
        res,
        200,
        "application/json",
        JSON.stringify({ access_token: token, expires_in: 3599, token_type: "Bearer" }),
      );
      return;
    }
    if (path === `${ROOT}/project/project-id`) {
      send(res, 200, "application/text", options.projectId);
      return;
    }
    send(res, 404, "text/html", "Not Found");
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    requests,
    issued,
    get mode() {
      return state.mode;
    },
    set mode(value: MetadataMode) {
      state.mode = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
