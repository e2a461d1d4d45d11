import { describe, expect, it } from "vitest";
import { isLocalOrLanUrl } from "../../../src/ai/local-endpoint.js";

describe("isLocalOrLanUrl", () => {
  it.each([
    ["http://localhost:8080/v1", true],
    ["http://LOCALHOST:8080/v1", true],
    ["http://api.localhost/v1", true],
    ["http://127.0.0.1:1/v1", true],
    ["http://127.8.9.10/v1", true],
    ["http://[::1]:8000/v1", true],
    ["http://[::ffff:127.0.0.1]:8000/v1", true],
    ["http://0.0.0.0:11434", true],
    ["http://10.1.2.3:8000/v1", true],
    ["http://172.16.0.5/v1", true],
    ["http://172.31.255.1/v1", true],
    ["http://192.168.1.20:1234/v1", true],
    ["http://100.101.102.103:11434", true],
    ["http://169.254.1.1/", true],
    ["http://[fd12:3456::1]/v1", true],
    ["http://[fe80::1]/v1", true],
    ["http://ollama:11434/v1", true],
    ["http://gpu-box.local:8080/v1", true],
    ["http://host.docker.internal:11434/v1", true],
    ["http://router.lan/v1", true],
    ["https://openrouter.ai/api/v1", false],
    ["https://api.anthropic.com", false],
    ["http://172.32.0.1/v1", false],
    ["http://8.8.8.8/", false],
    ["http://[2001:db8::1]/v1", false],
    ["https://localhost.example.com/v1", false],
    ["https://127.0.0.1.nip.io/v1", false],
    ["not a url", false],
    ["", false],
  ])("%s → %s", (url, local) => {
    expect(isLocalOrLanUrl(url)).toBe(local);
  });
});
