import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  haCallServiceTool,
  haGetStateTool,
  haListEntitiesTool,
  haListServicesTool,
  homeAssistantTools,
} from "../../../src/tools/homeassistant.js";
import { makeToolContext } from "../../support/tool-context.js";
import { type HttpFake, jsonBody, sendJson, startHttpFake } from "./media/http-fake.js";

const TOKEN = "good-token";

const STATES = [
  {
    entity_id: "light.kitchen",
    state: "off",
    attributes: { friendly_name: "Kitchen Light", brightness: null },
  },
  {
    entity_id: "light.living_room",
    state: "on",
    attributes: { friendly_name: "Living Room Lamp", brightness: 180 },
  },
  {
    entity_id: "sensor.outdoor",
    state: "12.5",
    attributes: { friendly_name: "Outdoor Temp", area: "Garden" },
  },
];

const SERVICES = [
  {
    domain: "light",
    services: {
      turn_on: {
        name: "Turn on",
        description: "Turns a light on.",
        fields: { brightness: { description: "0-255", selector: { number: {} } } },
      },
      toggle: { description: "Toggles a light." },
    },
  },
  { domain: "todo", services: { get_items: { description: "Lists items." } } },
];

let ha: HttpFake;

beforeAll(async () => {
  ha = await startHttpFake((req, res) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401, { "content-type": "text/plain" });
      res.end("401: Unauthorized");
      return;
    }
    const path = req.path;
    if (req.method === "GET" && path === "/api/states") return sendJson(res, 200, STATES);
    if (req.method === "GET" && path.startsWith("/api/states/")) {
      const found = STATES.find((s) => s.entity_id === path.slice("/api/states/".length));
      return found
        ? sendJson(res, 200, { ...found, last_changed: "2026-01-01T00:00:00Z" })
        : sendJson(res, 404, { message: "Entity not found." });
    }
    if (req.method === "GET" && path === "/api/services") return sendJson(res, 200, SERVICES);
    if (req.method === "POST" && path === "/api/services/light/turn_on?return_response") {
      return sendJson(res, 400, {
        message: "Service does not support responses. Remove return_response from request.",
      });
    }
    if (req.method === "POST" && path === "/api/services/light/turn_on") {
      return sendJson(res, 200, [{ entity_id: "light.kitchen", state: "on", attributes: {} }]);
    }
    if (req.method === "POST" && path === "/api/services/todo/get_items?return_response") {
      return sendJson(res, 200, {
        changed_states: [],
        service_response: { "todo.shopping": { items: [{ summary: "milk" }] } },
      });
    }
    res.writeHead(400, { "content-type": "text/plain" });
    res.end("400: Bad Request");
  });
});

afterAll(async () => {
  await ha.close();
});

beforeEach(() => {
  ha.requests.length = 0;
});

const ctxWith = (env: Record<string, string> = {}) =>
  makeToolContext({ env: { PATH: process.env.PATH ?? "", HASS_URL: ha.url, HASS_TOKEN: TOKEN, ...env } });

describe("Home Assistant tools", () => {
  it("lists entities of one domain, trimmed to id, state and name, with the bearer token", async () => {
    const result = await haListEntitiesTool.handler({ domain: "light" }, ctxWith());
    expect(result).toEqual({
      result: {
        count: 2,
        entities: [
          { entity_id: "light.kitchen", state: "off", friendly_name: "Kitchen Light" },
          { entity_id: "light.living_room", state: "on", friendly_name: "Living Room Lamp" },
        ],
      },
    });
    expect(ha.requests[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("filters by area through the friendly name or the area attribute", async () => {
    const living = (await haListEntitiesTool.handler({ area: "living room" }, ctxWith())) as {
      result: { entities: { entity_id: string }[] };
    };
    expect(living.result.entities.map((e) => e.entity_id)).toEqual(["light.living_room"]);
    const garden = (await haListEntitiesTool.handler({ area: "garden" }, ctxWith())) as {
      result: { entities: { entity_id: string }[] };
    };
    expect(garden.result.entities.map((e) => e.entity_id)).toEqual(["sensor.outdoor"]);
  });

  it("gets one entity's state and says clearly when it does not exist", async () => {
    const state = (await haGetStateTool.handler({ entity_id: "light.living_room" }, ctxWith())) as {
      result: Record<string, unknown>;
    };
    expect(state.result).toMatchObject({
      entity_id: "light.living_room",
      state: "on",
      attributes: { brightness: 180 },
      last_changed: "2026-01-01T00:00:00Z",
    });
    await expect(haGetStateTool.handler({ entity_id: "light.garage" }, ctxWith())).rejects.toThrow(
      /no entity "light\.garage".*ha_list_entities/,
    );
  });

  it("refuses a malformed entity id before any request", async () => {
    await expect(haGetStateTool.handler({ entity_id: "../config" }, ctxWith())).rejects.toThrow(
      /not an entity id/,
    );
    expect(ha.requests).toHaveLength(0);
  });

  it("explains a rejected token", async () => {
    await expect(haListEntitiesTool.handler({}, ctxWith({ HASS_TOKEN: "stale" }))).rejects.toThrow(
      /refused the token \(HTTP 401\).*long-lived access token/,
    );
  });

  it("lists services compactly, optionally for one domain", async () => {
    const result = await haListServicesTool.handler({ domain: "light" }, ctxWith());
    expect(result).toEqual({
      result: {
        count: 1,
        domains: [
          {
            domain: "light",
            services: {
              turn_on: { description: "Turns a light on.", fields: { brightness: "0-255" } },
              toggle: { description: "Toggles a light." },
            },
          },
        ],
      },
    });
  });

  it("calls a service with entity and data, retrying without return_response when HA refuses it", async () => {
    const result = await haCallServiceTool.handler(
      { domain: "light", service: "turn_on", entity_id: "light.kitchen", data: '{"brightness": 200}' },
      ctxWith(),
    );
    expect(result).toEqual({
      result: {
        success: true,
        service: "light.turn_on",
        affected_entities: [{ entity_id: "light.kitchen", state: "on" }],
      },
    });
    expect(ha.requests.map((r) => r.path)).toEqual([
      "/api/services/light/turn_on?return_response",
      "/api/services/light/turn_on",
    ]);
    expect(jsonBody(ha.requests[1])).toEqual({ brightness: 200, entity_id: "light.kitchen" });
  });

  it("returns a query service's response data", async () => {
    const result = (await haCallServiceTool.handler(
      { domain: "todo", service: "get_items", entity_id: "todo.shopping", data: {} },
      ctxWith(),
    )) as { result: Record<string, unknown> };
    expect(result.result["response"]).toEqual({ "todo.shopping": { items: [{ summary: "milk" }] } });
  });

  it("refuses blocked domains and path tricks without contacting Home Assistant", async () => {
    await expect(
      haCallServiceTool.handler({ domain: "shell_command", service: "reboot" }, ctxWith()),
    ).rejects.toThrow(/"shell_command" domain is blocked/);
    await expect(
      haCallServiceTool.handler({ domain: "hassio", service: "host_shutdown" }, ctxWith()),
    ).rejects.toThrow(/blocked/);
    await expect(
      haCallServiceTool.handler({ domain: "light/../shell_command", service: "x" }, ctxWith()),
    ).rejects.toThrow(/not a service domain/);
    expect(ha.requests).toHaveLength(0);
  });

  it("names an unknown service and bad data clearly", async () => {
    await expect(
      haCallServiceTool.handler({ domain: "light", service: "explode" }, ctxWith()),
    ).rejects.toThrow(/refused light\.explode \(HTTP 400.*ha_list_services/);
    await expect(
      haCallServiceTool.handler({ domain: "light", service: "turn_on", data: "{brightness: }" }, ctxWith()),
    ).rejects.toThrow(/"data" is not valid JSON/);
  });

  it("says so when Home Assistant cannot be reached", async () => {
    const closed = await startHttpFake(() => undefined);
    const url = closed.url;
    await closed.close();
    await expect(haListEntitiesTool.handler({}, ctxWith({ HASS_URL: url }))).rejects.toThrow(
      /cannot reach Home Assistant at http:\/\/127\.0\.0\.1/,
    );
  });

  it("is offered only when HASS_TOKEN is set", () => {
    const config = {};
    for (const tool of homeAssistantTools) {
      expect(tool.check?.({ env: { HASS_TOKEN: "t" }, config })).toBe(true);
      expect(tool.check?.({ env: { HASS_URL: "http://ha.lan:8123" }, config })).toBe(false);
    }
  });
});
