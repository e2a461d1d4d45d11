/**
 * A `Prompter` (src/cli/setup/prompter.ts) answering from a script, for the setup conversations'
 * unit tests: each question takes the next answer ("" takes the question's default), and running
 * out of answers is the user pressing Ctrl+C. Records every question asked and line said.
 */
import { PromptCancelled, type Prompter } from "../../src/cli/setup/prompter.js";

export function scriptedPrompter(answers: string[]): Prompter & { asked: string[]; said: string[] } {
  const asked: string[] = [];
  const said: string[] = [];
  const next = (question: string): string => {
    asked.push(question);
    const answer = answers.shift();
    if (answer === undefined) throw new PromptCancelled();
    return answer;
  };
  return {
    asked,
    said,
    say: (line) => said.push(line),
    ask: async (question, fallback) => {
      const answer = next(question);
      return answer === "" && fallback !== undefined ? fallback : answer;
    },
    secret: async (question) => next(question),
    confirm: async (question, fallback) => {
      const answer = next(question);
      return answer === "" ? fallback : /^y/i.test(answer);
    },
    close: () => undefined,
  };
}
