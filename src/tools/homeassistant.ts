/**
 * Home Assistant over its REST API: list entities, read one entity's state, list services, call a
 * service. `HASS_URL` (default http://homeassistant.local:8123, as Python Hermes) and `HASS_TOKEN`
 * (a long-lived access token) come from the environment or the home's `.env`. The URL is the
 * user's own server, usually on the LAN, so the private-address guard does not apply to it.
 * Service domains that run code or make requests from the HA host are refused, as upstream does.
 */
import { Type } from "@sinclair/typebox";
import description from "./homeassistant.md";
import { apiErrorMessage, envValue, fetchWithTimeout, toolEnv } from "./media/shared.js";
import { defineTool, type ToolContext } from "./types.js";

export const DEFAULT_HASS_URL = "http://homeassistant.local:8123";

/** HA has no per-service access control, so these are refused here: each runs code or fetches URLs. */
export const BLOCKED_DOMAINS: readonly string[] = [
  "shell_command",
  "command_line",
  "python_script",
  "pyscript",
  "hassio",
  "rest_command",
];

const ENTITY_ID = /^[a-z_][a-z0-9_]*\.[a-z0-9_]+$/;
/** Domain and service names go into the URL path, so nothing but [a-z0-9_] may reach it. */
const SERVICE_NAME = /^[a-z][a-z0-9_]*$/;
const TIMEOUT_MS = 15_000;

const check = (ctx: { env: Readonly<Record<string, string | undefined>> }) =>
  envValue(ctx.env, "HASS_TOKEN") !== undefined;

/** HA answered with an error status; the caller may name what was missing or wrong. */
class HaHttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(`Home Assistant answered HTTP ${status}: ${detail}`);
  }
}

/** One REST call; JSON back. Auth failures get a fix-it message; other errors are `HaHttpError`. */
async function haRequest(
  ctx: ToolContext,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
): Promise<unknown> {
  const env = toolEnv(ctx);
  const token = envValue(env, "HASS_TOKEN");
  if (!token)
    throw new Error("HASS_TOKEN is not set: add a Home Assistant long-lived access token to ~/.hermes/.env.");
  const base = (envValue(env, "HASS_URL") ?? DEFAULT_HASS_URL).replace(/\/+$/, "");
  const response = await fetchWithTimeout(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    timeoutMs: TIMEOUT_MS,
    label: "Home Assistant",
    signal: ctx.signal,
  });
  const text = await response.text();
  if (response.status === 401 || response.status === 403) {
    throw new Error(
      `Home Assistant at ${base} refused the token (HTTP ${response.status}): HASS_TOKEN is wrong, expired or revoked. Create a long-lived access token in your Home Assistant profile and set HASS_TOKEN.`,
    );
  }
  if (response.status >= 400) throw new HaHttpError(response.status, apiErrorMessage(text));
  try {
    return text.trim() === "" ? null : JSON.parse(text);
  } catch {
    throw new Error(
      `Home Assistant at ${base} sent something that is not JSON (is HASS_URL the right address?).`,
    );
  }
}

type Rec = Record<string, unknown>;
const asRecord = (value: unknown): Rec =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Rec) : {};
const asList = (value: unknown): Rec[] => (Array.isArray(value) ? value.map(asRecord) : []);

function friendlyName(state: Rec): string {
  const name = asRecord(state["attributes"])["friendly_name"];
  return typeof name === "string" ? name : "";
}

/** Entities filtered by domain and by area (matched against the friendly name or an `area` attribute). */
export function summariseEntities(states: unknown, domain?: string, area?: string): Rec {
  let list = asList(states);
  if (domain) list = list.filter((s) => String(s["entity_id"] ?? "").startsWith(`${domain}.`));
  if (area) {
    const wanted = area.toLowerCase();
    list = list.filter((s) => {
      const areaAttr = asRecord(s["attributes"])["area"];
      return (
        friendlyName(s).toLowerCase().includes(wanted) ||
        (typeof areaAttr === "string" && areaAttr.toLowerCase().includes(wanted))
      );
    });
  }
  const entities = list.map((s) => ({
    entity_id: String(s["entity_id"] ?? ""),
    state: String(s["state"] ?? ""),
    friendly_name: friendlyName(s),
  }));
  return { count: entities.length, entities };
}

export const haListEntitiesTool = defineTool({
  name: "ha_list_entities",
  toolset: "homeassistant",
  description:
    "List Home Assistant entities (id, state, friendly name), optionally only one domain (light, switch, climate, sensor, cover, media_player...) or one area/room.",
  parameters: Type.Object({
    domain: Type.Optional(Type.String({ description: "Only this domain, e.g. 'light'." })),
    area: Type.Optional(
      Type.String({ description: "Only entities whose name or area mentions this, e.g. 'kitchen'." }),
    ),
  }),
  parallelSafe: true,
  sideEffectFree: true,
  emoji: "🏠",
  check,
  async handler(args, ctx) {
    const states = await haRequest(ctx, "GET", "/api/states");
    return { result: summariseEntities(states, args.domain?.trim(), args.area?.trim()) };
  },
});

export const haGetStateTool = defineTool({
  name: "ha_get_state",
  toolset: "homeassistant",
  description:
    "Get one Home Assistant entity's full state: value, all attributes (brightness, temperature, setpoint...) and when it last changed.",
  parameters: Type.Object({
    entity_id: Type.String({ description: "e.g. 'light.living_room' or 'sensor.outdoor_temperature'." }),
  }),
  parallelSafe: true,
  sideEffectFree: true,
  emoji: "🏠",
  check,
  async handler(args, ctx) {
    const id = args.entity_id.trim();
    if (!ENTITY_ID.test(id)) {
      throw new Error(`"${id}" is not an entity id (domain.object_id, e.g. light.kitchen).`);
    }
    let data: Rec;
    try {
      data = asRecord(await haRequest(ctx, "GET", `/api/states/${id}`));
    } catch (error) {
      if (error instanceof HaHttpError && error.status === 404) {
        throw new Error(`Home Assistant has no entity "${id}". Use ha_list_entities to see the valid ids.`);
      }
      throw error;
    }
    return {
      result: {
        entity_id: data["entity_id"] ?? id,
        state: data["state"],
        attributes: asRecord(data["attributes"]),
        last_changed: data["last_changed"] ?? null,
        last_updated: data["last_updated"] ?? null,
      },
    };
  },
});

/** Services per domain with their description and field descriptions only (the rest is noise). */
export function summariseServices(services: unknown, domain?: string): Rec {
  let list = asList(services);
  if (domain) list = list.filter((d) => d["domain"] === domain);
  const domains = list.map((d) => {
    const out: Rec = {};
    for (const [name, info] of Object.entries(asRecord(d["services"]))) {
      const entry: Rec = { description: String(asRecord(info)["description"] ?? "") };
      const fields = asRecord(asRecord(info)["fields"]);
      const described: Rec = {};
      for (const [field, spec] of Object.entries(fields)) {
        if (spec && typeof spec === "object") described[field] = String(asRecord(spec)["description"] ?? "");
      }
      if (Object.keys(described).length > 0) entry["fields"] = described;
      out[name] = entry;
    }
    return { domain: String(d["domain"] ?? ""), services: out };
  });
  return { count: domains.length, domains };
}

export const haListServicesTool = defineTool({
  name: "ha_list_services",
  toolset: "homeassistant",
  description:
    "List the Home Assistant services (actions) you can call, per domain, with their parameters. Use it to learn how to control what ha_list_entities found.",
  parameters: Type.Object({
    domain: Type.Optional(Type.String({ description: "Only this domain, e.g. 'climate'." })),
  }),
  parallelSafe: true,
  sideEffectFree: true,
  emoji: "🏠",
  check,
  async handler(args, ctx) {
    return { result: summariseServices(await haRequest(ctx, "GET", "/api/services"), args.domain?.trim()) };
  },
});

function parseData(data: unknown): Rec | undefined {
  if (data === undefined || data === null) return undefined;
  if (typeof data === "string") {
    if (data.trim() === "") return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch (error) {
      throw new Error(
        `"data" is not valid JSON (${(error as Error).message}); pass an object such as {"brightness": 128}.`,
      );
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new Error(`"data" must be a JSON object such as {"brightness": 128}.`);
    }
    return parsed as Rec;
  }
  if (typeof data === "object" && !Array.isArray(data)) return data as Rec;
  throw new Error(`"data" must be a JSON object such as {"brightness": 128}.`);
}

function serviceResult(domain: string, service: string, result: unknown): Rec {
  // With ?return_response HA wraps the answer; without it the body is the list of changed states.
  const wrapped = asRecord(result);
  const changed = Array.isArray(result) ? result : wrapped["changed_states"];
  const out: Rec = {
    success: true,
    service: `${domain}.${service}`,
    affected_entities: asList(changed).map((s) => ({
      entity_id: String(s["entity_id"] ?? ""),
      state: String(s["state"] ?? ""),
    })),
  };
  if (wrapped["service_response"] !== undefined) out["response"] = wrapped["service_response"];
  return out;
}

export const haCallServiceTool = defineTool({
  name: "ha_call_service",
  toolset: "homeassistant",
  description,
  parameters: Type.Object({
    domain: Type.String({ description: "e.g. 'light', 'switch', 'climate', 'cover', 'scene'." }),
    service: Type.String({ description: "e.g. 'turn_on', 'toggle', 'set_temperature'." }),
    entity_id: Type.Optional(Type.String({ description: "Target entity, e.g. 'light.kitchen'." })),
    data: Type.Optional(
      Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })], {
        description: 'Extra service data, e.g. {"brightness": 200} or {"temperature": 21}.',
      }),
    ),
  }),
  parallelSafe: false,
  emoji: "🏠",
  check,
  async handler(args, ctx) {
    const domain = args.domain.trim();
    const service = args.service.trim();
    if (!SERVICE_NAME.test(domain))
      throw new Error(`"${domain}" is not a service domain (lowercase letters, digits, _).`);
    if (!SERVICE_NAME.test(service))
      throw new Error(`"${service}" is not a service name (lowercase letters, digits, _).`);
    if (BLOCKED_DOMAINS.includes(domain)) {
      throw new Error(
        `The "${domain}" domain is blocked: it can run commands or make requests from the Home Assistant host. Blocked domains: ${BLOCKED_DOMAINS.join(", ")}.`,
      );
    }
    const entityId = args.entity_id?.trim();
    if (entityId && !ENTITY_ID.test(entityId)) {
      throw new Error(`"${entityId}" is not an entity id (domain.object_id, e.g. light.kitchen).`);
    }
    const payload: Rec = { ...(parseData(args.data) ?? {}) };
    if (entityId) payload["entity_id"] = entityId;
    const path = `/api/services/${domain}/${service}`;
    let result: unknown;
    try {
      try {
        // Asking for the response makes query services (todo.get_items, weather.get_forecasts)
        // return data; services without one refuse it with a 400, so ask again plainly.
        result = await haRequest(ctx, "POST", `${path}?return_response`, payload);
      } catch (error) {
        if (!(error instanceof HaHttpError) || !/does not support responses/i.test(error.detail)) throw error;
        result = await haRequest(ctx, "POST", path, payload);
      }
    } catch (error) {
      // HA answers 400 for an unknown service as well as for bad data.
      if (error instanceof HaHttpError && (error.status === 404 || error.status === 400)) {
        throw new Error(
          `Home Assistant refused ${domain}.${service} (HTTP ${error.status}: ${error.detail}). The service may not exist or its data is invalid: check ha_list_services.`,
        );
      }
      throw error;
    }
    return { result: serviceResult(domain, service, result) };
  },
});

export const homeAssistantTools = [haListEntitiesTool, haGetStateTool, haListServicesTool, haCallServiceTool];
