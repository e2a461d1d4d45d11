/**
 * The email platform's settings from the environment (upstream's `EMAIL_*` variables) and the
 * `email:` / `platforms.email.extra` section of config.yaml. Pure: reading is separate from
 * connecting, so a missing or malformed value is reported before any socket opens.
 */

/** How a connection is secured: implicit TLS, STARTTLS upgrade, or none (loopback/test servers). */
export type MailSecurity = "tls" | "starttls" | "plain";

export interface MailServer {
  host: string;
  port: number;
  security: MailSecurity;
}

export interface EmailConfig {
  /** The agent's address (also the login user for both servers). */
  address: string;
  password: string;
  imap: MailServer;
  smtp: MailServer;
  /** Seconds between safety-net mailbox checks besides IDLE pushes (`EMAIL_POLL_INTERVAL`). */
  pollIntervalSeconds: number;
  /** Mailbox watched for new mail (`email.mailbox`, default INBOX). */
  mailbox: string;
  /** Ignore every attachment on inbound mail (`skip_attachments`). */
  skipAttachments: boolean;
  /** Verify the servers' TLS certificates (`EMAIL_SSL_VERIFY`, default true). */
  verifyTls: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

const SECURITY_ALIASES: Readonly<Record<string, MailSecurity>> = {
  tls: "tls",
  ssl: "tls",
  implicit: "tls",
  starttls: "starttls",
  plain: "plain",
  none: "plain",
};

function port(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw.trim());
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    throw new Error(`${name}=${JSON.stringify(raw)} is not a port number (1-65535). Fix it in .env.`);
  }
  return n;
}

function security(raw: string | undefined, name: string, fallback: MailSecurity): MailSecurity {
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = SECURITY_ALIASES[raw.trim().toLowerCase()];
  if (!value) {
    throw new Error(`${name}=${JSON.stringify(raw)} is not one of tls, starttls, plain. Fix it in .env.`);
  }
  return value;
}

const truthy = (value: unknown): boolean =>
  value === true ||
  ["true", "1", "yes", "on"].includes(
    String(value ?? "")
      .trim()
      .toLowerCase(),
  );

/**
 * Reads the settings. Throws one message naming every missing variable (EMAIL_ADDRESS,
 * EMAIL_PASSWORD, EMAIL_IMAP_HOST, EMAIL_SMTP_HOST are required) or the malformed value.
 */
export function readEmailConfig(env: Env, settings: Readonly<Record<string, unknown>> = {}): EmailConfig {
  const required = ["EMAIL_ADDRESS", "EMAIL_PASSWORD", "EMAIL_IMAP_HOST", "EMAIL_SMTP_HOST"] as const;
  const missing = required.filter((name) => !env[name]?.trim());
  if (missing.length > 0) {
    throw new Error(
      `Email needs ${missing.join(", ")} in .env (the mailbox's address, password and servers).`,
    );
  }
  const address = (env["EMAIL_ADDRESS"] ?? "").trim();
  if (!/^[^\s@]+@[^\s@]+$/.test(address)) {
    throw new Error(`EMAIL_ADDRESS=${JSON.stringify(address)} is not an email address.`);
  }
  const imapPort = port(env["EMAIL_IMAP_PORT"], "EMAIL_IMAP_PORT", 993);
  const smtpPort = port(env["EMAIL_SMTP_PORT"], "EMAIL_SMTP_PORT", 587);
  const poll = Number(env["EMAIL_POLL_INTERVAL"] ?? 15);
  if (!Number.isFinite(poll) || poll <= 0) {
    throw new Error(
      `EMAIL_POLL_INTERVAL=${JSON.stringify(env["EMAIL_POLL_INTERVAL"])} is not a positive number of seconds.`,
    );
  }
  const mailbox =
    typeof settings["mailbox"] === "string" && settings["mailbox"].trim()
      ? settings["mailbox"].trim()
      : "INBOX";
  return {
    address,
    password: env["EMAIL_PASSWORD"] ?? "",
    imap: {
      host: (env["EMAIL_IMAP_HOST"] ?? "").trim(),
      port: imapPort,
      // 993 is IMAPS; anything else is assumed to offer STARTTLS (upstream's ports).
      security: security(
        env["EMAIL_IMAP_SECURITY"],
        "EMAIL_IMAP_SECURITY",
        imapPort === 993 ? "tls" : "starttls",
      ),
    },
    smtp: {
      host: (env["EMAIL_SMTP_HOST"] ?? "").trim(),
      port: smtpPort,
      security: security(
        env["EMAIL_SMTP_SECURITY"],
        "EMAIL_SMTP_SECURITY",
        smtpPort === 465 ? "tls" : "starttls",
      ),
    },
    pollIntervalSeconds: poll,
    mailbox,
    skipAttachments: truthy(settings["skip_attachments"]),
    verifyTls: env["EMAIL_SSL_VERIFY"] === undefined ? true : truthy(env["EMAIL_SSL_VERIFY"]),
  };
}
