import { describe, expect, it } from "vitest";
import { FetchHeaders, FetchResponse, FormDataCheck } from "../../../src/util/fetch-classes.js";

function streamOf(...parts: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of parts) controller.enqueue(new TextEncoder().encode(part));
      controller.close();
    },
  });
}

/** What a caller can observe of a Headers object, to compare ours with the platform's. */
function observe(h: Headers | FetchHeaders): unknown {
  return {
    entries: [...h],
    keys: [...h.keys()],
    values: [...h.values()],
    get: [h.get("content-type"), h.get("X-Multi"), h.get("absent")],
    has: [h.has("CONTENT-TYPE"), h.has("absent")],
    cookies: h.getSetCookie(),
  };
}

describe("FetchHeaders behaves as the platform's Headers", () => {
  const cases: [string, (H: typeof Headers) => Headers][] = [
    [
      "a record, appends, sets and deletes",
      (H) => {
        const h = new H({ "Content-Type": "text/plain", "x-multi": "a" });
        h.append("X-Multi", "b");
        h.append("set-cookie", "a=1");
        h.append("Set-Cookie", "b=2");
        h.set("x-replaced", "one");
        h.set("X-Replaced", "two");
        h.append("x-gone", "1");
        h.delete("X-GONE");
        return h;
      },
    ],
    [
      "a pair list with surrounding whitespace",
      (H) =>
        new H([
          ["zeta", "  last  "],
          ["Alpha", "\tfirst"],
          ["x-multi", "1"],
          ["x-multi", "2"],
        ]),
    ],
    ["another Headers", (H) => new H(new H({ b: "2", a: "1" }))],
    ["nothing", (H) => new H()],
  ];
  for (const [name, make] of cases) {
    it(name, () => {
      expect(observe(make(FetchHeaders as unknown as typeof Headers))).toEqual(observe(make(Headers)));
    });
  }

  it("refuses the names and values the platform refuses", () => {
    for (const [name, value] of [
      ["bad name", "x"],
      ["", "x"],
      ["x-ok", "line\r\nInjected: yes"],
      ["x-ok", "nul\0"],
      ["naïve", "x"],
    ] as const) {
      expect(() => new Headers([[name, value]])).toThrow(TypeError);
      expect(() => new FetchHeaders([[name, value]])).toThrow(TypeError);
    }
    expect(() => new FetchHeaders([["only-name"]] as unknown as [string, string][])).toThrow(TypeError);
  });

  it("is an instance of Headers by tag both ways, and a look-alike object is not", () => {
    expect(new Headers()).toBeInstanceOf(FetchHeaders);
    expect(new FetchHeaders()).toBeInstanceOf(FetchHeaders);
    expect(Object.prototype.toString.call(new FetchHeaders())).toBe("[object Headers]");
    expect({ get: () => null }).not.toBeInstanceOf(FetchHeaders);
    expect(null).not.toBeInstanceOf(FetchHeaders);
  });

  it("forEach gives (value, name) in the platform's order", () => {
    const seen: string[] = [];
    new FetchHeaders({ b: "2", A: "1" }).forEach((value, name) => {
      seen.push(`${name}=${value}`);
    });
    expect(seen).toEqual(["a=1", "b=2"]);
  });
});

describe("FetchResponse behaves as the platform's Response", () => {
  it("reads a streamed body once, as text, JSON, bytes or a blob", async () => {
    const make = () =>
      new FetchResponse(streamOf('{"a":', '"wörld"}'), {
        status: 201,
        statusText: "Created",
        headers: new FetchHeaders({ "content-type": "application/json" }),
        url: "http://127.0.0.1/x",
      });
    const r = make();
    expect([r.status, r.statusText, r.ok, r.url, r.redirected, r.bodyUsed]).toEqual([
      201,
      "Created",
      true,
      "http://127.0.0.1/x",
      false,
      false,
    ]);
    expect(await r.json()).toEqual({ a: "wörld" });
    expect(r.bodyUsed).toBe(true);
    await expect(r.text()).rejects.toThrow(TypeError);
    expect(await make().text()).toBe('{"a":"wörld"}');
    expect(new TextDecoder().decode(await make().arrayBuffer())).toBe('{"a":"wörld"}');
    const blob = await make().blob();
    expect([blob.type, await blob.text()]).toEqual(["application/json", '{"a":"wörld"}']);
  });

  it("rejects invalid JSON with a SyntaxError, as fetch does", async () => {
    await expect(new FetchResponse(streamOf("{not json")).json()).rejects.toThrow(SyntaxError);
  });

  it("is not ok outside 2xx, and an empty body reads as empty", async () => {
    for (const status of [199, 300, 404, 500]) expect(new FetchResponse(null, { status }).ok).toBe(false);
    const empty = new FetchResponse(null, { status: 204 });
    expect(empty.body).toBeNull();
    expect(await empty.text()).toBe("");
  });

  it("counts a taken reader as a used body, and clone() tees an unread one", async () => {
    const r = new FetchResponse(streamOf("one", "two"));
    const copy = r.clone();
    expect(await copy.text()).toBe("onetwo");
    expect(await r.text()).toBe("onetwo");
    expect(() => r.clone()).toThrow(TypeError);
    const locked = new FetchResponse(streamOf("x"));
    locked.body?.getReader();
    expect(locked.bodyUsed).toBe(true);
    await expect(locked.text()).rejects.toThrow(TypeError);
  });

  it("parses a URL-encoded form through the platform when asked", async () => {
    const r = new FetchResponse(streamOf("a=1&b=two"), {
      headers: new FetchHeaders({ "content-type": "application/x-www-form-urlencoded" }),
    });
    const form = await r.formData();
    expect([form.get("a"), form.get("b")]).toEqual(["1", "two"]);
  });

  it("is an instance of Response by tag both ways", () => {
    expect(new Response("x")).toBeInstanceOf(FetchResponse);
    expect(new FetchResponse(null)).toBeInstanceOf(FetchResponse);
    expect({ status: 200, ok: true }).not.toBeInstanceOf(FetchResponse);
  });
});

describe("FormDataCheck", () => {
  it("recognises the platform's FormData and nothing else, and makes a real one", () => {
    const real = new FormData();
    expect(real).toBeInstanceOf(FormDataCheck);
    for (const other of [{}, "a=1", new URLSearchParams("a=1"), null, new Blob(["x"])]) {
      expect(other).not.toBeInstanceOf(FormDataCheck);
    }
    const made = new FormDataCheck();
    expect(made).toBeInstanceOf(FormData);
  });
});
