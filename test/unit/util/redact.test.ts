import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { Redactor, redactJson } from "../../../src/util/redact.js";
import { holdBackLength, redactStreamWrites, StreamTextRedactor } from "../../../src/util/redact-stream.js";

const GH = `ghp_${"A1b2C3d4E5".repeat(4)}`; // 40 chars after the prefix
const fresh = () => new Redactor();

describe("Redactor: key shapes", () => {
  const cases: Array<[string, string, string]> = [
    ["OpenAI", `key sk-${"a1B2".repeat(12)} end`, "key [REDACTED:OPENAI_KEY] end"],
    ["OpenAI project", `sk-proj-${"Ab3_-x".repeat(8)}`, "[REDACTED:OPENAI_KEY]"],
    ["Anthropic", `sk-ant-api03-${"Zx9".repeat(20)}`, "[REDACTED:ANTHROPIC_KEY]"],
    ["OpenRouter", `sk-or-v1-${"0f".repeat(32)}`, "[REDACTED:OPENROUTER_KEY]"],
    ["GitHub classic", `token: ${GH}`, "token: [REDACTED:GITHUB_TOKEN]"],
    ["GitHub OAuth", `gho_${"x".repeat(36)}`, "[REDACTED:GITHUB_TOKEN]"],
    ["GitHub server", `ghs_${"Q".repeat(36)}`, "[REDACTED:GITHUB_TOKEN]"],
    ["GitHub fine-grained", `github_pat_11AB${"c".repeat(60)}`, "[REDACTED:GITHUB_TOKEN]"],
    ["AWS key id", "id=AKIAIOSFODNN7EXAMPLE.", "id=[REDACTED:AWS_ACCESS_KEY_ID]."],
    ["AWS session id", "ASIAY34FZKBOKMUTVV7A", "[REDACTED:AWS_ACCESS_KEY_ID]"],
    [
      "AWS secret",
      "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "aws_secret_access_key = [REDACTED:AWS_SECRET_ACCESS_KEY]",
    ],
    [
      "AWS secret (env)",
      'AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
      'AWS_SECRET_ACCESS_KEY="[REDACTED:AWS_SECRET_ACCESS_KEY]"',
    ],
    ["Slack bot", `xoxb-123456789012-${"a".repeat(24)}`, "[REDACTED:SLACK_TOKEN]"],
    ["Slack app", `xapp-1-A0123-${"9".repeat(20)}`, "[REDACTED:SLACK_TOKEN]"],
    ["Google", `AIzaSy${"-_aZ09".repeat(5)}abc`, "[REDACTED:GOOGLE_API_KEY]"],
    [
      "JWT",
      "Authorization: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
      "Authorization: [REDACTED:JWT]",
    ],
    [
      "PEM",
      "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA\n-----END OPENSSH PRIVATE KEY-----\nafter",
      "before\n[REDACTED:PRIVATE_KEY]\nafter",
    ],
    [
      "PEM, JSON-escaped",
      '{"k":"-----BEGIN RSA PRIVATE KEY-----\\nMIIEow\\n-----END RSA PRIVATE KEY-----\\n"}',
      '{"k":"[REDACTED:PRIVATE_KEY]\\n"}',
    ],
    ["PEM cut short", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg", "[REDACTED:PRIVATE_KEY]"],
    [
      "Bearer",
      "curl -H 'Authorization: Bearer abcDEF123456ghiJKL789' x",
      "curl -H 'Authorization: Bearer [REDACTED:BEARER_TOKEN]' x",
    ],
    [
      "URL credentials",
      "postgres://app:s3cr3t-pw@db.local:5432/app",
      "postgres://app:[REDACTED:URL_PASSWORD]@db.local:5432/app",
    ],
    [
      "query parameters",
      "https://x.test/cb?user=bo&password=hunter2&api_key=abc123&token=t0k&secret=s",
      "https://x.test/cb?user=bo&password=[REDACTED:QUERY_SECRET]&api_key=[REDACTED:QUERY_SECRET]&token=[REDACTED:QUERY_SECRET]&secret=[REDACTED:QUERY_SECRET]",
    ],
    ["Stripe", `sk_live_${"4eC39HqLyjWDarjtT1zdp7dc".repeat(1)}`, "[REDACTED:STRIPE_KEY]"],
  ];
  it.each(cases)("%s", (_name, input, expected) => {
    expect(fresh().redact(input)).toBe(expected);
  });

  it("leaves look-alikes alone", () => {
    const text = [
      "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
      "uuid 123e4567-e89b-12d3-a456-426614174000",
      "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 and 9fceb02",
      "Click the password reset link; your token expires; keep the secret safe.",
      "The bearer of this letter; Bearer short; task-ghp_short; sk-learn is a library",
      "password = os.environ['DB_PASSWORD']  # code is not a query string",
      "max_tokens=4096 PORT=587 DEBUG=true",
      "AKIA in prose, AKIAshort, mask-AKIAIOSFODNN7EXAMPLEX",
      "https://example.com/path?page=2&sort=asc",
      "npm i @scope/pkg; git@github.com:org/repo.git; ssh://git@host/repo",
    ].join("\n");
    expect(fresh().redact(text)).toBe(text);
  });

  it("does not touch a base64 image or the text around it", () => {
    const image = `data:image/png;base64,${"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk".repeat(200)}`;
    const value = { caption: "a diagram, see below", url: image, note: `then ${GH}` };
    const out = fresh().redactDeep(value);
    expect(out.url).toBe(image);
    expect(out.caption).toBe("a diagram, see below");
    expect(out.note).toBe("then [REDACTED:GITHUB_TOKEN]");
    // Base64 text itself never looks like a key: no marker appears inside it.
    expect(fresh().redact(image.slice(22))).toBe(image.slice(22));
  });
});

describe("Redactor: known values", () => {
  it("replaces a registered value with its label", () => {
    const r = fresh();
    expect(r.addSecret("hunter2-correct-horse", "MY_SERVICE_PASSWORD")).toBe(true);
    expect(r.redact("pw is hunter2-correct-horse!")).toBe("pw is [REDACTED:MY_SERVICE_PASSWORD]!");
  });

  it("never registers values shorter than 8 characters", () => {
    const r = fresh();
    expect(r.addSecret("587", "PORT")).toBe(false);
    expect(r.addSecret("true", "DEBUG")).toBe(false);
    expect(r.addSecret("  short ", "X")).toBe(false);
    expect(r.addSecret("", "X")).toBe(false);
    expect(r.addSecret(undefined, "X")).toBe(false);
    expect(r.size).toBe(0);
    expect(r.redact("PORT=587 DEBUG=true short")).toBe("PORT=587 DEBUG=true short");
  });

  it("matches the JSON-escaped and URL-encoded spellings", () => {
    const r = fresh();
    const value = 'p@ss "word"\\with/slash';
    r.addSecret(value, "DB_PASSWORD");
    expect(r.redact(JSON.stringify({ value }))).toBe('{"value":"[REDACTED:DB_PASSWORD]"}');
    expect(JSON.parse(r.redact(JSON.stringify({ value })))).toEqual({ value: "[REDACTED:DB_PASSWORD]" });
    expect(r.redact(`https://x.test/?q=${encodeURIComponent(value)}`)).toBe(
      "https://x.test/?q=[REDACTED:DB_PASSWORD]",
    );
  });

  it("takes the longer of two overlapping secrets, and both when nested", () => {
    const r = fresh();
    r.addSecret("abcdefgh", "SHORT");
    r.addSecret("abcdefgh-and-more", "LONG");
    expect(r.redact("x abcdefgh-and-more y abcdefgh z")).toBe("x [REDACTED:LONG] y [REDACTED:SHORT] z");
    r.addSecret("zzz-abcdefgh-zzz", "OUTER");
    expect(r.redact("zzz-abcdefgh-zzz")).toBe("[REDACTED:OUTER]");
  });

  it("escapes regular-expression characters in values", () => {
    const r = fresh();
    r.addSecret("a.b*c+d?(e)[f]{g}|h^$", "WEIRD");
    expect(r.redact("value a.b*c+d?(e)[f]{g}|h^$ and axb")).toBe("value [REDACTED:WEIRD] and axb");
    expect(r.redact("aXbbbcdd")).toBe("aXbbbcdd");
  });

  it("rebuilds after a new secret and is a no-op when disabled", () => {
    const r = fresh();
    const before = r.version;
    r.addSecret("first-secret-value", "A");
    expect(r.redact("first-secret-value")).toBe("[REDACTED:A]");
    r.addSecret("second-secret-value", "B");
    expect(r.version).toBeGreaterThan(before + 1);
    expect(r.redact("second-secret-value")).toBe("[REDACTED:B]");
    r.enabled = false;
    expect(r.redact(`second-secret-value ${GH}`)).toBe(`second-secret-value ${GH}`);
  });

  it("a long text redacted again gives the same answer, and is scanned anew once a secret is added", () => {
    const r = fresh();
    const text = `${"log line without anything secret in it. ".repeat(4)}token=hunter2-but-longer ${GH}`;
    const first = r.redact(text);
    expect(first).toContain("[REDACTED");
    expect(first).toContain("hunter2-but-longer");
    // The same string again (and an equal copy of it) reads the same.
    expect(r.redact(text)).toBe(first);
    expect(r.redact(`${text}`.slice(0))).toBe(first);
    // A value registered afterwards is redacted in a text seen before it.
    r.addSecret("hunter2-but-longer", "PASSWORD");
    const again = r.redact(text);
    expect(again).not.toContain("hunter2-but-longer");
    expect(again).toContain("[REDACTED");
    // Many other texts later, the first one is still answered right.
    for (let i = 0; i < 20; i++)
      r.redact(`${"padding text that is long enough to be remembered ".repeat(2)}${i}`);
    expect(r.redact(text)).toBe(again);
  });

  it("returns the same objects when nothing changed (redactDeep / redactJson)", () => {
    const r = fresh();
    const value = { a: ["plain", { b: "text" }], n: 1, nil: null };
    expect(r.redactDeep(value)).toBe(value);
    const changed = redactJson({ a: ["plain", { b: GH }], keep: { c: "x" } }, (t) => r.redact(t));
    expect(changed.a[1]).toEqual({ b: "[REDACTED:GITHUB_TOKEN]" });
  });
});

describe("streamed output", () => {
  it("holds back a tail that may be the start of a secret", () => {
    expect(holdBackLength("value is hunter2-co", ["hunter2-correct-horse"])).toBe(10);
    expect(holdBackLength("token ghp_abc", [])).toBe(7);
    expect(holdBackLength("all done.\n", ["hunter2-correct-horse"])).toBe(0);
  });

  it("redacts a secret split across deltas", () => {
    const r = fresh();
    r.addSecret("hunter2-correct-horse", "PW");
    const live = new StreamTextRedactor(r);
    const pieces = ["the pw is hun", "ter2-corr", "ect-horse and ", GH.slice(0, 9), GH.slice(9), " ok"];
    const out = pieces.map((p) => live.push(p)).join("") + live.end();
    expect(out).toBe("the pw is [REDACTED:PW] and [REDACTED:GITHUB_TOKEN] ok");
  });

  it("redacts writes to a wrapped stream, across chunks and Buffers", async () => {
    const r = fresh();
    r.addSecret("hunter2-correct-horse", "PW");
    const sink = new PassThrough();
    const chunks: string[] = [];
    sink.on("data", (c: Buffer) => chunks.push(c.toString("utf8")));
    const handle = redactStreamWrites(sink, r);
    sink.write("a: hunter2-");
    sink.write(Buffer.from("correct-horse\n"));
    sink.write(`b: ${GH}\n`);
    await new Promise<void>((resolve) => sink.write("", () => resolve()));
    handle.restore();
    expect(chunks.join("")).toBe("a: [REDACTED:PW]\nb: [REDACTED:GITHUB_TOKEN]\n");
  });
});
