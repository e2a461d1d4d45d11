import { describe, expect, it } from "vitest";
import { highlightSnippet } from "../../../src/dashboard/api-sessions.js";
import {
  allowedHosts,
  authenticate,
  BasicAuthGate,
  DashboardAuthError,
  hashPassword,
  isLoopbackHost,
  resolveAuth,
  verifyPassword,
} from "../../../src/dashboard/security.js";

describe("dashboard auth resolution", () => {
  it("gives loopback a per-start token and refuses other binds without auth", () => {
    const a = resolveAuth(undefined, "127.0.0.1");
    const b = resolveAuth(undefined, "localhost");
    expect(a.kind === "token" && a.source).toBe("per-start");
    expect(a.kind === "token" && b.kind === "token" && a.token !== b.token).toBe(true);
    for (const host of ["0.0.0.0", "192.168.1.5", "::", "127.0.0.1.evil.example"]) {
      expect(() => resolveAuth(undefined, host), host).toThrow(DashboardAuthError);
    }
  });

  it("checks configured auth: token length, hash form, shape", () => {
    expect(resolveAuth({ token: "0123456789abcdef" }, "0.0.0.0")).toMatchObject({
      kind: "token",
      source: "config",
    });
    expect(() => resolveAuth({ token: "short" }, "0.0.0.0")).toThrow(/at least 16/);
    expect(() => resolveAuth({ username: "ada", password_hash: "plain-password" }, "0.0.0.0")).toThrow(
      /scrypt/,
    );
    expect(() => resolveAuth(["x"], "0.0.0.0")).toThrow(DashboardAuthError);
    expect(() => resolveAuth({ username: "ada" }, "0.0.0.0")).toThrow(/password_hash/);
  });

  it("verifies scrypt hashes and rejects malformed or abusive ones without throwing", () => {
    const hash = hashPassword("hunter2hunter2");
    expect(verifyPassword("hunter2hunter2", hash)).toBe(true);
    expect(verifyPassword("hunter2hunter3", hash)).toBe(false);
    const [, , salt, digest] = hash.split("$");
    expect(verifyPassword("hunter2hunter2", `scrypt$1073741824$${salt}$${digest}`)).toBe(false);
    expect(verifyPassword("hunter2hunter2", `scrypt$1000$${salt}$${digest}`)).toBe(false);
    expect(verifyPassword("x", "md5$abc")).toBe(false);
    expect(verifyPassword("x", "scrypt$16384$zz$00")).toBe(false);
  });

  it("authenticates bearer, query and basic credentials, and nothing else", () => {
    const auth = resolveAuth({ token: "0123456789abcdef" }, "0.0.0.0");
    expect(authenticate(auth, { authorization: "Bearer 0123456789abcdef" }, null)).toBe(true);
    expect(authenticate(auth, {}, "0123456789abcdef")).toBe(true);
    expect(authenticate(auth, { authorization: "Bearer 0123456789abcdeF" }, null)).toBe(false);
    expect(authenticate(auth, {}, "")).toBe(false);
    const basic = resolveAuth({ username: "ada", password_hash: hashPassword("pw-long-enough") }, "0.0.0.0");
    const header = (s: string) => ({ authorization: `Basic ${Buffer.from(s).toString("base64")}` });
    expect(authenticate(basic, header("ada:pw-long-enough"), null)).toBe(true);
    expect(authenticate(basic, header("ada:pw-long-enougH"), null)).toBe(false);
    expect(authenticate(basic, header("adb:pw-long-enough"), null)).toBe(false);
    expect(authenticate(basic, header("no-colon"), null)).toBe(false);
    expect(authenticate(basic, {}, "pw-long-enough")).toBe(false);
  });
});

describe("the basic-auth gate", () => {
  const auth = { kind: "basic" as const, username: "ada", passwordHash: "scrypt$16384$00$00" };
  const basic = (s: string) => `Basic ${Buffer.from(s).toString("base64")}`;
  const GOOD = basic("ada:pw-long-enough");

  function gate() {
    let clock = 1_000_000;
    const calls: string[] = [];
    const g = new BasicAuthGate(
      auth,
      () => clock,
      (header) => {
        calls.push(header);
        return header === GOOD;
      },
    );
    return { g, calls, tick: (ms: number) => (clock += ms) };
  }

  it("hashes a credential once, not once per request (scrypt blocks the loop for tens of ms)", () => {
    const { g, calls } = gate();
    for (let i = 0; i < 20; i++) expect(g.check(GOOD, "10.0.0.1")).toBe("ok");
    expect(calls).toEqual([GOOD]);
    expect(g.check(basic("ada:pw-long-enougH"), "10.0.0.1")).toBe("refused");
    expect(g.check(basic("ada:pw-long-enougH"), "10.0.0.1")).toBe("refused");
    expect(calls).toHaveLength(3);
  });

  it("stops hashing for an address after 10 failures in a minute, and lets it try again after", () => {
    const { g, calls, tick } = gate();
    for (let i = 0; i < 10; i++) expect(g.check(basic(`ada:guess-${i}`), "10.0.0.9")).toBe("refused");
    expect(g.check(basic("ada:guess-10"), "10.0.0.9")).toBe("throttled");
    // Even the right password from there waits: the guesser cannot tell it found it.
    expect(g.check(GOOD, "10.0.0.9")).toBe("throttled");
    expect(g.check(undefined, "10.0.0.9")).toBe("throttled");
    expect(calls).toHaveLength(10);
    // Another address is not held up.
    expect(g.check(GOOD, "10.0.0.2")).toBe("ok");
    tick(60_000);
    expect(g.check(basic("ada:guess-11"), "10.0.0.9")).toBe("refused");
    expect(calls).toHaveLength(12);
  });

  it("lets a credential that already passed through while its address is throttled", () => {
    const { g } = gate();
    expect(g.check(GOOD, "10.0.0.5")).toBe("ok");
    for (let i = 0; i < 12; i++) g.check(basic(`ada:guess-${i}`), "10.0.0.5");
    expect(g.check(basic("ada:one-more"), "10.0.0.5")).toBe("throttled");
    expect(g.check(GOOD, "10.0.0.5")).toBe("ok");
  });

  it("counts no strike for a request without credentials (the browser's first one)", () => {
    const { g, calls } = gate();
    for (let i = 0; i < 30; i++) expect(g.check(undefined, "10.0.0.7")).toBe("refused");
    expect(g.check("", "10.0.0.7")).toBe("refused");
    expect(calls).toHaveLength(0);
    expect(g.check(GOOD, "10.0.0.7")).toBe("ok");
  });

  it("checks real scrypt hashes through authenticate by default", () => {
    const real = resolveAuth({ username: "ada", password_hash: hashPassword("pw-long-enough") }, "0.0.0.0");
    if (real.kind !== "basic") throw new Error("expected basic auth");
    const g = new BasicAuthGate(real);
    expect(g.check(GOOD, "10.0.0.1")).toBe("ok");
    expect(g.check(basic("bob:pw-long-enough"), "10.0.0.1")).toBe("refused");
    expect(g.check("Bearer pw-long-enough", "10.0.0.1")).toBe("refused");
  });
});

describe("dashboard hosts and snippets", () => {
  it("answers to loopback names on loopback only, and to listed names elsewhere", () => {
    expect(isLoopbackHost("127.0.0.1") && isLoopbackHost("[::1]") && isLoopbackHost("localhost")).toBe(true);
    const local = allowedHosts("127.0.0.1", 9119);
    expect([...local].sort()).toEqual(["127.0.0.1:9119", "[::1]:9119", "localhost:9119"]);
    const lan = allowedHosts("192.168.1.5", 9119, ["dash.lan"]);
    expect(lan.has("192.168.1.5:9119") && lan.has("dash.lan:9119")).toBe(true);
    expect(lan.has("localhost:9119")).toBe(false);
    expect(allowedHosts("0.0.0.0", 80).has("127.0.0.1:80")).toBe(true);
  });

  it("highlights hits as <mark> over escaped text", () => {
    expect(highlightSnippet("a <b> >>>pelican<<< & c")).toBe("a &#60;b&#62; <mark>pelican</mark> &#38; c");
    expect(highlightSnippet("<script>alert(1)</script> >>>x<<<")).not.toContain("<script>");
  });
});
