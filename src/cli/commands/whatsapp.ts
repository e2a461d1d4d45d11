/**
 * `hermes whatsapp`: links a personal WhatsApp account as a device for the gateway (upstream's
 * pairing command), stores its keys under `<home>/whatsapp/session` and sets `WHATSAPP_ENABLED`.
 * The QR code is drawn in the terminal with `qrencode` when it is installed (Debian: `apt install
 * qrencode`) or the `qrcode-terminal` package when present; `--phone` links with a code typed on
 * the phone instead, which needs neither.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { setEnvVar } from "../../config/env-file.js";
import { loadBaileys, whatsappSessionDir } from "../../gateway/platforms/whatsapp-baileys.js";
import { pairWhatsApp } from "../../gateway/platforms/whatsapp-pair.js";
import { CliFailure, type ConfigContext, defineCommand } from "../command.js";

interface Flags {
  phone?: string;
  force?: boolean;
}

export const whatsappCommand = defineCommand({
  name: "whatsapp",
  description:
    "Links your WhatsApp account to the gateway as a device (like WhatsApp Web): shows a QR code to " +
    "scan under Settings → Linked devices, or with --phone a code to type there. The keys stay in " +
    "<home>/whatsapp/session. Then run `hermes gateway run` (WHATSAPP_MODE=self-chat answers in your " +
    "own chat; bot answers others).",
  needs: "config",
  parse: (cmd) =>
    cmd
      .option(
        "--phone <number>",
        "link with a pairing code for this number (with country code) instead of a QR code",
      )
      .option("--force", "link again even if a device is already linked"),
  run: (ctx, flags: Flags) => pair(ctx, flags),
});

function linkedAs(dir: string): string | undefined {
  try {
    const creds = JSON.parse(readFileSync(join(dir, "creds.json"), "utf8")) as { me?: { id?: string } };
    return creds.me?.id?.split(/[:@]/)[0];
  } catch {
    return undefined;
  }
}

async function pair(ctx: ConfigContext, flags: Flags): Promise<number> {
  const { io, home } = ctx;
  const dir = whatsappSessionDir(home);
  const already = existsSync(dir) ? linkedAs(dir) : undefined;
  if (already && !flags.force) {
    io.out(`Already linked as +${already} (keys in ${dir}). Use --force to link again.`);
    return 0;
  }
  if (already && flags.force) {
    rmSync(dir, { recursive: true, force: true });
  }
  let number: string;
  try {
    const baileys = await loadBaileys();
    number = await pairWhatsApp({
      baileys,
      dir,
      phone: flags.phone,
      showQr: (payload) => drawQr(payload, (line) => io.err(line)),
      say: (line) => io.err(line),
    });
  } catch (error) {
    throw new CliFailure(error instanceof Error ? error.message : String(error), 1);
  }
  setEnvVar(home, "WHATSAPP_ENABLED", "true");
  io.out(
    `Linked as +${number}. WHATSAPP_ENABLED=true is set; start the gateway with \`hermes gateway run\`.`,
  );
  return 0;
}

/** Draws a QR code on the terminal (stderr) with whatever renderer is installed. */
function drawQr(payload: string, say: (line: string) => void): void {
  const qrencode = spawnSync("qrencode", ["-t", "ANSIUTF8", "-m", "2", payload], { encoding: "utf8" });
  if (qrencode.status === 0 && qrencode.stdout) {
    say(qrencode.stdout);
    return;
  }
  try {
    // Optional CommonJS package, used when installed.
    const mod = createRequire(import.meta.url)("qrcode-terminal") as {
      generate(text: string, opts: { small: boolean }, cb: (qr: string) => void): void;
    };
    mod.generate(payload, { small: true }, (qr) => say(qr));
    return;
  } catch {
    // neither renderer is installed
  }
  throw new Error(
    "cannot draw the QR code: install qrencode (apt install qrencode, brew install qrencode) or link with a code instead: hermes whatsapp --phone +<your number>",
  );
}
