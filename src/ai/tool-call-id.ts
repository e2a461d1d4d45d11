import { randomBytes } from "node:crypto";

/** A fresh tool-call id in OpenAI's shape (`call_` + 24 hex chars), for servers and text formats that omit one. */
export function newToolCallId(): string {
  return `call_${randomBytes(12).toString("hex")}`;
}
