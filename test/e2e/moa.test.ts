/**
 * mixture_of_agents through the built CLI: a one-shot with `-t moa`, the fake LLM playing the main
 * model, two reference models (one of which fails) and the aggregator, told apart by the model
 * each request names. The main model reads the aggregated answer and the failed reference.
 */
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { httpError, type RecordedRequest, reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

type Wire = { role: string; content: string | null };
const model = (r: RecordedRequest) => (r.body as { model: string }).model;
const messages = (r: RecordedRequest) => (r.body as { messages: Wire[] }).messages;
const toolNames = (r: RecordedRequest | undefined): string[] =>
  ((r?.body as { tools?: { function: { name: string } }[] } | undefined)?.tools ?? []).map(
    (t) => t.function.name,
  );

describe("mixture_of_agents in a one-shot", () => {
  it("answers through two reference models and an aggregator, reporting the one that failed", async () => {
    const moa = [
      "auxiliary:",
      "  moa_reference:",
      "    provider: custom",
      `    base_url: ${llm.url}`,
      "    models: [ref-good, ref-bad, ref-also]",
      "  moa_aggregator:",
      "    provider: custom",
      `    base_url: ${llm.url}`,
      "    model: agg-model",
      "",
    ].join("\n");
    const h = tempHome(fakeProviderConfig(llm.url, moa));
    llm.respondWith((request) => {
      switch (model(request)) {
        case "ref-good":
          return reply().text("Reference one: the answer is 1729.");
        case "ref-also":
          return reply().text("Reference two: 1729, the Hardy-Ramanujan number.");
        case "ref-bad":
          return httpError(404, '{"error":{"message":"The model ref-bad does not exist"}}');
        case "agg-model":
          return reply().text("Aggregated: 1729 is the smallest sum of two cubes in two ways.");
        default: {
          const sawTool = messages(request).some((m) => m.role === "tool");
          return sawTool
            ? reply().text("Final: 1729.")
            : reply().toolCall("mixture_of_agents", {
                user_prompt: "Smallest number expressible as a sum of two cubes in two ways?",
              });
        }
      }
    });
    const result = await runHermes(["-t", "moa", "-z", "Which number is it?"], { ...h, timeoutMs: 60_000 });
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe("Final: 1729.");

    const main = llm.chatRequests.filter((r) => model(r) === "fake-model");
    const offered = toolNames(main[0]);
    expect(offered).toEqual(["mixture_of_agents"]);
    const agg = llm.chatRequests.find((r) => model(r) === "agg-model");
    const system = messages(agg as RecordedRequest).find((m) => m.role === "system")?.content ?? "";
    expect(system).toContain("Reference one: the answer is 1729.");
    expect(system).toContain("Reference two: 1729");
    expect(system).not.toContain("ref-bad");
    // The main model read the aggregated answer, with the failing reference named.
    const toolResult = messages(main.at(-1) as RecordedRequest).find((m) => m.role === "tool")?.content ?? "";
    const parsed = JSON.parse(toolResult) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      success: true,
      response: "Aggregated: 1729 is the smallest sum of two cubes in two ways.",
      models_used: {
        reference_models: ["custom/ref-good", "custom/ref-also"],
        aggregator_model: "custom/agg-model",
      },
    });
    expect(parsed["failed_models"]).toEqual([
      { model: "custom/ref-bad", error: expect.stringMatching(/ref-bad/) },
    ]);
  });

  it("is not offered by the default toolsets", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(reply().text("plain answer"));
    const result = await runHermes(["-z", "hi"], h);
    expect(result.code).toBe(0);
    expect(toolNames(llm.chatRequests[0])).not.toContain("mixture_of_agents");
    expect(toolNames(llm.chatRequests[0])).toContain("terminal");
  });
});
