// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings hold literal config ${VAR} syntax
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "dotenv";
import { describe, expect, it } from "vitest";
import { loadEnvFile, quoteEnvValue, replaceAssignment, setEnvVar } from "../../../src/config/env-file.js";
import { ConfigError } from "../../../src/config/errors.js";
import { useTempHome } from "./helpers.js";

describe("loadEnvFile", () => {
  const tempHome = useTempHome();

  it("adds the file's variables without overriding the real environment", () => {
    const home = tempHome();
    writeFileSync(
      join(home, ".env"),
      "# keys\nOPENROUTER_API_KEY=from-file\nHERMES_TS_TEST_ONLY_KEY='exa'\nEMPTY_IN_ENV=file\n",
    );
    const real = { OPENROUTER_API_KEY: "from-env", EMPTY_IN_ENV: "", PATH: "/bin" };
    const result = loadEnvFile(home, real);
    expect(result.env).toEqual({
      OPENROUTER_API_KEY: "from-env",
      HERMES_TS_TEST_ONLY_KEY: "exa",
      EMPTY_IN_ENV: "",
      PATH: "/bin",
    });
    expect(result.loaded).toEqual(["HERMES_TS_TEST_ONLY_KEY"]);
    expect(result.exists).toBe(true);
    expect(real).toEqual({ OPENROUTER_API_KEY: "from-env", EMPTY_IN_ENV: "", PATH: "/bin" });
    expect(process.env["HERMES_TS_TEST_ONLY_KEY"]).toBeUndefined();
  });

  it("returns a copy of the environment when there is no .env", () => {
    const home = tempHome();
    const real = { A: "1" };
    const result = loadEnvFile(home, real);
    expect(result).toMatchObject({ env: { A: "1" }, loaded: [], exists: false });
    expect(result.env).not.toBe(real);
  });
});

describe("setEnvVar", () => {
  const tempHome = useTempHome();

  it("creates .env with mode 0600", () => {
    const home = tempHome();
    const path = setEnvVar(home, "OPENROUTER_API_KEY", "sk-or-123");
    expect(readFileSync(path, "utf8")).toBe("OPENROUTER_API_KEY=sk-or-123\n");
    if (process.platform !== "win32") expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("replaces an assignment in place, keeping comments and other lines", () => {
    const home = tempHome();
    const path = join(home, ".env");
    writeFileSync(
      path,
      "# Provider keys\nexport OPENROUTER_API_KEY=old\n\n# Tools\nHERMES_TS_TEST_ONLY_KEY=exa # search\n",
      {
        mode: 0o644,
      },
    );
    setEnvVar(home, "OPENROUTER_API_KEY", "new");
    setEnvVar(home, "TAVILY_API_KEY", "tv");
    expect(readFileSync(path, "utf8")).toBe(
      "# Provider keys\nOPENROUTER_API_KEY=new\n\n# Tools\nHERMES_TS_TEST_ONLY_KEY=exa # search\nTAVILY_API_KEY=tv\n",
    );
    if (process.platform !== "win32") expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("rejects names that are not environment variable names", () => {
    const home = tempHome();
    expect(() => setEnvVar(home, "BAD-NAME", "x")).toThrow(ConfigError);
  });
});

describe("replaceAssignment", () => {
  it("replaces a multi-line quoted value whole and drops later duplicates", () => {
    const text = 'A=1\nKEY="line one\nline two"\nB=2\nKEY=again\n';
    expect(replaceAssignment(text, "KEY", "KEY=x")).toBe("A=1\nKEY=x\nB=2\n");
  });

  it("keeps Windows line endings", () => {
    expect(replaceAssignment("A=1\r\nB=2\r\n", "B", "B=3")).toBe("A=1\r\nB=3\r\n");
  });
});

describe("quoteEnvValue", () => {
  it.each([
    "sk-or-v1-abc123",
    "https://example.com/v1?x=1",
    "has space",
    "has #hash",
    "it's",
    "multi\nline",
    "pa$$word",
    "",
  ])("round-trips %j through dotenv", (value) => {
    expect(parse(`K=${quoteEnvValue("K", value)}\n`)["K"]).toBe(value);
  });

  it("refuses a value the Node and Python readers would disagree on", () => {
    expect(() => quoteEnvValue("K", `it's "both" \\ $`)).toThrow(/edit the file by hand/);
    expect(() => quoteEnvValue("K", "${EXPANDED_BY_PYTHON}")).toThrow(/edit the file by hand/);
  });
});
