/**
 * `/api/config` and `/api/logs`: the effective config with secrets masked (`hermes config show`),
 * edits through `hermes config set`'s validation (`checkKey`/`checkValue`, did-you-mean) and writer
 * (`setConfigValue`: comments kept, atomic), and the log files `hermes logs` reads, filtered by
 * level and session and redacted.
 */
import { join } from "node:path";
import { loadEnvFile } from "../config/env-file.js";
import { ConfigError } from "../config/errors.js";
import { loadConfig } from "../config/load.js";
import { isSecretKey, maskSecret, redactSecrets } from "../config/secrets.js";
import { checkKey, checkValue } from "../config/validate.js";
import { isEnvStyleKey, setConfigValue } from "../config/write.js";
import { logsDir } from "../util/log.js";
import { type LogFilter, parseLevelArgument } from "../util/log-filter.js";
import { lastLines, rotationChain } from "../util/log-tail.js";
import { redactText } from "../util/redact.js";
import { ApiError, field, intParam, type Route } from "./http.js";

/** The logs the dashboard tails (names as `hermes logs` takes them). */
const LOGS: Readonly<Record<string, string>> = {
  agent: "agent.log",
  errors: "errors.log",
  gateway: "gateway.log",
};

/**
 * `.env` names the API may set: allowlists and credentials. Anything else (`PATH`, `NODE_OPTIONS`,
 * a library's switch) changes how every later process runs and stays a terminal-only edit.
 */
const SETTABLE_ENV = /^[A-Z][A-Z0-9_]*_(ALLOWED_USERS|ALLOW_ALL_USERS|API_KEY|TOKEN)$/;

export interface ConfigDeps {
  home: string;
  /** The real environment (without `.env`), which `.env` loads under. */
  baseEnv: Record<string, string | undefined>;
  /** Called after a successful write so the process sees the new values (secrets registered). */
  onChange: () => void;
}

export function configRoutes(deps: ConfigDeps): Route[] {
  return [
    {
      method: "GET",
      path: "/api/config",
      summary: "the effective config (config.yaml over the defaults), secrets masked, with load warnings",
      handler: () => {
        const { env } = loadEnvFile(deps.home, deps.baseEnv);
        const loaded = loadConfig({ home: deps.home, env });
        return {
          json: {
            path: loaded.path,
            exists: loaded.exists,
            warnings: loaded.warnings,
            config: redactSecrets(loaded.config),
          },
        };
      },
    },
    {
      method: "PUT",
      path: "/api/config",
      summary:
        'set one value as `hermes config set KEY VALUE` does: {"key", "value"}; unknown keys and wrong words are refused with a did-you-mean',
      handler: ({ body }) => {
        const key = field(body, "key").trim();
        const raw = body["value"];
        if (typeof raw !== "string" && typeof raw !== "number" && typeof raw !== "boolean") {
          throw new ApiError(
            400,
            '"value" must be a string, number or boolean (as typed after `hermes config set KEY`)',
          );
        }
        const value = String(raw);
        if (key === "dashboard" || key.startsWith("dashboard.")) {
          throw new ApiError(
            403,
            "dashboard.* (its own auth) is changed in config.yaml or with `hermes config set`, not through the dashboard",
          );
        }
        if (isEnvStyleKey(key)) {
          if (!SETTABLE_ENV.test(key)) {
            throw new ApiError(
              403,
              `${key} is not an allowlist or credential name; set it with \`hermes config set\` in a terminal`,
            );
          }
        } else {
          const problem = checkKey(key) ?? checkValue(key, value);
          if (problem) {
            throw new ApiError(422, `${problem.message}. config.yaml was not changed.`, {
              key: problem.key,
              ...(problem.suggestion ? { suggestion: problem.suggestion } : {}),
            });
          }
        }
        let result: ReturnType<typeof setConfigValue>;
        try {
          result = setConfigValue(deps.home, key, value);
        } catch (error) {
          if (error instanceof ConfigError)
            throw new ApiError(422, `${error.message}. config.yaml was not changed.`);
          throw error;
        }
        deps.onChange();
        const last = result.key.split(".").pop() ?? "";
        const secret = result.target === "env" || isSecretKey(last);
        const shown = typeof result.value === "string" ? result.value : JSON.stringify(result.value);
        return {
          json: {
            key: result.key,
            target: result.target,
            value: secret ? maskSecret(shown ?? "") : result.value,
            ...(result.hint ? { hint: result.hint } : {}),
          },
        };
      },
    },
    {
      method: "GET",
      path: "/api/logs",
      summary:
        "the last lines of a log (name: agent | errors | gateway; lines ≤ 2000; level; session), redacted",
      handler: ({ query }) => {
        const name = query.get("name") ?? "agent";
        const file = LOGS[name];
        if (!file) throw new ApiError(400, `name must be one of ${Object.keys(LOGS).join(", ")}`);
        const n = intParam(query, "lines", 200, 2000);
        const filter: LogFilter = {};
        const level = query.get("level");
        if (level) {
          try {
            filter.level = parseLevelArgument(level);
          } catch (error) {
            throw new ApiError(400, error instanceof Error ? error.message : String(error));
          }
        }
        const session = query.get("session");
        if (session) filter.session = session;
        const chain = rotationChain(join(logsDir(deps.home), file));
        const lines = chain.length === 0 ? [] : lastLines(chain, n, filter).map((line) => redactText(line));
        return { json: { name, lines } };
      },
    },
  ];
}
