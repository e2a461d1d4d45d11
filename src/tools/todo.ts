/** todo: the session's task list, kept in `ctx.session` under "todo". */
import { type Static, Type } from "@sinclair/typebox";
import description from "./todo.md";
import { defineTool, type ToolContext } from "./types.js";

const STATUSES = ["pending", "in_progress", "completed", "cancelled"] as const;
export type TodoStatus = (typeof STATUSES)[number];

export interface TodoItem {
  id: string;
  content: string;
  status: TodoStatus;
}

const SESSION_KEY = "todo";
const MAX_ITEMS = 100;

const itemSchema = Type.Object({
  id: Type.String({ minLength: 1 }),
  content: Type.Optional(Type.String({ description: "Required for new items." })),
  status: Type.Optional(Type.Union(STATUSES.map((s) => Type.Literal(s)))),
});

const parameters = Type.Object({
  todos: Type.Optional(Type.Array(itemSchema, { maxItems: MAX_ITEMS })),
  merge: Type.Optional(
    Type.Boolean({ description: "Update by id instead of replacing the list; new ids are appended." }),
  ),
});

type ItemArg = Static<typeof itemSchema>;

export const todoTool = defineTool({
  name: "todo",
  toolset: "todo",
  description,
  parameters,
  parallelSafe: false,
  // The list lives in the session alone: nothing outside it changes.
  sideEffectFree: true,
  emoji: "📋",
  handler(args, ctx) {
    const current = readTodos(ctx);
    if (args.todos === undefined) return view(current);
    const next = args.merge ? mergeTodos(current, args.todos) : replaceTodos(args.todos);
    if (next.length > MAX_ITEMS) {
      throw new Error(
        `The list would have ${next.length} items; the limit is ${MAX_ITEMS}. Remove finished ones.`,
      );
    }
    ctx.session.set(SESSION_KEY, next);
    return view(next);
  },
});

/** The session's list (empty when none was written). */
export function readTodos(ctx: Pick<ToolContext, "session">): TodoItem[] {
  const stored = ctx.session.get(SESSION_KEY);
  return Array.isArray(stored) ? (stored as TodoItem[]) : [];
}

function replaceTodos(items: ItemArg[]): TodoItem[] {
  assertUniqueIds(items);
  return items.map((item) => newItem(item));
}

function mergeTodos(current: TodoItem[], updates: ItemArg[]): TodoItem[] {
  assertUniqueIds(updates);
  const next = current.map((item) => ({ ...item }));
  for (const update of updates) {
    const existing = next.find((item) => item.id === update.id);
    if (!existing) {
      next.push(newItem(update));
      continue;
    }
    if (update.content !== undefined) existing.content = update.content;
    if (update.status !== undefined) existing.status = update.status;
  }
  return next;
}

function newItem(item: ItemArg): TodoItem {
  if (item.content === undefined || item.content.trim() === "") {
    throw new Error(`Todo "${item.id}" is new and needs a content (what to do).`);
  }
  return { id: item.id, content: item.content, status: item.status ?? "pending" };
}

function assertUniqueIds(items: ItemArg[]): void {
  const seen = new Set<string>();
  for (const { id } of items) {
    if (seen.has(id)) throw new Error(`Duplicate todo id "${id}": give each item its own id.`);
    seen.add(id);
  }
}

function view(todos: TodoItem[]): { todos: TodoItem[]; summary: string } {
  return { todos, summary: summarize(todos) };
}

/** One line of counts, e.g. "4 items: 1 completed, 1 in progress, 2 pending". */
export function summarize(todos: TodoItem[]): string {
  if (todos.length === 0) return "The todo list is empty.";
  const parts = STATUSES.map((status) => {
    const n = todos.filter((t) => t.status === status).length;
    return n > 0 ? `${n} ${status.replace("_", " ")}` : "";
  }).filter(Boolean);
  return `${todos.length} item${todos.length === 1 ? "" : "s"}: ${parts.join(", ")}`;
}
