/**
 * `hermes setup` and `hermes model` for a provider whose endpoint the user supplies (Azure AI
 * Foundry), through the built CLI against a loopback fake that speaks the OpenAI wire and, as an
 * Azure resource does, refuses any request without the right `api-key` header or with a bearer.
 * A second loopback server accepts connections and never answers. Every wrong answer (a bad URL,
 * plain http to another machine, an address that does not answer, a refused key) is said clearly
 * and asked again, keeping what was already entered.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { type FakeBedrock, startFakeBedrock } from "../support/fake-llm-bedrock.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { hasTmux, Terminal } from "../support/terminal.js";
import { answer } from "../support/wizard-terminal.js";

const KEY = "5be0c2d94f1a4e7f9a3c6b8d2e0f1a7c";
const WRONG = "0000ffff1111eeee2222dddd3333cccc";
const llm = useFakeLlm({
  models: ["gpt-4.1-deploy", "o4-mini-deploy"],
  requireKey: { header: "api-key", value: KEY },
});

/** A custom OpenAI-compatible server started with a key: it wants it as a bearer. */
const keyed = useFakeLlm({
  models: ["served-7b"],
  requireKey: { header: "authorization", value: "Bearer srv-key-4411" },
});

/** Accepts TCP connections and never says a word: an endpoint that does not answer. */
let silent: Server;
let silentUrl = "";
const held = new Set<Socket>();
beforeAll(async () => {
  silent = createServer((socket) => {
    held.add(socket);
    socket.on("close", () => held.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const address = silent.address();
  silentUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/openai/v1`;
});
afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

type Yaml = { model: Record<string, unknown> };
const config = (home: string): Yaml => parse(readFileSync(join(home, "config.yaml"), "utf8")) as Yaml;
const dotenv = (home: string): string => readFileSync(join(home, ".env"), "utf8");

/** Every request the fake got was keyed the Azure way, with no bearer. */
function keyedTheAzureWay(): void {
  expect(llm.requests.length).toBeGreaterThan(0);
  for (const request of llm.requests.filter((r) => r.headers["api-key"] === KEY)) {
    expect(request.headers.authorization).toBeUndefined();
  }
  expect(llm.requests.some((r) => r.headers.authorization !== undefined)).toBe(false);
}

describe.skipIf(!hasTmux)("hermes setup on a terminal: azure-foundry", () => {
  it("asks for the endpoint, survives every wrong answer, and saves endpoint, key and deployment", async () => {
    const { home, cwd } = tempHome();
    llm.enqueue(reply().text("ok"));
    const term = Terminal.start({ home, cwd, args: ["setup", "model"], rows: 60 });
    let screen: string;
    try {
      await answer(term, "Provider (number or name)", "azure");
      await term.waitFor("Azure AI Foundry needs your resource's endpoint");
      // Not a URL, then plain http to another machine: each refused with the reason, asked again.
      await answer(term, "Azure AI Foundry endpoint", "my resource");
      await term.waitFor("has spaces in it");
      await answer(term, "Azure AI Foundry endpoint", "ftp://res.openai.azure.com/");
      await term.waitFor("is not an http(s) URL");
      await answer(term, "Azure AI Foundry endpoint", "http://res.openai.azure.com/openai/v1");
      await term.waitFor("would send your key unencrypted to res.openai.azure.com");
      // An address that accepts connections and never answers: the listing gives up, the key stays.
      await answer(term, "Azure AI Foundry endpoint", `${silentUrl}/chat/completions`);
      await term.waitFor(`Using ${silentUrl} (/chat/completions dropped`);
      await answer(term, "Authentication: 1. API key  2. Entra ID", "1");
      await answer(
        term,
        "Paste your Azure AI Foundry API key (stored in .env as AZURE_FOUNDRY_API_KEY)",
        WRONG,
      );
      await term.waitFor("did not answer", 20_000);
      await term.waitFor("Check the address");
      await answer(term, "Azure AI Foundry endpoint", llm.url);
      // The fake refuses the wrong key: asked again, the endpoint kept.
      await term.waitFor("refused the key (HTTP 401)");
      await answer(term, "Paste your Azure AI Foundry API key", KEY);
      screen = await term.waitFor("Model (number, id or part of one)");
      expect(screen).toContain("the name of a deployment on the resource");
      expect(screen).toMatch(/1\. gpt-4\.1-deploy/);
      await answer(term, "Model (number, id or part of one)", "1");
      await term.waitFor("✓ gpt-4.1-deploy answered");
      screen = await term.waitFor("[exit 0]");
    } finally {
      term.kill();
    }
    expect(screen).not.toContain(KEY);
    expect(screen).not.toContain(WRONG);
    expect(config(home).model).toMatchObject({
      provider: "azure-foundry",
      base_url: llm.url,
      default: "gpt-4.1-deploy",
    });
    expect(dotenv(home)).toContain(`AZURE_FOUNDRY_API_KEY=${KEY}`);
    expect(dotenv(home)).not.toContain(WRONG);
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    keyedTheAzureWay();

    // The runtime and hermes doctor read what setup wrote, with no environment at all.
    llm.enqueue(reply().text("hello from the deployment"));
    const chat = await runHermes(["-z", "hi"], { home, cwd });
    expect(chat.stdout.trim()).toBe("hello from the deployment");
    const doctor = await runHermes(["doctor"], { home, cwd, timeoutMs: 60_000 });
    expect(doctor.stdout).toMatch(/✓ .*primary: azure-foundry.*key accepted, model gpt-4\.1-deploy/);
    keyedTheAzureWay();
  });

  it("Ctrl+C after the endpoint and key were typed writes nothing", async () => {
    const { home, cwd } = tempHome();
    const term = Terminal.start({ home, cwd, args: ["setup", "model"] });
    try {
      await answer(term, "Provider (number or name)", "azure-foundry");
      await answer(term, "Azure AI Foundry endpoint", llm.url);
      await answer(term, "Authentication: 1. API key  2. Entra ID", "1");
      await answer(term, "Paste your Azure AI Foundry API key", KEY);
      // Left at the model question: the endpoint and key typed so far are not written anywhere.
      await term.waitFor("Model (number, id or part of one)");
      term.keys("C-c");
      await term.waitFor("[exit 1]");
    } finally {
      term.kill();
    }
    expect(existsSync(join(home, "config.yaml"))).toBe(false);
    expect(existsSync(join(home, ".env"))).toBe(false);
  });
});

describe("hermes setup --non-interactive: azure-foundry and custom from flags and the environment", () => {
  it("names the missing endpoint flag and variable, then the missing key variable", async () => {
    const { home, cwd } = tempHome();
    const noUrl = await runHermes(["setup", "--non-interactive", "--provider", "azure-foundry"], {
      home,
      cwd,
    });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain("azure-foundry needs its endpoint");
    expect(noUrl.stderr).toContain("--base-url URL or set AZURE_FOUNDRY_BASE_URL");

    const noKey = await runHermes(
      ["setup", "--non-interactive", "--provider", "azure", "--base-url", llm.url],
      { home, cwd },
    );
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("AZURE_FOUNDRY_API_KEY is not set");

    const custom = await runHermes(["setup", "--non-interactive", "--provider", "custom"], { home, cwd });
    expect(custom.code).toBe(2);
    expect(custom.stderr).toContain("--base-url URL or set OPENAI_BASE_URL");
    expect(existsSync(join(home, "config.yaml"))).toBe(false);
    expect(llm.requests).toHaveLength(0);
  });

  it("refuses plain http to a remote host and a URL with a password before sending anything", async () => {
    const { home, cwd } = tempHome();
    const env = { AZURE_FOUNDRY_API_KEY: KEY };
    const http = await runHermes(
      [
        "setup",
        "--non-interactive",
        "--provider",
        "azure",
        "--base-url",
        "http://res.openai.azure.com/openai/v1",
      ],
      { home, cwd, env },
    );
    expect(http.code).toBe(2);
    expect(http.stderr).toContain("unencrypted");
    // The same through the variable instead of the flag.
    const viaEnv = await runHermes(["setup", "--non-interactive", "--provider", "azure"], {
      home,
      cwd,
      env: { ...env, AZURE_FOUNDRY_BASE_URL: "http://10.1.2.3/openai/v1" },
    });
    expect(viaEnv.code).toBe(2);
    expect(viaEnv.stderr).toContain("unencrypted");
    const creds = await runHermes(
      [
        "setup",
        "--non-interactive",
        "--provider",
        "azure",
        "--base-url",
        "https://u:pw-9@res.openai.azure.com/",
      ],
      { home, cwd, env },
    );
    expect(creds.code).toBe(2);
    expect(creds.stderr).toContain("user name or password");
    expect(creds.stderr).not.toContain("pw-9");
    const credsViaEnv = await runHermes(["setup", "--non-interactive", "--provider", "azure"], {
      home,
      cwd,
      env: { ...env, AZURE_FOUNDRY_BASE_URL: "https://u:pw-9@res.openai.azure.com/" },
    });
    expect(credsViaEnv.code).toBe(2);
    expect(credsViaEnv.stderr).toContain("endpoint (model.base_url or AZURE_FOUNDRY_BASE_URL)");
    expect(credsViaEnv.stderr).not.toContain("pw-9");
    expect(existsSync(join(home, "config.yaml"))).toBe(false);
  });

  it("sets it up from --base-url and the key variable: one tiny test keyed as api-key, all saved", async () => {
    const { home, cwd } = tempHome();
    llm.enqueue(reply().text("ok"));
    const result = await runHermes(
      [
        "setup",
        "--non-interactive",
        "--provider",
        "azure",
        "-m",
        "o4-mini-deploy",
        "--base-url",
        `${llm.url}/`,
      ],
      { home, cwd, env: { AZURE_FOUNDRY_API_KEY: KEY } },
    );
    expect(result.stderr).toContain("✓ o4-mini-deploy answered");
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe("azure-foundry:o4-mini-deploy");
    expect(config(home).model).toMatchObject({ provider: "azure-foundry", base_url: llm.url });
    expect(dotenv(home)).toContain(`AZURE_FOUNDRY_API_KEY=${KEY}`);
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    expect(llm.chatRequests[0]?.headers["api-key"]).toBe(KEY);
    keyedTheAzureWay();
  });

  it("a refused key saves nothing; an endpoint that does not answer saves nothing", async () => {
    const { home, cwd } = tempHome();
    const refused = await runHermes(
      ["setup", "--non-interactive", "--provider", "azure", "-m", "gpt-4.1-deploy", "--base-url", llm.url],
      { home, cwd, env: { AZURE_FOUNDRY_API_KEY: WRONG } },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/401|Access denied/);
    expect(refused.stderr).toContain("Nothing saved");
    expect(`${refused.stdout}${refused.stderr}`).not.toContain(WRONG);
    const dead = await runHermes(
      [
        "setup",
        "--non-interactive",
        "--provider",
        "azure",
        "-m",
        "gpt-4.1-deploy",
        "--base-url",
        "http://127.0.0.1:9/v1",
      ],
      { home, cwd, env: { AZURE_FOUNDRY_API_KEY: KEY } },
    );
    expect(dead.code).toBe(1);
    expect(dead.stderr).toContain("Nothing saved");
    expect(existsSync(join(home, "config.yaml"))).toBe(false);
    expect(existsSync(join(home, ".env"))).toBe(false);
  });

  it("the flags belong to --non-interactive", async () => {
    const { home, cwd } = tempHome();
    const result = await runHermes(["setup", "--provider", "azure"], { home, cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("go with --non-interactive");
  });
});

describe("hermes model: switching to azure-foundry", () => {
  it("without a terminal and without an endpoint, names what to set and changes nothing", async () => {
    const { home, cwd } = tempHome("model:\n  provider: openrouter\n  default: x/y\n");
    const result = await runHermes(["model", "azure:gpt-4.1-deploy"], { home, cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("set AZURE_FOUNDRY_BASE_URL");
    expect(result.stderr).toContain("run hermes model on a terminal");
    expect(config(home).model).toMatchObject({ provider: "openrouter", default: "x/y" });
    const list = await runHermes(["model", "--list", "azure"], { home, cwd });
    expect(list.code).toBe(2);
    expect(list.stderr).toContain(
      "azure-foundry needs its endpoint, and none is configured: set AZURE_FOUNDRY_BASE_URL",
    );
  });

  it("with an endpoint in config.yaml, a new deployment keeps it", async () => {
    const { home, cwd } = tempHome(
      `model:\n  provider: azure-foundry\n  base_url: ${llm.url}\n  default: gpt-4.1-deploy\n`,
    );
    const result = await runHermes(["model", "azure:o4-mini-deploy"], {
      home,
      cwd,
      env: { AZURE_FOUNDRY_API_KEY: KEY },
    });
    expect(result.code).toBe(0);
    expect(config(home).model).toMatchObject({
      provider: "azure-foundry",
      base_url: llm.url,
      default: "o4-mini-deploy",
    });
  });

  it.skipIf(!hasTmux)(
    "on a terminal, asks for the endpoint (a bad one first) and the key, then saves",
    async () => {
      const { home, cwd } = tempHome("model:\n  provider: openrouter\n  default: x/y\n");
      const term = Terminal.start({ home, cwd, args: ["model", "azure:gpt-4.1-deploy"] });
      try {
        await answer(term, "Azure AI Foundry endpoint", "http://10.0.0.8/openai/v1");
        await term.waitFor("unencrypted");
        await answer(term, "Azure AI Foundry endpoint", llm.url);
        await answer(term, "Authentication: 1. API key  2. Entra ID", "1");
        await answer(term, "Paste the Azure AI Foundry key (stored in .env as AZURE_FOUNDRY_API_KEY)", KEY);
        await term.waitFor("[exit 0]");
      } finally {
        term.kill();
      }
      expect(config(home).model).toMatchObject({
        provider: "azure-foundry",
        base_url: llm.url,
        default: "gpt-4.1-deploy",
      });
      expect(dotenv(home)).toContain(`AZURE_FOUNDRY_API_KEY=${KEY}`);
      expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    },
  );

  it.skipIf(!hasTmux)(
    "the picker switches from a local server to azure-foundry the way setup does",
    async () => {
      const { home, cwd } = tempHome(
        `model:\n  provider: custom\n  base_url: ${llm.url}\n  default: other\n`,
      );
      const term = Terminal.start({ home, cwd, args: ["model"], rows: 60 });
      try {
        await answer(term, "Provider (number or name)", "azure-foundry");
        await answer(term, "Azure AI Foundry endpoint", llm.url);
        await answer(term, "Authentication: 1. API key  2. Entra ID", "1");
        await answer(term, "Paste your Azure AI Foundry API key", KEY);
        await answer(term, "Model (number, id or part of one)", "o4-mini");
        await term.waitFor("[exit 0]");
      } finally {
        term.kill();
      }
      expect(config(home).model).toMatchObject({
        provider: "azure-foundry",
        base_url: llm.url,
        default: "o4-mini-deploy",
      });
    },
  );
});

describe.skipIf(!hasTmux)("hermes setup on a terminal: a custom server that wants a key", () => {
  it("asks for the key when the server refuses, keeps it in .env and config.yaml refers to it", async () => {
    const { home, cwd } = tempHome();
    keyed.enqueue(reply().text("ok"));
    const term = Terminal.start({ home, cwd, args: ["setup", "model"], rows: 60 });
    let screen: string;
    try {
      await answer(term, "Provider (number or name)", "custom");
      await answer(term, "Server address", "192.168.0.9:8000/v1");
      await term.waitFor("needs http:// or https:// in front");
      await answer(term, "Server address", `${keyed.url}/models`);
      await term.waitFor("(/models dropped");
      await term.waitFor("The server wants a key.");
      await answer(term, "Paste the server's key (stored in .env as CUSTOM_API_KEY)", "wrong-key-1");
      await term.waitFor("The server wants a key and refused this one.");
      await answer(term, "Paste the server's key (stored in .env as CUSTOM_API_KEY)", "srv-key-4411");
      await answer(term, "Model (number, id or part of one)", "1");
      await term.waitFor("✓ served-7b answered");
      screen = await term.waitFor("[exit 0]");
    } finally {
      term.kill();
    }
    expect(screen).not.toContain("srv-key-4411");
    expect(config(home).model).toMatchObject({
      provider: "custom",
      base_url: keyed.url,
      default: "served-7b",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the reference as config.yaml holds it
      api_key: "${CUSTOM_API_KEY}",
    });
    expect(dotenv(home)).toContain("CUSTOM_API_KEY=srv-key-4411");
    expect(dotenv(home)).not.toContain("wrong-key-1");
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);

    // The next run expands the reference from .env and is let in.
    keyed.enqueue(reply().text("served answer"));
    const chat = await runHermes(["-z", "hi"], { home, cwd });
    expect(chat.stdout.trim()).toBe("served answer");
    expect(keyed.chatRequests.at(-1)?.headers.authorization).toBe("Bearer srv-key-4411");
  });
});

describe.skipIf(!hasTmux)("hermes setup on a terminal: a provider that needs a login", () => {
  it("says how to log in and asks for another provider instead of ending", async () => {
    const { home, cwd } = tempHome();
    llm.enqueue(reply().text("ok"));
    const term = Terminal.start({ home, cwd, args: ["setup", "model"], rows: 60 });
    try {
      await answer(term, "Provider (number or name)", "codex");
      await term.waitFor("Log in with: hermes auth add openai-codex --type oauth");
      await term.waitFor("Pick another provider");
      await answer(term, "Provider (number or name)", "azure");
      await answer(term, "Azure AI Foundry endpoint", llm.url);
      await answer(term, "Authentication: 1. API key  2. Entra ID", "1");
      await answer(term, "Paste your Azure AI Foundry API key", KEY);
      await answer(term, "Model (number, id or part of one)", "gpt-4.1-deploy");
      await term.waitFor("[exit 0]");
    } finally {
      term.kill();
    }
    expect(config(home).model).toMatchObject({ provider: "azure-foundry", default: "gpt-4.1-deploy" });
  });
});

describe.skipIf(!hasTmux)("hermes setup on a terminal: AWS Bedrock's region", () => {
  let bedrock: FakeBedrock;
  beforeAll(async () => {
    bedrock = await startFakeBedrock();
  });
  afterAll(async () => {
    await bedrock.close();
  });

  it("asks for the region (a wrong one refused), keeps the configured endpoint, and signs the test for it", async () => {
    const model = "us.anthropic.claude-sonnet-4-20250514-v1:0";
    const { home, cwd } = tempHome(
      `model:\n  provider: bedrock\n  base_url: ${bedrock.url}\n  default: ${model}\n`,
    );
    bedrock.enqueue(reply().text("ok"));
    const term = Terminal.start({
      home,
      cwd,
      args: ["setup", "model"],
      rows: 60,
      env: { AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "secret", AWS_REGION: "us-east-2" },
    });
    try {
      await answer(term, "Provider (number or name)", "");
      await term.waitFor(`Address kept from config.yaml: ${bedrock.url}`);
      await answer(term, "AWS region for Bedrock (bedrock.region) [us-east-2]", "mars-central");
      await term.waitFor('"mars-central" is not an AWS region');
      await answer(term, "AWS region for Bedrock (bedrock.region)", "eu-west-1");
      await answer(term, "Model", "");
      await term.waitFor(`✓ ${model} answered`);
      await term.waitFor("[exit 0]");
    } finally {
      term.kill();
    }
    expect(String(bedrock.requests[0]?.headers["authorization"])).toContain(
      "/eu-west-1/bedrock/aws4_request",
    );
    const written = parse(readFileSync(join(home, "config.yaml"), "utf8")) as Yaml & {
      bedrock?: Record<string, unknown>;
    };
    expect(written.model).toMatchObject({ provider: "bedrock", base_url: bedrock.url, default: model });
    expect(written.bedrock).toEqual({ region: "eu-west-1" });
  });
});

describe("hermes setup --non-interactive: a custom server that wants a key", () => {
  it("names CUSTOM_API_KEY when the server refuses, then sets up with it, kept in .env", async () => {
    const { home, cwd } = tempHome();
    const args = ["setup", "--non-interactive", "--provider", "custom", "--base-url", keyed.url];
    const refused = await runHermes(args, { home, cwd });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("refused the key (HTTP 401); set CUSTOM_API_KEY");
    expect(existsSync(join(home, "config.yaml"))).toBe(false);

    keyed.enqueue(reply().text("ok"));
    const result = await runHermes(args, { home, cwd, env: { CUSTOM_API_KEY: "srv-key-4411" } });
    expect(result.stderr).toContain("✓ served-7b answered");
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("srv-key-4411");
    expect(config(home).model).toMatchObject({
      provider: "custom",
      base_url: keyed.url,
      default: "served-7b",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the reference as config.yaml holds it
      api_key: "${CUSTOM_API_KEY}",
    });
    expect(dotenv(home)).toContain("CUSTOM_API_KEY=srv-key-4411");
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);

    keyed.enqueue(reply().text("served again"));
    const chat = await runHermes(["-z", "hi"], { home, cwd });
    expect(chat.stdout.trim()).toBe("served again");
  });
});
