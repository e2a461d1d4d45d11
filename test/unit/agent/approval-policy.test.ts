import { describe, expect, it } from "vitest";
import {
  type ApprovalMode,
  ApprovalPolicy,
  type ApprovalPrompt,
  type ApprovalSurface,
  approvalSettings,
  type CronApprovalMode,
} from "../../../src/agent/approval-policy.js";
import { ApprovalDeniedError, isApprovalDenied } from "../../../src/tools/approval/denial.js";
import type { ApprovalDecision, ApprovalRequest } from "../../../src/tools/types.js";

const DANGEROUS: ApprovalRequest = {
  command: "rm -rf build",
  reason: "recursive delete",
  patternKey: "recursive_delete",
};
const PROTECTED: ApprovalRequest = {
  command: "echo 'command_allowlist: [\"*\"]' >> ~/.hermes/config.yaml",
  reason: "writes the Hermes config (config.yaml)",
  patternKey: "protected_path",
  protectedPath: true,
};

interface Probe {
  policy: ApprovalPolicy;
  prompted: ApprovalRequest[];
  judged: string[];
  persisted: string[];
  denied: ApprovalDeniedError[];
}

function probe(input: {
  surface?: ApprovalSurface;
  mode?: ApprovalMode;
  cronMode?: CronApprovalMode;
  yolo?: boolean;
  allowlist?: string[];
  /** The user's answer at the prompt; undefined: no prompt at all (non-interactive). */
  answer?: ApprovalDecision;
  /** The judge's raw answer, or an Error it throws. */
  judge?: string | Error;
  timeoutMs?: number;
  prompt?: ApprovalPrompt;
}): Probe {
  const prompted: ApprovalRequest[] = [];
  const judged: string[] = [];
  const persisted: string[] = [];
  const denied: ApprovalDeniedError[] = [];
  const answer = input.answer;
  const prompt: ApprovalPrompt | undefined =
    input.prompt ??
    (answer === undefined
      ? undefined
      : async (request) => {
          prompted.push(request);
          return answer;
        });
  const policy = new ApprovalPolicy({
    settings: {
      surface: input.surface ?? "interactive",
      mode: input.mode ?? "manual",
      cronMode: input.cronMode ?? "deny",
      timeoutMs: input.timeoutMs ?? 60_000,
    },
    yolo: input.yolo ?? false,
    allowlist: input.allowlist ?? [],
    cwd: "/work/project",
    ...(prompt ? { prompt } : {}),
    persistAlways: (key) => void persisted.push(key),
    judge: async (messages) => {
      judged.push(String(messages.at(-1)?.content));
      if (input.judge instanceof Error) throw input.judge;
      return input.judge ?? "VERDICT: ESCALATE";
    },
    onDenied: (_request, denial) => void denied.push(denial),
  });
  return { policy, prompted, judged, persisted, denied };
}

/** The decision, or `deny:<cause>` when refused. */
async function settle(p: Probe, request: ApprovalRequest): Promise<string> {
  try {
    return await p.policy.request(request);
  } catch (error) {
    if (!isApprovalDenied(error)) throw error;
    return `deny:${error.by}`;
  }
}

describe("approval policy: the table", () => {
  const rows: Array<{
    name: string;
    setup: Parameters<typeof probe>[0];
    request: ApprovalRequest;
    expected: string;
    prompted: boolean;
    judged?: boolean;
  }> = [
    // manual
    {
      name: "manual, prompt yes",
      setup: { answer: "once" },
      request: DANGEROUS,
      expected: "once",
      prompted: true,
    },
    {
      name: "manual, prompt no",
      setup: { answer: "deny" },
      request: DANGEROUS,
      expected: "deny:user",
      prompted: true,
    },
    {
      name: "manual, no prompt",
      setup: {},
      request: DANGEROUS,
      expected: "deny:no_approver",
      prompted: false,
    },
    {
      name: "manual + yolo, no prompt",
      setup: { yolo: true },
      request: DANGEROUS,
      expected: "once",
      prompted: false,
    },
    {
      name: "manual + yolo, prompt",
      setup: { yolo: true, answer: "deny" },
      request: DANGEROUS,
      expected: "once",
      prompted: false,
    },
    {
      name: "manual, protected, prompt yes",
      setup: { answer: "once" },
      request: PROTECTED,
      expected: "once",
      prompted: true,
    },
    {
      name: "manual, protected, prompt no",
      setup: { answer: "deny" },
      request: PROTECTED,
      expected: "deny:user",
      prompted: true,
    },
    {
      name: "manual, protected, no prompt",
      setup: {},
      request: PROTECTED,
      expected: "deny:no_approver",
      prompted: false,
    },
    {
      name: "yolo, protected, no prompt",
      setup: { yolo: true },
      request: PROTECTED,
      expected: "deny:no_approver",
      prompted: false,
    },
    {
      name: "yolo, protected, prompt",
      setup: { yolo: true, answer: "once" },
      request: PROTECTED,
      expected: "once",
      prompted: true,
    },
    // off
    { name: "off, no prompt", setup: { mode: "off" }, request: DANGEROUS, expected: "once", prompted: false },
    {
      name: "off, prompt",
      setup: { mode: "off", answer: "deny" },
      request: DANGEROUS,
      expected: "once",
      prompted: false,
    },
    {
      name: "off, protected, no prompt",
      setup: { mode: "off" },
      request: PROTECTED,
      expected: "deny:no_approver",
      prompted: false,
    },
    {
      name: "off, protected, prompt no",
      setup: { mode: "off", answer: "deny" },
      request: PROTECTED,
      expected: "deny:user",
      prompted: true,
    },
    // smart
    {
      name: "smart approves",
      setup: { mode: "smart", judge: "VERDICT: APPROVE - build output only" },
      request: DANGEROUS,
      expected: "once",
      prompted: false,
      judged: true,
    },
    {
      name: "smart denies",
      setup: { mode: "smart", judge: "VERDICT: DENY - wipes the repo", answer: "once" },
      request: DANGEROUS,
      expected: "deny:smart",
      prompted: false,
      judged: true,
    },
    {
      name: "smart escalates to the prompt",
      setup: { mode: "smart", judge: "VERDICT: ESCALATE", answer: "once" },
      request: DANGEROUS,
      expected: "once",
      prompted: true,
      judged: true,
    },
    {
      name: "smart escalates, no prompt",
      setup: { mode: "smart", judge: "VERDICT: ESCALATE" },
      request: DANGEROUS,
      expected: "deny:no_approver",
      prompted: false,
      judged: true,
    },
    {
      name: "smart, malformed answer escalates",
      setup: { mode: "smart", judge: "approve", answer: "deny" },
      request: DANGEROUS,
      expected: "deny:user",
      prompted: true,
      judged: true,
    },
    {
      name: "smart, judge error escalates",
      setup: { mode: "smart", judge: new Error("502 bad gateway") },
      request: DANGEROUS,
      expected: "deny:no_approver",
      prompted: false,
      judged: true,
    },
    {
      name: "smart never judges protected",
      setup: { mode: "smart", judge: "VERDICT: APPROVE", answer: "deny" },
      request: PROTECTED,
      expected: "deny:user",
      prompted: true,
      judged: false,
    },
    {
      name: "smart + yolo skips the judge",
      setup: { mode: "smart", yolo: true, judge: "VERDICT: DENY" },
      request: DANGEROUS,
      expected: "once",
      prompted: false,
      judged: false,
    },
    // cron
    {
      name: "cron deny",
      setup: { surface: "cron" },
      request: DANGEROUS,
      expected: "deny:cron",
      prompted: false,
    },
    {
      name: "cron deny, even mode off",
      setup: { surface: "cron", mode: "off" },
      request: DANGEROUS,
      expected: "deny:cron",
      prompted: false,
    },
    {
      name: "cron deny, even smart approve",
      setup: { surface: "cron", mode: "smart", judge: "VERDICT: APPROVE" },
      request: DANGEROUS,
      expected: "deny:cron",
      prompted: false,
      judged: false,
    },
    {
      name: "cron approve",
      setup: { surface: "cron", cronMode: "approve" },
      request: DANGEROUS,
      expected: "once",
      prompted: false,
    },
    {
      name: "cron approve, protected",
      setup: { surface: "cron", cronMode: "approve", yolo: true },
      request: PROTECTED,
      expected: "deny:cron",
      prompted: false,
    },
    {
      name: "cron deny, allowlisted",
      setup: { surface: "cron", allowlist: ["recursive_delete"] },
      request: DANGEROUS,
      expected: "always",
      prompted: false,
    },
    // webhook and API server
    {
      name: "webhook",
      setup: { surface: "webhook" },
      request: DANGEROUS,
      expected: "deny:webhook",
      prompted: false,
    },
    {
      name: "webhook, yolo + off + allowlist",
      setup: { surface: "webhook", yolo: true, mode: "off", allowlist: ["recursive_delete"] },
      request: DANGEROUS,
      expected: "deny:webhook",
      prompted: false,
    },
    {
      name: "webhook, protected",
      setup: { surface: "webhook", yolo: true },
      request: PROTECTED,
      expected: "deny:webhook",
      prompted: false,
    },
    {
      name: "api server, mode off",
      setup: { surface: "api_server", mode: "off" },
      request: DANGEROUS,
      expected: "deny:api_server",
      prompted: false,
    },
    // allowlist and protected
    {
      name: "allowlist approves",
      setup: { allowlist: ["recursive_delete"] },
      request: DANGEROUS,
      expected: "always",
      prompted: false,
    },
    {
      name: "allowlist never approves protected",
      setup: { allowlist: ["protected_path", PROTECTED.command] },
      request: PROTECTED,
      expected: "deny:no_approver",
      prompted: false,
    },
  ];

  for (const row of rows) {
    it(row.name, async () => {
      const p = probe(row.setup);
      expect(await settle(p, row.request)).toBe(row.expected);
      expect(p.prompted.length > 0).toBe(row.prompted);
      if (row.judged !== undefined) expect(p.judged.length > 0).toBe(row.judged);
      expect(p.persisted).toEqual([]);
      expect(p.denied.length).toBe(row.expected.startsWith("deny") ? 1 : 0);
    });
  }
});

describe("approval policy: invariants over every combination", () => {
  const surfaces: Array<{ surface: ApprovalSurface; cronMode?: CronApprovalMode }> = [
    { surface: "interactive" },
    { surface: "cron", cronMode: "deny" },
    { surface: "cron", cronMode: "approve" },
    { surface: "webhook" },
    { surface: "api_server" },
  ];
  const combos = surfaces.flatMap((s) =>
    (["manual", "smart", "off"] as const).flatMap((mode) =>
      [false, true].flatMap((yolo) =>
        [false, true].flatMap((protectedPath) =>
          ([undefined, "once", "session", "always", "deny"] as const).map((answer) => ({
            ...s,
            mode,
            yolo,
            protectedPath,
            answer,
          })),
        ),
      ),
    ),
  );

  it(`holds for all ${combos.length} combinations`, async () => {
    for (const c of combos) {
      const p = probe({
        surface: c.surface,
        ...(c.cronMode ? { cronMode: c.cronMode } : {}),
        mode: c.mode,
        yolo: c.yolo,
        allowlist: ["recursive_delete", "protected_path"],
        ...(c.answer ? { answer: c.answer } : {}),
        // The judge approves everything: it must still never approve a protected path.
        judge: "VERDICT: APPROVE",
      });
      const request = c.protectedPath ? PROTECTED : DANGEROUS;
      const result = await settle(p, request);
      const label = JSON.stringify(c);
      // A protected path is approved only by the user's own yes at a prompt.
      if (c.protectedPath && !result.startsWith("deny")) {
        expect(p.prompted, label).toHaveLength(1);
        expect(c.answer, label).not.toBe("deny");
        expect(result, label).toBe("once");
      }
      if (c.protectedPath) expect(p.judged, label).toEqual([]);
      // Nobody can approve in webhooks, nor on an API turn nobody follows (no prompt); a followed
      // API turn (the Runs API, which hands a prompt) asks by the interactive rules.
      if (c.surface === "webhook" || (c.surface === "api_server" && !c.answer)) {
        expect(result, label).toBe(`deny:${c.surface}`);
        expect(p.prompted, label).toEqual([]);
      }
      // Cron never prompts (there is no prompt), and cron_mode deny refuses unless allowlisted.
      if (c.surface === "cron" && c.cronMode === "deny" && c.protectedPath)
        expect(result, label).toBe("deny:cron");
      // Only the user's own "always" persists, and never for a protected path.
      if (p.persisted.length > 0) {
        expect(c.answer, label).toBe("always");
        expect(c.protectedPath, label).toBe(false);
      }
    }
  });
});

describe("approval policy: remembering answers", () => {
  it("a 'session' answer approves the same pattern silently for the rest of the session", async () => {
    const p = probe({ answer: "session" });
    expect(await settle(p, DANGEROUS)).toBe("session");
    expect(await settle(p, { ...DANGEROUS, command: "rm -rf dist" })).toBe("session");
    expect(p.prompted).toHaveLength(1);
    expect(p.persisted).toEqual([]);
  });

  it("'always' persists the pattern once, from the user's answer only", async () => {
    const p = probe({ answer: "always" });
    expect(await settle(p, DANGEROUS)).toBe("always");
    expect(await settle(p, DANGEROUS)).toBe("session");
    expect(p.persisted).toEqual(["recursive_delete"]);
  });

  it("a protected path answered 'always' is approved once and neither remembered nor persisted", async () => {
    const p = probe({ answer: "always" });
    expect(await settle(p, PROTECTED)).toBe("once");
    expect(await settle(p, PROTECTED)).toBe("once");
    expect(p.prompted).toHaveLength(2);
    expect(p.persisted).toEqual([]);
  });

  it("a protected path is asked about even after its pattern was approved for the session", async () => {
    const p = probe({ answer: "session" });
    await settle(p, { ...DANGEROUS, patternKey: "protected_path" });
    expect(await settle(p, PROTECTED)).toBe("once");
    expect(p.prompted).toHaveLength(2);
  });

  it("smart mode's approvals are never remembered or persisted", async () => {
    const p = probe({ mode: "smart", judge: "VERDICT: APPROVE" });
    expect(await settle(p, DANGEROUS)).toBe("once");
    expect(await settle(p, DANGEROUS)).toBe("once");
    expect(p.judged).toHaveLength(2);
    expect(p.persisted).toEqual([]);
  });
});

describe("approval policy: timeouts and interrupts fail closed", () => {
  it("denies when the user does not answer within approvals.timeout and withdraws the question", async () => {
    let withdrawn: unknown;
    const p = probe({
      timeoutMs: 20,
      prompt: (_request, { signal }) =>
        new Promise<ApprovalDecision>((resolve) => {
          signal.addEventListener("abort", () => {
            withdrawn = signal.reason;
            // A prompt that answers after being withdrawn must not count.
            resolve("always");
          });
        }),
    });
    const denial = await p.policy.request(DANGEROUS).catch((e: unknown) => e);
    expect(isApprovalDenied(denial)).toBe(true);
    expect((denial as ApprovalDeniedError).by).toBe("timeout");
    expect((denial as ApprovalDeniedError).message).toMatch(/nobody answered .* \(approvals\.timeout\)/);
    expect(String(withdrawn)).toContain("timeout");
    expect(p.persisted).toEqual([]);
  });

  it("an interrupted turn withdraws the question and denies", async () => {
    const p = probe({
      timeoutMs: 2000,
      prompt: (_r, { signal }) => new Promise((r) => signal.addEventListener("abort", () => r("once"))),
    });
    const controller = new AbortController();
    const pending = p.policy.request(DANGEROUS, controller.signal).catch((e: unknown) => e);
    controller.abort();
    const denial = (await pending) as ApprovalDeniedError;
    expect(denial.by).toBe("interrupted");
  });

  it("a prompt that throws denies", async () => {
    const p = probe({
      prompt: async () => {
        throw new Error("stdin closed");
      },
    });
    expect(await settle(p, DANGEROUS)).toBe("deny:no_approver");
    expect(p.denied[0]?.message).toContain("stdin closed");
  });

  it("asks one question at a time; a 'session' answer settles the queued one for the same pattern", async () => {
    const answers: Array<(d: ApprovalDecision) => void> = [];
    const p = probe({ prompt: () => new Promise((resolve) => answers.push(resolve)) });
    const first = p.policy.request(DANGEROUS);
    const second = p.policy.request({ ...DANGEROUS, command: "rm -rf dist" });
    await new Promise((r) => setImmediate(r));
    expect(answers).toHaveLength(1);
    answers[0]?.("session");
    expect(await first).toBe("session");
    expect(await second).toBe("session");
    expect(answers).toHaveLength(1);
  });
});

describe("approval policy: subagents", () => {
  it("a child uses the parent's prompt and session approvals", async () => {
    const p = probe({ answer: "session" });
    const child = p.policy.child({ autoApprove: false });
    expect(await child.request(DANGEROUS)).toBe("session");
    expect(await p.policy.request(DANGEROUS)).toBe("session");
    expect(p.prompted).toHaveLength(1);
  });

  it("follows the parent's /yolo switch", async () => {
    const p = probe({});
    const child = p.policy.child({ autoApprove: false });
    await expect(child.request(DANGEROUS)).rejects.toThrow(/non-interactive/);
    p.policy.yolo = true;
    expect(await child.request(DANGEROUS)).toBe("once");
  });

  it("subagent_auto_approve approves dangerous commands, never protected paths or cron_mode deny", async () => {
    const interactive = probe({}).policy.child({ autoApprove: true });
    expect(await interactive.request(DANGEROUS)).toBe("once");
    await expect(interactive.request(PROTECTED)).rejects.toThrow(/protected path/);
    const cron = probe({ surface: "cron" }).policy.child({ autoApprove: true });
    await expect(cron.request(DANGEROUS)).rejects.toThrow(/cron_mode: deny/);
  });
});

describe("approval policy: denial messages tell the model why", () => {
  const cases: Array<[string, Parameters<typeof probe>[0], ApprovalRequest, RegExp]> = [
    [
      "user",
      { answer: "deny" },
      DANGEROUS,
      /Denied by the user: a dangerous command \(recursive delete\)\. It was not run/,
    ],
    ["non-interactive", {}, DANGEROUS, /non-interactive.*--yolo/],
    ["protected, non-interactive", { yolo: true }, PROTECTED, /protected path.*interactive/],
    [
      "smart",
      { mode: "smart", judge: "VERDICT: DENY - deletes tracked files" },
      DANGEROUS,
      /approval model \(approvals\.mode: smart\): deletes tracked files/,
    ],
    [
      "smart escalated",
      { mode: "smart", judge: "sure, APPROVE" },
      DANGEROUS,
      /non-interactive.*not a verdict line/,
    ],
    ["cron", { surface: "cron" }, DANGEROUS, /cron_mode: deny/],
    ["webhook", { surface: "webhook" }, DANGEROUS, /webhook-triggered runs.*nobody there can approve/],
    ["api server", { surface: "api_server" }, DANGEROUS, /API server/],
  ];
  for (const [name, setup, request, pattern] of cases) {
    it(name, async () => {
      const p = probe(setup);
      const error = await p.policy.request(request).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApprovalDeniedError);
      expect((error as Error).message).toMatch(pattern);
      expect((error as Error).message).toContain("not run");
    });
  }
});

describe("approvalSettings", () => {
  it("reads the modes, the timeout and cron_mode", () => {
    const { settings, warnings } = approvalSettings(
      { approvals: { mode: "smart", timeout: 5, cron_mode: "approve" } },
      "cron",
    );
    expect(settings).toEqual({ mode: "smart", timeoutMs: 5000, cronMode: "approve", surface: "cron" });
    expect(warnings).toEqual([]);
  });

  it("maps platforms to surfaces", () => {
    const surface = (p: string | undefined) => approvalSettings({}, p).settings.surface;
    expect([surface("cli"), surface("telegram"), surface(undefined)]).toEqual([
      "interactive",
      "interactive",
      "interactive",
    ]);
    expect([surface("cron"), surface("webhook"), surface("api_server")]).toEqual([
      "cron",
      "webhook",
      "api_server",
    ]);
  });

  it("reads PyYAML's `mode: off` (false) as off", () => {
    expect(approvalSettings({ approvals: { mode: false } }, "cli").settings.mode).toBe("off");
  });

  it("falls back to the safe choice with a warning for values it cannot use", () => {
    const { settings, warnings } = approvalSettings(
      { approvals: { mode: "yolo", timeout: "soon", cron_mode: "allow" } },
      "cli",
    );
    expect(settings).toEqual({ mode: "manual", timeoutMs: 60_000, cronMode: "deny", surface: "interactive" });
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toMatch(/approvals\.mode "yolo" is not one of manual, smart, off; using manual/);
    expect(warnings[1]).toMatch(/approvals\.cron_mode "allow".*using deny/);
    expect(warnings[2]).toMatch(/approvals\.timeout "soon".*using 60/);
  });
});
