/**
 * The gateway section of `hermes setup` asked with scripted answers: which variables each
 * platform writes to .env, what an empty answer keeps, and that leaving mid-platform returns nothing.
 */
import { describe, expect, it } from "vitest";
import { PromptCancelled, scriptedPrompter } from "../../../../src/cli/setup/prompter.js";
import { gatewaySection } from "../../../../src/cli/setup/sections.js";
import { defaultConfig } from "../../../../src/config/defaults.js";

const ctx = (env: Record<string, string> = {}) => ({ config: defaultConfig(), env });
// Telegram, Discord, Slack declined.
const skipChat = ["n", "n", "n"];

describe("gatewaySection", () => {
  it("asks email's address, password and servers; Signal's daemon (default address) and number; Twilio's three; Mattermost's, Matrix's and Home Assistant's server and token", async () => {
    const p = scriptedPrompter([
      ...skipChat,
      "y",
      "bot@example.test",
      "app-password",
      "imap.example.test",
      "smtp.example.test",
      "a@example.test, b@example.test",
      "y",
      "",
      "+15550001111",
      "",
      "y",
      "AC123",
      "tw-token",
      "+15554445555",
      "+15556667777",
      "y",
      "https://mm.example.test",
      "mm-token",
      "@owner",
      "y",
      "https://matrix.example.test",
      "mx-token",
      "@owner:example.test",
      "n",
      "y",
      "",
      "ha-token",
      "",
    ]);
    const edits = await gatewaySection(ctx(), p);
    expect(edits.config).toEqual([]);
    expect(edits.env).toEqual([
      { name: "EMAIL_ADDRESS", value: "bot@example.test" },
      { name: "EMAIL_PASSWORD", value: "app-password" },
      { name: "EMAIL_IMAP_HOST", value: "imap.example.test" },
      { name: "EMAIL_SMTP_HOST", value: "smtp.example.test" },
      { name: "EMAIL_ALLOWED_USERS", value: "a@example.test,b@example.test" },
      { name: "SIGNAL_HTTP_URL", value: "http://127.0.0.1:8080" },
      { name: "SIGNAL_ACCOUNT", value: "+15550001111" },
      { name: "TWILIO_ACCOUNT_SID", value: "AC123" },
      { name: "TWILIO_AUTH_TOKEN", value: "tw-token" },
      { name: "TWILIO_PHONE_NUMBER", value: "+15554445555" },
      { name: "SMS_ALLOWED_USERS", value: "+15556667777" },
      { name: "MATTERMOST_URL", value: "https://mm.example.test" },
      { name: "MATTERMOST_TOKEN", value: "mm-token" },
      { name: "MATTERMOST_ALLOWED_USERS", value: "@owner" },
      { name: "MATRIX_HOMESERVER", value: "https://matrix.example.test" },
      { name: "MATRIX_ACCESS_TOKEN", value: "mx-token" },
      { name: "MATRIX_ALLOWED_USERS", value: "@owner:example.test" },
      { name: "HASS_URL", value: "http://homeassistant.local:8123" },
      { name: "HASS_TOKEN", value: "ha-token" },
    ]);
    expect(p.said).toContain("? Set up email?");
  });

  it("on a re-run, Enter keeps every value (a secret is not asked back, nothing is rewritten)", async () => {
    const env = {
      TWILIO_ACCOUNT_SID: "AC123",
      TWILIO_AUTH_TOKEN: "tw-token",
      TWILIO_PHONE_NUMBER: "+15554445555",
      SMS_ALLOWED_USERS: "+15556667777",
    };
    const p = scriptedPrompter([...skipChat, "n", "n", "y", "", "", "", "", "n", "n", "n", "n"]);
    const edits = await gatewaySection(ctx(env), p);
    expect(edits.env).toEqual([]);
    expect(p.said).toContain("? Change sms?");
    expect(p.said).toContain("? Twilio auth token (empty: keep the current one)");
    expect(p.said.join("\n")).not.toContain("tw-token");
  });

  it("leaving in the middle of a platform gives no edits at all", async () => {
    const p = scriptedPrompter([...skipChat, "y", "bot@example.test", "app-password"]);
    await expect(gatewaySection(ctx(), p)).rejects.toBeInstanceOf(PromptCancelled);
  });
});
