/** config.yaml shown masked where it stands, and `.env` shown by name only. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { envFileNames, maskedConfigText } from "../../../src/dashboard/config-view.js";

function home(config?: string, env?: string): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-configview-"));
  if (config !== undefined) writeFileSync(join(dir, "config.yaml"), config);
  if (env !== undefined) writeFileSync(join(dir, ".env"), env);
  return dir;
}

describe("maskedConfigText", () => {
  it("masks secret values in place and keeps comments, order and references", () => {
    const text = [
      "# my settings",
      "model:",
      "  default: fake-model   # the cheap one",
      "  api_key: sk-live-0123456789abcdef",
      "gateway:",
      "  telegram:",
      "    bot_token: '12345:ABCDEFGHIJKLMNOP'",
      "memory:",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal config reference
      "  api_key: ${MEM_KEY}",
      "  passwords: [hunter2-long-one, other-long-secret]",
      "",
    ].join("\n");
    const masked = maskedConfigText(home(text)).text ?? "";
    expect(masked).toContain("# my settings");
    expect(masked).toContain("default: fake-model   # the cheap one");
    expect(masked).toContain('api_key: "sk-l****"');
    expect(masked).toContain('bot_token: "1234****"');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal config reference
    expect(masked).toContain("api_key: ${MEM_KEY}");
    expect(masked).not.toMatch(/sk-live-0123|ABCDEFGH/);
    expect(masked.split("\n")).toHaveLength(text.split("\n").length);
  });

  it("masks a block scalar secret (a PEM key) whole", () => {
    const text =
      "ssh:\n  private_key: |\n    -----BEGIN KEY-----\n    c2VjcmV0LWJ5dGVz\n    -----END KEY-----\nother: 1\n";
    const masked = maskedConfigText(home(text)).text ?? "";
    expect(masked).not.toContain("c2VjcmV0LWJ5dGVz");
    expect(masked).toContain("other: 1");
  });

  it("withholds a file that does not parse rather than show it unmasked", () => {
    const result = maskedConfigText(home("model:\n  api_key: sk-x-0123456789\n bad: [\n"));
    expect(result.text).toBeNull();
    expect(result.error).toMatch(/invalid YAML/);
    expect(maskedConfigText(home()).text).toBeNull();
  });
});

describe("envFileNames", () => {
  it("lists names only, marking those the real environment overrides", () => {
    const dir = home(
      undefined,
      "# keys\nOPENROUTER_API_KEY=sk-or-secret-value\nTELEGRAM_ALLOWED_USERS=1,2\n",
    );
    const names = envFileNames(dir, { TELEGRAM_ALLOWED_USERS: "3" });
    expect(names.exists).toBe(true);
    expect(names.names).toEqual([
      { name: "OPENROUTER_API_KEY", overridden: false },
      { name: "TELEGRAM_ALLOWED_USERS", overridden: true },
    ]);
    expect(JSON.stringify(names)).not.toContain("sk-or-secret-value");
    expect(envFileNames(home(), {})).toMatchObject({ exists: false, names: [] });
  });
});
