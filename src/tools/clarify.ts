import { Type } from "@sinclair/typebox";
import { defineTool } from "./types.js";

export const clarifyTool = defineTool({
  name: "clarify",
  toolset: "clarify",
  description:
    "Ask the user a question when you cannot proceed safely without their answer (ambiguous request, a " +
    "choice only they can make), not one you can answer yourself. Offer short choices when the answers are " +
    "predictable; the user may still answer in free text.",
  parameters: Type.Object({
    question: Type.String({ description: "The question, one or two sentences." }),
    choices: Type.Optional(Type.Array(Type.String(), { maxItems: 4, description: "Suggested answers." })),
  }),
  interactive: true,
  emoji: "❓",
  async handler(args, ctx) {
    if (!ctx.ask) {
      return {
        error:
          "Nobody can answer questions in this session (it is not interactive). Proceed with your best judgement and state the assumption you made.",
      };
    }
    const answer = await ctx.ask({
      question: args.question,
      ...(args.choices ? { choices: args.choices } : {}),
    });
    return { answer };
  },
});
