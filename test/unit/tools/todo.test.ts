import { describe, expect, it } from "vitest";
import { readTodos, summarize, todoTool } from "../../../src/tools/todo.js";
import { makeToolContext } from "../../support/tool-context.js";

type Args = Parameters<typeof todoTool.handler>[0];
const call = (args: Args, ctx = makeToolContext()) =>
  todoTool.handler(args, ctx) as {
    todos: Array<{ id: string; content: string; status: string }>;
    summary: string;
  };

describe("todo", () => {
  it("reads an empty list with no arguments", () => {
    expect(call({})).toEqual({ todos: [], summary: "The todo list is empty." });
  });

  it("replaces the list and keeps it in the session", () => {
    const ctx = makeToolContext();
    call({ todos: [{ id: "1", content: "old" }] }, ctx);
    const result = call(
      {
        todos: [
          { id: "a", content: "write tests", status: "in_progress" },
          { id: "b", content: "implement" },
        ],
      },
      ctx,
    );
    expect(result.todos).toEqual([
      { id: "a", content: "write tests", status: "in_progress" },
      { id: "b", content: "implement", status: "pending" },
    ]);
    expect(result.summary).toBe("2 items: 1 pending, 1 in progress");
    expect(call({}, ctx).todos).toHaveLength(2);
    expect(readTodos(ctx)).toEqual(result.todos);
  });

  it("merges by id: updates only given fields and appends new ids", () => {
    const ctx = makeToolContext();
    call(
      {
        todos: [
          { id: "a", content: "first" },
          { id: "b", content: "second" },
        ],
      },
      ctx,
    );
    const merged = call(
      {
        merge: true,
        todos: [
          { id: "a", status: "completed" },
          { id: "c", content: "third", status: "in_progress" },
        ],
      },
      ctx,
    );
    expect(merged.todos).toEqual([
      { id: "a", content: "first", status: "completed" },
      { id: "b", content: "second", status: "pending" },
      { id: "c", content: "third", status: "in_progress" },
    ]);
    expect(merged.summary).toBe("3 items: 1 pending, 1 in progress, 1 completed");
  });

  it("clears the list with an empty replace", () => {
    const ctx = makeToolContext();
    call({ todos: [{ id: "a", content: "x" }] }, ctx);
    expect(call({ todos: [] }, ctx).todos).toEqual([]);
  });

  it("rejects duplicate ids and new items without content, leaving the list unchanged", () => {
    const ctx = makeToolContext();
    call({ todos: [{ id: "a", content: "keep" }] }, ctx);
    expect(() =>
      call(
        {
          todos: [
            { id: "x", content: "1" },
            { id: "x", content: "2" },
          ],
        },
        ctx,
      ),
    ).toThrow(/Duplicate todo id "x"/);
    expect(() => call({ merge: true, todos: [{ id: "new", status: "pending" }] }, ctx)).toThrow(
      /needs a content/,
    );
    expect(readTodos(ctx)).toEqual([{ id: "a", content: "keep", status: "pending" }]);
  });

  it("keeps lists of different sessions apart", () => {
    const one = makeToolContext();
    const two = makeToolContext();
    call({ todos: [{ id: "a", content: "x" }] }, one);
    expect(call({}, two).todos).toEqual([]);
  });

  it("summarizes every status", () => {
    expect(
      summarize([
        { id: "1", content: "a", status: "cancelled" },
        { id: "2", content: "b", status: "completed" },
      ]),
    ).toBe("2 items: 1 completed, 1 cancelled");
    expect(summarize([{ id: "1", content: "a", status: "pending" }])).toBe("1 item: 1 pending");
  });
});
