import { entrypoint, task, interrupt, getPreviousState } from "@langchain/langgraph";

// A functional graph whose input and output are any JSON value: a number
// is doubled, a string is described, a list is reversed, "ask" stops at an
// interrupt and returns the answer with the previous return value.
const double = task("double", async (n: number) => n * 2);

export const graph = entrypoint("fn", async (input: unknown) => {
  if (typeof input === "number") return await double(input);
  if (input === "ask") {
    const answer = interrupt("answer?");
    return { answer, prev: getPreviousState<unknown>() ?? null };
  }
  if (typeof input === "string") return `got ${input}`;
  if (Array.isArray(input)) return [...input].reverse();
  return input;
});
