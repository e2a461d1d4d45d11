/**
 * A real Dovecot mailbox for the bot and a loopback SMTP listener, started for the calling test
 * file, and email adapters aimed at both (closed after each test):
 *
 *   const mail = emailRig("hermes-email-unit-");
 *   describe.skipIf(dovecotSkipReason)("…", () => {
 *     it("…", async () => {
 *       await mail.dovecot.deliver(EMAIL_BOT, raw);
 *       await mail.adapter().connect(handlers);
 *     });
 *   });
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { createEmailAdapter } from "../../src/gateway/platforms/email.js";
import type { PlatformAdapter } from "../../src/gateway/platforms/types.js";
import { type DovecotFixture, dovecotSkipReason, startDovecot } from "./dovecot.js";
import { type SmtpListener, startSmtpListener } from "./smtp-listener.js";

/** The bot's mailbox. */
export const EMAIL_BOT = { user: "hermes@agent.test", password: "bot-password" };

export interface EmailRig {
  readonly dovecot: DovecotFixture;
  readonly smtp: SmtpListener;
  /** The adapters' home (and their media folder below it). */
  readonly dir: string;
  /** The adapter's environment: the bot's mailbox over plain IMAP and SMTP, `extra` on top. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** An email adapter over the rig (short reconnect delays), disconnected after the test. */
  adapter(extra?: Record<string, string>, settings?: Record<string, unknown>): PlatformAdapter;
}

/** Starts the rig before the file's tests (unless Dovecot is missing) and stops it after them. */
export function emailRig(prefix: string): EmailRig {
  let dovecot: DovecotFixture | undefined;
  let smtp: SmtpListener | undefined;
  let dir: string | undefined;
  let open: PlatformAdapter[] = [];
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the email rig is not started (Dovecot missing?)");
    return value;
  };
  beforeAll(async () => {
    if (dovecotSkipReason) return;
    dovecot = await startDovecot([EMAIL_BOT]);
    smtp = await startSmtpListener(EMAIL_BOT);
    dir = mkdtempSync(join(tmpdir(), prefix));
  }, 30_000);
  afterEach(async () => {
    await Promise.all(open.map((a) => a.disconnect()));
    open = [];
  });
  afterAll(async () => {
    await smtp?.close();
    await dovecot?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const rig: EmailRig = {
    get dovecot() {
      return started(dovecot);
    },
    get smtp() {
      return started(smtp);
    },
    get dir() {
      return started(dir);
    },
    env: (extra = {}) => ({
      EMAIL_ADDRESS: EMAIL_BOT.user,
      EMAIL_PASSWORD: EMAIL_BOT.password,
      EMAIL_IMAP_HOST: "127.0.0.1",
      EMAIL_IMAP_PORT: String(rig.dovecot.port),
      EMAIL_IMAP_SECURITY: "plain",
      EMAIL_SMTP_HOST: "127.0.0.1",
      EMAIL_SMTP_PORT: String(rig.smtp.port),
      EMAIL_SMTP_SECURITY: "plain",
      ...extra,
    }),
    adapter(extra = {}, settings = {}) {
      const a = createEmailAdapter(
        {
          home: rig.dir,
          env: rig.env(extra),
          settings,
          mediaDir: join(rig.dir, "media"),
          maxInboundMediaBytes: 1_000_000,
        },
        { backoffMs: [100, 200, 400] },
      );
      open.push(a);
      return a;
    },
  };
  return rig;
}
