/**
 * A client for the Atropos API server, the routes an environment uses (`atroposlib/api/server.py`):
 * `POST /register-env`, `GET /info`, `GET /status-env` (a GET with a JSON body, as the server
 * declares it, which `fetch` cannot send: hence node:http), `POST /scored_data`,
 * `POST /scored_data_list`, `POST /disconnect-env`, `GET /status`. Bodies of 1 KiB and more go
 * gzip-compressed when that is smaller, as `BaseEnv._post_json_with_compression` sends them.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { gzipSync } from "node:zlib";
import type { ScoredDataGroup } from "./types.js";

export class AtroposError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "AtroposError";
  }
}

/** `POST /register-env` body (`RegisterEnv`). */
export interface RegisterEnvRequest {
  max_token_length: number;
  desired_name: string;
  weight: number;
  group_size: number;
  min_batch_allocation?: number | null;
}

/** `POST /register-env` answer once the trainer has started. */
export interface RegisterEnvResult {
  status: string;
  env_id: number;
  wandb_name: string;
  checkpoint_dir: string;
  starting_step: number;
  checkpoint_interval: number;
  num_steps: number;
}

/** `GET /status-env` answer. */
export interface EnvStatus {
  current_step: number;
  queue_size: number;
  unallocated_fraction?: number;
  self_queue_size?: number;
  max_group_size?: number;
  env_weight: number;
}

/** Largest answer read from the server: a status line is tiny; anything bigger is not Atropos. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const GZIP_MIN_BYTES = 1024;

export interface AtroposClientOptions {
  /** Per request; default 30 s. */
  timeoutMs?: number;
}

export class AtroposClient {
  private readonly base: URL;
  private readonly timeoutMs: number;

  constructor(apiUrl: string, options: AtroposClientOptions = {}) {
    let url: URL;
    try {
      url = new URL(apiUrl);
    } catch {
      throw new AtroposError(
        `--api-url ${JSON.stringify(apiUrl)} is not a URL; give e.g. http://localhost:8000.`,
      );
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new AtroposError(`--api-url must be http(s), got ${url.protocol}`);
    }
    this.base = url;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  get url(): string {
    return this.base.toString().replace(/\/$/, "");
  }

  /** Registers the environment; `status` is "wait for trainer to start" until the trainer pulled a batch. */
  async registerEnv(
    body: RegisterEnvRequest,
    signal?: AbortSignal,
  ): Promise<RegisterEnvResult | { status: string }> {
    return (await this.call("POST", "/register-env", body, signal)) as RegisterEnvResult | { status: string };
  }

  /** The trainer's batch size and token limit (-1 each before a trainer registered). */
  async info(signal?: AbortSignal): Promise<{ batch_size: number; max_token_len: number }> {
    const data = (await this.call("GET", "/info", undefined, signal)) as Record<string, unknown>;
    return {
      batch_size: numberOr(data["batch_size"], -1),
      max_token_len: numberOr(data["max_token_len"], -1),
    };
  }

  async statusEnv(envId: number, signal?: AbortSignal): Promise<EnvStatus> {
    const data = (await this.call("GET", "/status-env", { env_id: envId }, signal)) as Record<
      string,
      unknown
    >;
    if (typeof data["current_step"] !== "number" || typeof data["queue_size"] !== "number") {
      throw new AtroposError(`GET /status-env answered without current_step/queue_size: ${preview(data)}`);
    }
    return data as unknown as EnvStatus;
  }

  async sendScoredData(group: ScoredDataGroup, signal?: AbortSignal): Promise<Record<string, unknown>> {
    return (await this.call("POST", "/scored_data", group, signal)) as Record<string, unknown>;
  }

  async sendScoredDataList(
    groups: ScoredDataGroup[],
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    return (await this.call("POST", "/scored_data_list", groups, signal)) as Record<string, unknown>;
  }

  async disconnectEnv(envId: number, signal?: AbortSignal): Promise<void> {
    await this.call("POST", "/disconnect-env", { env_id: envId }, signal);
  }

  private call(method: "GET" | "POST", path: string, body: unknown, signal?: AbortSignal): Promise<unknown> {
    const url = new URL(
      path.replace(/^\//, ""),
      this.base.toString().endsWith("/") ? this.base : `${this.base}/`,
    );
    const headers: Record<string, string> = { accept: "application/json" };
    let payload: Buffer | undefined;
    if (body !== undefined) {
      const json = Buffer.from(JSON.stringify(body), "utf8");
      headers["content-type"] = "application/json";
      payload = json;
      if (json.length >= GZIP_MIN_BYTES) {
        const zipped = gzipSync(json);
        if (zipped.length < json.length) {
          payload = zipped;
          headers["content-encoding"] = "gzip";
        }
      }
      headers["content-length"] = String(payload.length);
    }
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(
        url,
        { method, headers, timeout: this.timeoutMs, ...(signal ? { signal } : {}) },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) {
              req.destroy(
                new AtroposError(`${method} ${path}: the answer is over ${MAX_ANSWER_BYTES} bytes`),
              );
              return;
            }
            chunks.push(chunk);
          });
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            const status = res.statusCode ?? 0;
            if (status >= 400) {
              reject(
                new AtroposError(`${method} ${path} answered HTTP ${status}: ${text.slice(0, 500)}`, status),
              );
              return;
            }
            try {
              resolve(text ? JSON.parse(text) : {});
            } catch {
              // /reset_data answers plain text; nothing we call does, but an odd proxy might.
              resolve({ text });
            }
          });
        },
      );
      req.on("timeout", () =>
        req.destroy(
          new AtroposError(`${method} ${path}: no answer from ${this.url} in ${this.timeoutMs} ms`),
        ),
      );
      req.on("error", (error) => {
        if (error instanceof AtroposError) reject(error);
        else if (signal?.aborted) reject(signal.reason ?? error);
        else reject(new AtroposError(`${method} ${path} at ${this.url} failed: ${error.message}`));
      });
      req.end(payload);
    });
  }
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function preview(value: unknown): string {
  return JSON.stringify(value).slice(0, 200);
}
