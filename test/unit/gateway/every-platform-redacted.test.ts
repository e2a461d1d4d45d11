/**
 * Every platform the gateway can run, the new ones included, is built behind the secret redactor:
 * a reply, an edit and a media caption pass it before the platform's own code sees them. The
 * redactor here throws after recording, so nothing is ever sent anywhere.
 */
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../../src/config/defaults.js";
import { createAdapter, PLATFORMS } from "../../../src/gateway/platforms/registry.js";
import type { Redactor } from "../../../src/util/redact.js";

describe("createAdapter", () => {
  it.each(Object.keys(PLATFORMS))(
    "puts %s behind the redactor for sends, edits and captions",
    async (name) => {
      const seen: string[] = [];
      const redactor = {
        redact(text: string) {
          seen.push(text);
          throw new Error("stop before the platform");
        },
      } as unknown as Redactor;
      const adapter = await createAdapter(name, {
        home: "/nonexistent",
        config: defaultConfig(),
        env: {},
        redactor,
      });
      const target = { chatId: "1" };
      expect(() => adapter.send(target, "reply sk-secret")).toThrow("stop before the platform");
      expect(() => adapter.edit(target, "m1", "edit sk-secret")).toThrow("stop before the platform");
      expect(() =>
        adapter.sendMedia(target, {
          path: "/nonexistent/a.png",
          kind: "photo",
          caption: "caption sk-secret",
        }),
      ).toThrow("stop before the platform");
      expect(seen).toEqual(["reply sk-secret", "edit sk-secret", "caption sk-secret"]);
    },
  );
});
