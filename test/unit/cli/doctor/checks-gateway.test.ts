import { describe, expect, it } from "vitest";
import { gatewayChecks } from "../../../../src/cli/doctor/checks-remote.js";
import type { HermesConfig } from "../../../../src/config/defaults.js";

const config = (extra: Record<string, unknown> = {}): HermesConfig => extra as HermesConfig;
const line = (lines: ReturnType<typeof gatewayChecks>, name: string) => lines.find((l) => l.name === name);

describe("gatewayChecks", () => {
  it("names every variable a switched-on platform still lacks, and is content when all are set", () => {
    const lines = gatewayChecks(config(), {
      EMAIL_ADDRESS: "bot@example.test",
      EMAIL_IMAP_HOST: "imap.example.test",
      SIGNAL_HTTP_URL: "http://127.0.0.1:8080",
      TWILIO_ACCOUNT_SID: "AC123",
      TWILIO_PHONE_NUMBER: "+15550001111",
    });
    expect(line(lines, "email")).toMatchObject({
      status: "fail",
      fix: "hermes config set EMAIL_PASSWORD <value>",
    });
    expect(line(lines, "email")?.detail).toContain("EMAIL_PASSWORD, EMAIL_SMTP_HOST are missing");
    expect(line(lines, "signal")?.detail).toContain("SIGNAL_ACCOUNT");
    expect(line(lines, "sms")).toMatchObject({
      status: "fail",
      fix: "hermes config set TWILIO_AUTH_TOKEN <value>",
    });
    const ok = gatewayChecks(config({ signal: { account: "+15550002222" } }), {
      SIGNAL_HTTP_URL: "http://127.0.0.1:8080",
      TWILIO_ACCOUNT_SID: "AC123",
      TWILIO_AUTH_TOKEN: "secret-token",
      TWILIO_PHONE_NUMBER: "+15550001111",
    });
    expect(line(ok, "signal")?.status).toBe("ok"); // the account may live in config.yaml
    expect(line(ok, "sms")?.status).toBe("ok");
  });

  it("fails an API server key the server would refuse for being short, padding not counted", () => {
    const on = { API_SERVER_ENABLED: "true" };
    expect(
      line(gatewayChecks(config(), { ...on, API_SERVER_KEY: "  short-key      " }), "api server")?.status,
    ).toBe("fail");
    expect(line(gatewayChecks(config(), { ...on }), "api server")?.detail).toContain("not set");
    expect(
      line(gatewayChecks(config(), { ...on, API_SERVER_KEY: "0123456789abcdef" }), "api server")?.status,
    ).toBe("ok");
  });
});
