/**
 * The messaging platforms this gateway can run, and which of them a home has turned on: a platform
 * runs when its token is in the environment (`.env`) and `platforms.<name>.enabled` is not false.
 */
import { join } from "node:path";
import type { HermesConfig } from "../../config/defaults.js";
import type { WebhookDeliveries } from "../../state/gateway/webhook-deliveries.js";
import { processRedactor, type Redactor } from "../../util/redact.js";
import { redactingAdapter } from "./redacting-adapter.js";
import type { AdapterContext, PlatformAdapter } from "./types.js";

interface PlatformSpec {
  /** The variable whose presence turns the platform on. */
  token: string;
  /**
   * Builds the adapter. Each platform's module is imported only here, when that platform is used:
   * the built CLI keeps the adapters in a side bundle (scripts/side-bundles.mjs) that only the
   * gateway and `hermes send` load.
   */
  create: (ctx: AdapterContext) => Promise<PlatformAdapter>;
  /**
   * One connection per account at a time (a linked WhatsApp device: a second one takes over the
   * first): while the home's gateway holds it, `hermes send` goes through the gateway's control socket.
   */
  oneConnection?: true;
}

export const PLATFORMS: Readonly<Record<string, PlatformSpec>> = {
  telegram: {
    token: "TELEGRAM_BOT_TOKEN",
    create: async (ctx) => (await import("./telegram.js")).createTelegramAdapter(ctx),
  },
  discord: {
    token: "DISCORD_BOT_TOKEN",
    create: async (ctx) => (await import("./discord.js")).createDiscordAdapter(ctx),
  },
  slack: {
    token: "SLACK_BOT_TOKEN",
    create: async (ctx) => (await import("./slack.js")).createSlackAdapter(ctx),
  },
  email: {
    token: "EMAIL_ADDRESS",
    create: async (ctx) => (await import("./email.js")).createEmailAdapter(ctx),
  },
  // signal-cli's daemon URL; SIGNAL_ACCOUNT is required too (connect says so when it is missing).
  signal: {
    token: "SIGNAL_HTTP_URL",
    create: async (ctx) => (await import("./signal.js")).createSignalAdapter(ctx),
  },
  // Twilio; TWILIO_AUTH_TOKEN and TWILIO_PHONE_NUMBER are required too (connect names what is missing).
  sms: {
    token: "TWILIO_ACCOUNT_SID",
    create: async (ctx) => (await import("./sms.js")).createSmsAdapter(ctx),
  },
  // MATTERMOST_URL is required too (connect says so when it is missing).
  mattermost: {
    token: "MATTERMOST_TOKEN",
    create: async (ctx) => (await import("./mattermost.js")).createMattermostAdapter(ctx),
  },
  // The same long-lived token the ha_* tools use; HASS_URL defaults to homeassistant.local:8123.
  homeassistant: {
    token: "HASS_TOKEN",
    create: async (ctx) => (await import("./homeassistant.js")).createHomeAssistantAdapter(ctx),
  },
  // MATRIX_ACCESS_TOKEN, or MATRIX_USER_ID and MATRIX_PASSWORD, are required too (connect says which).
  matrix: {
    token: "MATRIX_HOMESERVER",
    create: async (ctx) => (await import("./matrix.js")).createMatrixAdapter(ctx),
  },
  // A personal account over baileys (optional dependency), paired with `hermes whatsapp`.
  whatsapp: {
    token: "WHATSAPP_ENABLED",
    create: async (ctx) => (await import("./whatsapp.js")).createWhatsAppAdapter(ctx),
    oneConnection: true,
  },
  // Meta's Cloud API; WHATSAPP_CLOUD_PHONE_NUMBER_ID is required too, and the app secret to receive.
  whatsapp_cloud: {
    token: "WHATSAPP_CLOUD_ACCESS_TOKEN",
    create: async (ctx) => (await import("./whatsapp-cloud.js")).createWhatsAppCloudAdapter(ctx),
  },
};

const section = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** The platforms whose token is set and which config.yaml does not switch off. */
export function enabledPlatforms(
  config: HermesConfig,
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const platforms = section(config["platforms"]);
  return Object.entries(PLATFORMS)
    .filter(([name, spec]) => {
      // WHATSAPP_ENABLED=false is a switch turned off, not a token.
      const value = env[spec.token]?.trim();
      return value && value.toLowerCase() !== "false" && section(platforms[name])["enabled"] !== false;
    })
    .map(([name]) => name);
}

const DEFAULT_MAX_INBOUND = 128 * 1024 * 1024;

/**
 * Builds the adapter for a platform with its settings (`<name>:` in config.yaml), behind the secret
 * redactor (default the process-wide one): every text it sends is redacted.
 */
export async function createAdapter(
  name: string,
  options: {
    home: string;
    config: HermesConfig;
    env: Readonly<Record<string, string | undefined>>;
    redactor?: Redactor;
    /** Inbound ids shared with the other instances (see `AdapterContext.deliveries`). */
    deliveries?: WebhookDeliveries;
  },
): Promise<PlatformAdapter> {
  const spec = PLATFORMS[name];
  if (!spec) throw new Error(`Unknown platform "${name}". Known: ${Object.keys(PLATFORMS).join(", ")}.`);
  const limit = Number(section(options.config["gateway"])["max_inbound_media_bytes"]);
  const adapter = await spec.create({
    home: options.home,
    env: options.env,
    settings: {
      ...section(section(section(options.config["platforms"])[name])["extra"]),
      ...section(options.config[name]),
    },
    mediaDir: join(options.home, "cache", "media"),
    maxInboundMediaBytes: Number.isFinite(limit) && limit > 0 ? limit : DEFAULT_MAX_INBOUND,
    ...(options.deliveries ? { deliveries: options.deliveries } : {}),
  });
  return redactingAdapter(adapter, options.redactor ?? processRedactor());
}
