/**
 * `/api/config` (and the log routes of api-logs.ts): the effective config with secrets masked
 * (`hermes config show`), beside the defaults, config.yaml as written (masked) and the names in
 * `.env`; edits through `hermes config set`'s validation (`checkKey`/`checkValue`, did-you-mean)
 * and writer (`setConfigValue`: comments kept, atomic).
 */

import { defaultConfig } from "../config/defaults.js";
import { loadEnvFile } from "../config/env-file.js";
import { ConfigError } from "../config/errors.js";
import { loadConfig } from "../config/load.js";
import { VALUE_CHOICES } from "../config/schema-keys.js";
import { isSecretKey, maskSecret, redactSecrets } from "../config/secrets.js";
import { checkKey, checkValue } from "../config/validate.js";
import { isEnvStyleKey, setConfigValue } from "../config/write.js";
import { logRoutes } from "./api-logs.js";
import { envFileNames, maskedConfigText } from "./config-view.js";
import { ApiError, field, type Route } from "./http.js";

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
      summary:
        "the effective config (config.yaml over the defaults) and the defaults, secrets masked; keys set in config.yaml, config.yaml masked, .env names (never values), load warnings",
      handler: () => {
        const { env } = loadEnvFile(deps.home, deps.baseEnv);
        let loaded: ReturnType<typeof loadConfig>;
        try {
          loaded = loadConfig({ home: deps.home, env });
        } catch (error) {
          if (error instanceof ConfigError)
            throw new ApiError(422, `${error.message}. Fix config.yaml in an editor (hermes config check).`);
          throw error;
        }
        const raw = maskedConfigText(deps.home);
        return {
          json: {
            path: loaded.path,
            exists: loaded.exists,
            warnings: loaded.warnings,
            config: redactSecrets(loaded.config),
            defaults: redactSecrets(defaultConfig()),
            user_keys: [...loaded.userKeys].sort(),
            env_keys: loaded.envKeys,
            choices: VALUE_CHOICES,
            raw: raw.text,
            ...(raw.error ? { raw_error: raw.error } : {}),
            env_file: envFileNames(deps.home, deps.baseEnv),
            not_editable: {
              sections: ["dashboard"],
              env: "only allowlist and credential names (*_ALLOWED_USERS, *_ALLOW_ALL_USERS, *_API_KEY, *_TOKEN)",
            },
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
            // The whole key the user meant: `modle.default` → `model.default`.
            const meant =
              problem.suggestion && problem.kind === "unknown_key" && key.startsWith(problem.key)
                ? problem.suggestion + key.slice(problem.key.length)
                : undefined;
            throw new ApiError(422, `${problem.message}. config.yaml was not changed.`, {
              key: problem.key,
              kind: problem.kind,
              ...(problem.suggestion ? { suggestion: problem.suggestion } : {}),
              ...(meant ? { did_you_mean: meant } : {}),
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
    ...logRoutes({ home: deps.home }),
  ];
}
