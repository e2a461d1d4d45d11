/**
 * `hermes pairing` through the built CLI: a pending request seeded through the library (as the
 * gateway would), approved by code, listed, revoked; wrong codes and bad usage exit non-zero.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PairingStore } from "../../src/state/gateway/pairing.js";
import { runHermes, tempHome } from "../support/cli.js";

async function seed(home: string, userId: string, name: string): Promise<string> {
  const r = await new PairingStore({ home }).requestCode("telegram", { id: userId, name });
  if (r.status !== "created") throw new Error(`seeding failed: ${r.status}`);
  return r.code;
}

describe("hermes pairing", () => {
  it("approve, list, revoke", async () => {
    const h = tempHome();
    const code = await seed(h.home, "4242", "alice");

    const before = await runHermes(["pairing", "list"], h);
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toContain("Pending requests (1)");
    expect(before.stdout).toMatch(/telegram\s+4242\s+alice/);
    expect(before.stdout).not.toContain(code);

    const approved = await runHermes(["pairing", "approve", "telegram", code.toLowerCase()], h);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain("Approved alice (4242) on telegram");
    expect(new PairingStore({ home: h.home }).isApproved("telegram", "4242")).toBe(true);
    expect(statSync(join(h.home, "pairing", "telegram-approved.json")).mode & 0o777).toBe(0o600);

    const listed = await runHermes(["pairing", "list", "--json"], h);
    expect(listed.code, listed.stderr).toBe(0);
    const data = JSON.parse(listed.stdout) as { pending: unknown[]; approved: Array<{ userId: string }> };
    expect(data.pending).toEqual([]);
    expect(data.approved.map((a) => a.userId)).toEqual(["4242"]);

    const revoked = await runHermes(["pairing", "revoke", "telegram", "4242"], h);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain("Revoked 4242 on telegram");
    expect(JSON.parse(readFileSync(join(h.home, "pairing", "telegram-approved.json"), "utf8"))).toEqual({});

    const again = await runHermes(["pairing", "revoke", "telegram", "4242"], h);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("4242 is not a paired user on telegram");
    expect(again.stdout).toBe("");
  });

  it("a wrong code fails with exit 1 and does not echo it; clear-pending empties the queue", async () => {
    const h = tempHome();
    await seed(h.home, "1", "");
    const wrong = await runHermes(["pairing", "approve", "telegram", "ZZZZ9999"], h);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("no pending request on telegram matches that code");
    expect(wrong.stderr).not.toContain("ZZZZ9999");

    const cleared = await runHermes(["pairing", "clear-pending"], h);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.stdout).toContain("Cleared 1 pending request(s).");
    const empty = await runHermes(["pairing"], h);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toContain("No pairing requests and no paired users.");
  });

  it("usage errors exit 2", async () => {
    const h = tempHome();
    const missing = await runHermes(["pairing", "approve", "telegram"], h);
    expect(missing.code).toBe(2);
    const badPlatform = await runHermes(["pairing", "approve", "../x", "ABCD2345"], h);
    expect(badPlatform.code).toBe(2);
    expect(badPlatform.stderr).toContain("is not a platform name");
  });
});
