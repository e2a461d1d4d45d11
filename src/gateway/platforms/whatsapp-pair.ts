/**
 * Linking a personal WhatsApp account as a device (`hermes whatsapp`): open a baileys socket on
 * the home's session folder and show what WhatsApp offers to link it: a QR code to scan under
 * Settings → Linked devices, or with a phone number an 8-character code to type there ("Link
 * with phone number instead"). WhatsApp closes the first connection after a successful scan and
 * asks for a restart (515); the second one opens as the linked device.
 */
import { PlatformError } from "./types.js";
import {
  type BaileysLike,
  bareJid,
  closeStatus,
  LOGGED_OUT,
  openAuthState,
  type WASocketLike,
} from "./whatsapp-baileys.js";

const RESTART_REQUIRED = 515;

export interface PairOptions {
  baileys: BaileysLike;
  /** The session folder (`<home>/whatsapp/session`). */
  dir: string;
  /** Digits of the account's number for a pairing code instead of a QR code. */
  phone?: string | undefined;
  /** Shows a QR payload (as a picture when it can). */
  showQr: (payload: string) => void;
  /** Progress lines. */
  say: (line: string) => void;
  timeoutMs?: number;
}

/** Resolves with the linked account's number once WhatsApp accepts the device. */
export async function pairWhatsApp(o: PairOptions): Promise<string> {
  const phone = o.phone?.replace(/\D/g, "");
  if (o.phone !== undefined && (!phone || phone.length < 8))
    throw new PlatformError(
      `"${o.phone}" is not a phone number: give it with the country code, e.g. +15551234567`,
    );
  let current: WASocketLike | undefined;
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new PlatformError("no device was linked in time: run `hermes whatsapp` again")),
        o.timeoutMs ?? 180_000,
      );
      timer.unref?.();
      const fail = (err: Error) => {
        clearTimeout(timer);
        reject(err);
      };
      let codeAsked = false;
      const start = async (): Promise<void> => {
        const auth = await openAuthState(o.baileys, o.dir);
        const sock = o.baileys.makeWASocket({
          auth: auth.state,
          printQRInTerminal: false,
          syncFullHistory: false,
          markOnlineOnConnect: false,
        });
        current = sock;
        sock.ev.on("creds.update", () => void auth.saveCreds());
        sock.ev.on("connection.update", (u) => {
          if (u.qr) {
            if (phone) {
              if (!codeAsked && sock.requestPairingCode) {
                codeAsked = true;
                sock.requestPairingCode(phone).then(
                  (code) =>
                    o.say(
                      `On your phone: WhatsApp → Settings → Linked devices → Link a device → Link with phone number instead, and enter ${code}`,
                    ),
                  (err: unknown) =>
                    fail(
                      new PlatformError(
                        `WhatsApp refused a pairing code for ${phone}: ${err instanceof Error ? err.message : String(err)}`,
                      ),
                    ),
                );
              }
            } else {
              try {
                o.showQr(u.qr);
              } catch (err) {
                fail(err instanceof Error ? err : new Error(String(err)));
                return;
              }
              o.say(
                "Scan this with WhatsApp → Settings → Linked devices → Link a device (a new code comes every 20 s).",
              );
            }
          }
          if (u.connection === "open") {
            clearTimeout(timer);
            void auth.saveCreds().then(() => resolve(bareJid(sock.user?.id ?? "")));
            return;
          }
          if (u.connection !== "close") return;
          const status = closeStatus(u.lastDisconnect?.error);
          sock.ev.removeAllListeners();
          if (status === RESTART_REQUIRED) {
            o.say("Linked; reconnecting as the new device…");
            start().catch((err: unknown) => fail(err instanceof Error ? err : new Error(String(err))));
          } else if (status === LOGGED_OUT)
            fail(new PlatformError("WhatsApp refused the link (logged out); try again"));
          else
            fail(
              new PlatformError(
                `WhatsApp closed the connection (${status ?? "no status"}); check the network and try again`,
              ),
            );
        });
      };
      start().catch((err: unknown) => fail(err instanceof Error ? err : new Error(String(err))));
    });
  } finally {
    current?.ev.removeAllListeners();
    current?.end(undefined);
  }
}
