import { Type } from "@sinclair/typebox";
import { defineTool } from "./types.js";

export const clarifyTool = defineTool({
  name: "clarify",
  toolset: "clarify",
  description:
    "Ask the user a question when you cannot proceed safely without their answer (ambiguous request, a " +
    "choice only they can make). Offer up to 4 short choices when the answers are predictable; the user may " +
    "still answer in free text. Do not use it for questions you can answer yourself.",
  parameters: Type.Object({
    question: Type.String({ description: "The question, one or two sentences." }),
    choices: Type.Optional(
      Type.Array(Type.String(), { maxItems: 4, description: "Up to 4 suggested answers." }),
    ),
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
