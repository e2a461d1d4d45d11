/**
 * A real SMTP server (`smtp-server`) on a loopback port that accepts mail from one authenticated
 * account and keeps every message it receives, parsed with `mailparser`, for tests to read. No
 * TLS (loopback only), AUTH PLAIN/LOGIN required: a wrong password is refused as a real submission
 * server would.
 */
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  /** Envelope sender and recipients. */
  mailFrom: string;
  rcptTo: string[];
  /** The user that logged in. */
  user: string;
  raw: Buffer;
  parsed: ParsedMail;
  /** A header's first value as text (`parsed.headers`), lower-case name. */
  header(name: string): string | undefined;
}

export interface SmtpListener {
  host: "127.0.0.1";
  port: number;
  readonly received: readonly ReceivedMail[];
  /** Resolves with the first message (already received or arriving later) that matches. */
  waitFor(predicate: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startSmtpListener(account: { user: string; password: string }): Promise<SmtpListener> {
  const received: ReceivedMail[] = [];
  const waiters: { predicate: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }[] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    authMethods: ["PLAIN", "LOGIN"],
    logger: false,
    size: 40 * 1024 * 1024,
    onAuth(auth, _session, callback) {
      if (auth.username === account.user && auth.password === account.password) {
        callback(null, { user: auth.username });
      } else {
        callback(new Error("535 5.7.8 Authentication credentials invalid"));
      }
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw)
          .then((parsed) => {
            const mail: ReceivedMail = {
              mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
              rcptTo: session.envelope.rcptTo.map((r) => r.address),
              user: String(session.user ?? ""),
              raw,
              parsed,
              header: (name) => {
                const value = parsed.headers.get(name.toLowerCase());
                if (value === undefined) return undefined;
                return typeof value === "string" ? value : JSON.stringify(value);
              },
            };
            received.push(mail);
            for (const w of [...waiters]) {
              if (w.predicate(mail)) {
                waiters.splice(waiters.indexOf(w), 1);
                w.resolve(mail);
              }
            }
            callback();
          })
          .catch((error: Error) => callback(error));
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.server.address();
      resolve(typeof address === "object" && address ? address.port : 0);
    });
  });
  return {
    host: "127.0.0.1",
    port,
    received,
    waitFor(predicate, timeoutMs = 30_000) {
      const found = received.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: (m: ReceivedMail) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          const seen = received.map(
            (m) => `${m.rcptTo.join(",")}: ${m.parsed.subject} | ${m.parsed.text?.slice(0, 80)}`,
          );
          reject(new Error(`no matching mail within ${timeoutMs} ms; received:\n${seen.join("\n")}`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
