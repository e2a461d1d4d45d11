/**
 * A loopback fake of the Atropos API server (NousResearch/atropos `atroposlib/api/server.py`): the
 * same routes, methods, request models and answers, validated as its pydantic models validate them
 * (a missing or mistyped field answers 422 with a `detail` list; a `ScoredData.messages` entry
 * without `role`/`content` too), gzip request bodies decompressed as its `GZipRequestMiddleware`
 * does. State follows the server: `/register` (the trainer) creates the queue, the first `/batch`
 * marks the trainer started, `/register-env` answers "wait for trainer to start" until then,
 * `/scored_data` queues a group (or buffers one whose size is not the env's group size).
 * Simplified: `/batch` takes whole groups from the front of the queue while they fit the batch
 * size (the server's heterogeneous packing finds the same batches for equal-sized groups); no
 * wandb, no ZMQ sidecar.
 *
 *   const atropos = await startFakeAtropos();
 *   await atropos.startTrainer({ batch_size: 4 });   // POST /register + GET /batch, as a trainer does
 *   // point an environment at atropos.url, then read atropos.scored / atropos.requests
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { gunzipSync } from "node:zlib";

type Json = Record<string, unknown>;
type FieldType =
  | "str"
  | "int"
  | "float"
  | "int[][]"
  | "float[]"
  | "float[][]"
  | "dict"
  | "dict[]"
  | "messages"
  | "any";
type Model = Record<string, { type: FieldType; optional?: boolean }>;

const REGISTRATION: Model = {
  wandb_group: { type: "str" },
  wandb_project: { type: "str" },
  batch_size: { type: "int" },
  max_token_len: { type: "int" },
  checkpoint_dir: { type: "str" },
  save_checkpoint_interval: { type: "int" },
  starting_step: { type: "int" },
  num_steps: { type: "int" },
};
const REGISTER_ENV: Model = {
  max_token_length: { type: "int" },
  desired_name: { type: "str" },
  weight: { type: "float" },
  group_size: { type: "int" },
  min_batch_allocation: { type: "float", optional: true },
};
const ENV_IDENTIFIER: Model = { env_id: { type: "int" } };
const SCORED_DATA: Model = {
  tokens: { type: "int[][]" },
  masks: { type: "int[][]" },
  scores: { type: "float[]" },
  advantages: { type: "float[][]", optional: true },
  ref_logprobs: { type: "float[][]", optional: true },
  messages: { type: "messages", optional: true },
  generation_params: { type: "dict", optional: true },
  inference_logprobs: { type: "float[][]", optional: true },
  overrides: { type: "dict[]", optional: true },
  group_overrides: { type: "dict", optional: true },
  images: { type: "any", optional: true },
  env_id: { type: "int", optional: true },
};

const isInt = (v: unknown) => typeof v === "number" && Number.isInteger(v);
const isNum = (v: unknown) => typeof v === "number" && Number.isFinite(v);
const isDict = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);
const listOf = (v: unknown, each: (x: unknown) => boolean) => Array.isArray(v) && v.every(each);

function typeOk(type: FieldType, v: unknown): string | undefined {
  switch (type) {
    case "str":
      return typeof v === "string" ? undefined : "Input should be a valid string";
    case "int":
      return isInt(v) ? undefined : "Input should be a valid integer";
    case "float":
      return isNum(v) ? undefined : "Input should be a valid number";
    case "int[][]":
      return listOf(v, (row) => listOf(row, isInt))
        ? undefined
        : "Input should be a list of lists of integers";
    case "float[]":
      return listOf(v, isNum) ? undefined : "Input should be a list of numbers";
    case "float[][]":
      return listOf(v, (row) => listOf(row, isNum))
        ? undefined
        : "Input should be a list of lists of numbers";
    case "dict":
      return isDict(v) ? undefined : "Input should be a valid dictionary";
    case "dict[]":
      return listOf(v, isDict) ? undefined : "Input should be a list of dictionaries";
    case "messages":
      if (!listOf(v, (conv) => listOf(conv, isDict)))
        return "Input should be a list of lists of dictionaries";
      for (const conv of v as Json[][]) {
        for (const msg of conv) {
          if (!("role" in msg) || !("content" in msg))
            return "Value error, Message must have 'role' and 'content' fields";
        }
      }
      return undefined;
    case "any":
      return undefined;
  }
}

/** Pydantic-style validation: the `detail` list of a 422, or undefined when the body fits. */
export function validate(model: Model, body: unknown, where: string[] = ["body"]): Json[] | undefined {
  if (!isDict(body))
    return [{ type: "model_attributes_type", loc: where, msg: "Input should be a valid dictionary" }];
  const detail: Json[] = [];
  for (const [field, spec] of Object.entries(model)) {
    const value = (body as Json)[field];
    if (value === undefined) {
      if (!spec.optional) detail.push({ type: "missing", loc: [...where, field], msg: "Field required" });
      continue;
    }
    if (value === null && spec.optional) continue;
    const problem = typeOk(spec.type, value);
    if (problem) detail.push({ type: "type_error", loc: [...where, field], msg: problem, input: value });
  }
  return detail.length > 0 ? detail : undefined;
}

export interface RecordedAtroposRequest {
  method: string;
  path: string;
  /** Content-Encoding of the request body ("gzip" when compressed). */
  encoding: string | undefined;
  body: unknown;
}

interface EnvEntry {
  max_context_len: number;
  weight: number;
  desired_name: string;
  real_name: string;
  registered_id: number;
  connected: boolean;
  min_batch_allocation: number | null;
  group_size: number;
}

export interface FakeAtropos {
  readonly url: string;
  readonly requests: RecordedAtroposRequest[];
  /** Every accepted `ScoredData` payload, in arrival order (also those only buffered). */
  readonly scored: Json[];
  readonly envs: EnvEntry[];
  /** Registers a trainer (`POST /register`) and pulls once (`GET /batch`), so envs may register. */
  startTrainer(registration?: Partial<Record<keyof typeof REGISTRATION, unknown>>): Promise<void>;
  /** Resolves once `count` groups were accepted by `/scored_data` or `/scored_data_list`. */
  waitForScored(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeAtropos(): Promise<FakeAtropos> {
  const requests: RecordedAtroposRequest[] = [];
  const scored: Json[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  // app.state, as the server keeps it.
  let state: {
    queue: Json[];
    batchsize: number;
    max_token_len: number;
    step: number;
    checkpoint_dir: string;
    save_checkpoint_interval: number;
    num_steps: number;
    curr_batch: Json[][];
    started: boolean;
    envs: EnvEntry[];
    buffer: Map<number, Json[]>;
    group: string;
    project: string;
    latest?: Json;
  } | null = null;
  let requesters: number[] = [];

  const send = (res: ServerResponse, status: number, body: unknown, plain = false) => {
    const text = plain ? String(body) : JSON.stringify(body);
    res.writeHead(status, { "content-type": plain ? "text/plain; charset=utf-8" : "application/json" });
    res.end(text);
  };
  const notify = () => {
    for (const w of [...waiters]) {
      if (scored.length >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };

  const acceptScored = (data: Json): "received" | "buffered" => {
    scored.push(data);
    notify();
    if (!state) throw new Error("no state");
    const envId = data["env_id"];
    if (typeof envId === "number" && envId < state.envs.length) {
      const expected = state.envs[envId]?.group_size ?? 1;
      if ((data["tokens"] as unknown[]).length !== expected) {
        const buffer = state.buffer.get(envId) ?? [];
        buffer.push(data);
        state.buffer.set(envId, buffer);
        return "buffered";
      }
    }
    state.queue.push(data);
    state.latest = data;
    return "received";
  };

  const statusEnv = (envId: number): Json => {
    if (!state) throw new Error("no state");
    const env = state.envs[envId];
    if (!env) throw new Error(`list index out of range: ${envId}`);
    const total = state.envs
      .filter((e) => e.connected)
      .reduce((s, e) => s + e.max_context_len * Math.max(0, e.weight), 0);
    let groupSize = env.group_size;
    const weight = Math.max(0.01, (env.max_context_len * env.weight) / total);
    let minTotal = 0;
    for (const e of state.envs)
      if (e.connected && e.min_batch_allocation !== null) minTotal += e.min_batch_allocation;
    let maxGroup = 1;
    let selfSeqs = 0;
    let currEnvSeqs = 0;
    const others = new Map<unknown, number>();
    for (const item of state.queue) {
      const n = (item["tokens"] as unknown[]).length;
      maxGroup = Math.max(maxGroup, n);
      if (item["env_id"] === envId) {
        groupSize = Math.max(groupSize, n);
        selfSeqs += n;
        currEnvSeqs += n;
      } else others.set(item["env_id"], (others.get(item["env_id"]) ?? 0) + n);
    }
    env.group_size = groupSize;
    let fromOthers = 0;
    if (maxGroup > 1) for (const n of others.values()) fromOthers += Math.ceil(n / maxGroup) * maxGroup;
    return {
      current_step: state.step,
      queue_size: Math.floor((currEnvSeqs + fromOthers) / groupSize),
      unallocated_fraction: 1 - Math.min(minTotal, 1),
      self_queue_size: Math.floor(selfSeqs / groupSize),
      max_group_size: maxGroup,
      env_weight: weight,
    };
  };

  const handle = (method: string, path: string, body: unknown, res: ServerResponse) => {
    const route = `${method} ${path}`;
    const invalid = (model: Model, value: unknown) => {
      const detail = validate(model, value);
      if (detail) send(res, 422, { detail });
      return detail !== undefined;
    };
    switch (route) {
      case "GET /":
        return send(res, 200, { message: "AtroposLib API" });
      case "POST /register": {
        if (invalid(REGISTRATION, body)) return;
        const r = body as Json;
        if (!state) {
          state = {
            queue: [],
            batchsize: r["batch_size"] as number,
            max_token_len: r["max_token_len"] as number,
            step: r["starting_step"] as number,
            checkpoint_dir: r["checkpoint_dir"] as string,
            save_checkpoint_interval: r["save_checkpoint_interval"] as number,
            num_steps: r["num_steps"] as number,
            curr_batch: [],
            started: false,
            envs: [],
            buffer: new Map(),
            group: r["wandb_group"] as string,
            project: r["wandb_project"] as string,
          };
        }
        const uuid = Math.floor(Math.random() * 2 ** 48);
        requesters.push(uuid);
        return send(res, 200, { uuid });
      }
      case "POST /register-env": {
        if (invalid(REGISTER_ENV, body)) return;
        if (!state?.started) return send(res, 200, { status: "wait for trainer to start" });
        const r = body as Json;
        const desired = r["desired_name"] as string;
        const realName = `${desired}_${state.envs.filter((e) => e.desired_name === desired).length}`;
        const id = state.envs.length;
        state.envs.push({
          max_context_len: r["max_token_length"] as number,
          weight: (r["weight"] as number | null) ?? 1,
          desired_name: desired,
          real_name: realName,
          registered_id: id,
          connected: true,
          min_batch_allocation: (r["min_batch_allocation"] as number | null | undefined) ?? null,
          group_size: r["group_size"] as number,
        });
        return send(res, 200, {
          status: "success",
          env_id: id,
          wandb_name: realName,
          checkpoint_dir: state.checkpoint_dir,
          starting_step: state.step,
          checkpoint_interval: state.save_checkpoint_interval,
          num_steps: state.num_steps,
        });
      }
      case "POST /disconnect-env": {
        if (invalid(ENV_IDENTIFIER, body)) return;
        const env = state?.envs[(body as Json)["env_id"] as number];
        if (!env) return send(res, 200, { status: "failure", error: "list index out of range" });
        env.connected = false;
        return send(res, 200, { status: "success" });
      }
      case "GET /wandb_info":
        return send(
          res,
          200,
          state
            ? { group: state.group, project: state.project, zmq_port: null }
            : { group: null, project: null, zmq_port: null },
        );
      case "GET /info":
        return send(
          res,
          200,
          state
            ? { batch_size: state.batchsize, max_token_len: state.max_token_len }
            : { batch_size: -1, max_token_len: -1 },
        );
      case "GET /batch": {
        if (!state) return send(res, 500, "Internal Server Error", true);
        state.started = true;
        if (state.curr_batch.length > 0) return send(res, 200, { batch: state.curr_batch.pop() });
        const batches: Json[][] = [];
        const sizeAt = (i: number): number =>
          ((state?.queue[i]?.["tokens"] as unknown[] | undefined) ?? []).length;
        for (;;) {
          let seqs = 0;
          let take = 0;
          while (take < state.queue.length && seqs + sizeAt(take) <= state.batchsize) {
            seqs += sizeAt(take);
            take++;
          }
          if (seqs !== state.batchsize) break;
          batches.push(state.queue.splice(0, take));
        }
        if (batches.length === 0) return send(res, 200, { batch: null });
        state.step += batches.length;
        state.curr_batch.push(...batches);
        return send(res, 200, { batch: state.curr_batch.pop() });
      }
      case "GET /latest_example":
        return send(
          res,
          200,
          state?.latest ?? {
            tokens: [],
            masks: [],
            scores: [],
            advantages: [],
            ref_logprobs: [],
            generation_params: [],
            inference_logprobs: [],
            messages: [],
            images: [],
          },
        );
      case "POST /scored_data": {
        if (invalid(SCORED_DATA, body)) return;
        if (!state) return send(res, 500, "Internal Server Error", true);
        const status = acceptScored(body as Json);
        if (status === "buffered") {
          const envId = (body as Json)["env_id"] as number;
          const size = (state.buffer.get(envId) ?? []).reduce(
            (s, g) => s + (g["tokens"] as unknown[]).length,
            0,
          );
          return send(res, 200, { status: "buffered", buffer_size: size });
        }
        return send(res, 200, { status: "received" });
      }
      case "POST /scored_data_list": {
        if (!Array.isArray(body))
          return send(res, 422, {
            detail: [{ type: "list_type", loc: ["body"], msg: "Input should be a valid list" }],
          });
        const detail = body.flatMap((item, i) => validate(SCORED_DATA, item, ["body", String(i)]) ?? []);
        if (detail.length > 0) return send(res, 422, { detail });
        if (!state) return send(res, 500, "Internal Server Error", true);
        for (const item of body) acceptScored(item as Json);
        return send(res, 200, { status: "received", groups_processed: body.length });
      }
      case "GET /status":
        return send(
          res,
          200,
          state
            ? { current_step: state.step, queue_size: state.queue.length }
            : { current_step: 0, queue_size: 0 },
        );
      case "GET /status-env": {
        if (invalid(ENV_IDENTIFIER, body)) return;
        if (!state) return send(res, 500, "Internal Server Error", true);
        try {
          return send(res, 200, statusEnv((body as Json)["env_id"] as number));
        } catch {
          return send(res, 500, "Internal Server Error", true);
        }
      }
      case "GET /reset_data":
        state = null;
        requesters = [];
        return send(res, 200, "Reset successful", true);
      default:
        return send(res, 404, { detail: "Not Found" });
    }
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let raw = Buffer.concat(chunks);
      const encoding = req.headers["content-encoding"];
      if (encoding?.toLowerCase().includes("gzip") && raw.length > 0) {
        try {
          raw = gunzipSync(raw);
        } catch {
          return send(res, 400, "Invalid gzip payload", true);
        }
      }
      let body: unknown;
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw.toString("utf8"));
        } catch {
          requests.push({
            method: req.method ?? "",
            path: req.url ?? "",
            encoding,
            body: raw.toString("utf8"),
          });
          return send(res, 422, {
            detail: [{ type: "json_invalid", loc: ["body", 0], msg: "JSON decode error" }],
          });
        }
      }
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      requests.push({ method: req.method ?? "", path, encoding, body });
      handle(req.method ?? "GET", path, body, res);
    });
  });
  const sockets = new Set<Socket>();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    requests,
    scored,
    get envs() {
      return state?.envs ?? [];
    },
    async startTrainer(registration = {}) {
      const body = {
        wandb_group: "test",
        wandb_project: "hermes",
        batch_size: 4,
        max_token_len: 65536,
        checkpoint_dir: "/tmp/ckpt",
        save_checkpoint_interval: 10,
        starting_step: 0,
        num_steps: 100,
        ...registration,
      };
      const r = await fetch(`${url}/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (!r.ok) throw new Error(`fake atropos /register: ${r.status} ${await r.text()}`);
      await fetch(`${url}/batch`);
    },
    waitForScored(count) {
      if (scored.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
