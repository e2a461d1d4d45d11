/**
 * `Headers` and `Response` for `http-fetch.ts` and the bundled `openai` SDK, written so that a
 * model call never touches Node's own: in Node 20 the globals `Headers`, `Response` and `FormData`
 * are lazy getters that load undici's whole bundle on first access (about 10 MiB of RSS and
 * 90-130 ms of CPU in a one-shot), although `node:http` does the networking. The build
 * (`scripts/build.mjs`) binds the SDK's free `Headers` and `FormData` names to the classes here.
 *
 * They behave like the WHATWG classes where a caller can see it: header names are case-insensitive,
 * iterate sorted in lower case, repeated values join with ", " (`set-cookie` kept apart), invalid
 * names and values are a `TypeError`; a body is read once (`text`, `json`, `arrayBuffer`, `bytes`,
 * `blob`), `clone()` tees it. `instanceof` accepts the platform's own instances too (by their
 * `Symbol.toStringTag`), so code that checks `x instanceof Headers` sees either kind.
 */

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// A value may not hold NUL, CR or LF; leading and trailing whitespace is trimmed (fetch does so).
const BAD_VALUE = /[\0\r\n]/;

type HeaderPairs = Iterable<readonly [string, string]> | Record<string, string>;

function normaliseValue(value: unknown): string {
  const text = String(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  if (BAD_VALUE.test(text)) throw new TypeError(`Headers: invalid header value "${text}"`);
  return text;
}

function checkName(name: unknown): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`Headers: invalid header name "${text}"`);
  return text.toLowerCase();
}

function isTagged(value: unknown, tag: string): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag] === tag
  );
}

/** A WHATWG `Headers` without undici; see the file comment. */
export class FetchHeaders {
  /** Lower-case name → values in insertion order. */
  readonly #values = new Map<string, string[]>();

  constructor(init?: HeaderPairs | FetchHeaders | null) {
    if (init === undefined || init === null) return;
    if (typeof init !== "object") throw new TypeError("Headers: init must be an object");
    if (Symbol.iterator in init) {
      for (const pair of init as Iterable<readonly [string, string]>) {
        const row = [...(pair as Iterable<string>)];
        if (row.length !== 2) throw new TypeError("Headers: each header must be a [name, value] pair");
        this.append(row[0] as string, row[1] as string);
      }
      return;
    }
    for (const [name, value] of Object.entries(init)) this.append(name, value);
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    return isTagged(value, "Headers");
  }

  get [Symbol.toStringTag](): string {
    return "Headers";
  }

  append(name: string, value: string): void {
    const key = checkName(name);
    const text = normaliseValue(value);
    const list = this.#values.get(key);
    if (list) list.push(text);
    else this.#values.set(key, [text]);
  }

  set(name: string, value: string): void {
    this.#values.set(checkName(name), [normaliseValue(value)]);
  }

  delete(name: string): void {
    this.#values.delete(checkName(name));
  }

  has(name: string): boolean {
    return this.#values.has(checkName(name));
  }

  /** The values joined with ", "; null when the header is absent. */
  get(name: string): string | null {
    return this.#values.get(checkName(name))?.join(", ") ?? null;
  }

  getSetCookie(): string[] {
    return [...(this.#values.get("set-cookie") ?? [])];
  }

  forEach(callback: (value: string, name: string, parent: FetchHeaders) => void, thisArg?: unknown): void {
    for (const [name, value] of this) callback.call(thisArg, value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.#values.keys()].sort()) {
      const values = this.#values.get(name) as string[];
      // Each cookie is its own entry; every other header is one combined entry.
      if (name === "set-cookie") for (const value of values) yield [name, value];
      else yield [name, values.join(", ")];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

/**
 * Stands in for `FormData` in the SDK's `body instanceof FormData` checks without loading undici
 * (a real FormData is recognised by its tag); `new` makes the platform's real one, for uploads.
 */
export const FormDataCheck = function FormData(...args: unknown[]): unknown {
  const Real = globalThis.FormData as unknown as new (...a: unknown[]) => unknown;
  return new Real(...args);
} as unknown as { new (...args: unknown[]): FormData };
Object.defineProperty(FormDataCheck, Symbol.hasInstance, {
  value: (value: unknown) => isTagged(value, "FormData"),
});

export interface FetchResponseInit {
  status?: number;
  statusText?: string;
  headers?: FetchHeaders;
  url?: string;
  redirected?: boolean;
}

/** A WHATWG `Response` over a web stream without undici; see the file comment. */
export class FetchResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: FetchHeaders;
  readonly url: string;
  readonly redirected: boolean;
  readonly type = "basic";
  #body: ReadableStream<Uint8Array> | null;
  #used = false;

  constructor(body: ReadableStream<Uint8Array> | null, init: FetchResponseInit = {}) {
    this.#body = body;
    this.status = init.status ?? 200;
    this.statusText = init.statusText ?? "";
    this.headers = init.headers ?? new FetchHeaders();
    this.url = init.url ?? "";
    this.redirected = init.redirected ?? false;
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    return isTagged(value, "Response");
  }

  get [Symbol.toStringTag](): string {
    return "Response";
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.#body;
  }

  /** True once the body was read or its reader taken, as fetch reports it. */
  get bodyUsed(): boolean {
    return this.#used || (this.#body?.locked ?? false);
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    if (this.bodyUsed) throw new TypeError("Body is unusable: Body has already been read");
    this.#used = true;
    if (!this.#body) return new Uint8Array(0);
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = this.#body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
    const out = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      out.set(chunk, at);
      at += chunk.byteLength;
    }
    return out;
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.bytes()], { type: this.headers.get("content-type") ?? "" });
  }

  /** Multipart and URL-encoded bodies need the platform's parser: loads undici, only here. */
  async formData(): Promise<FormData> {
    const bytes = await this.bytes();
    const headers: [string, string][] = [...this.headers];
    return new globalThis.Response(bytes, { status: this.status, headers }).formData();
  }

  clone(): FetchResponse {
    if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
    let body: ReadableStream<Uint8Array> | null = null;
    if (this.#body) {
      const [mine, theirs] = this.#body.tee();
      this.#body = mine;
      body = theirs;
    }
    return new FetchResponse(body, {
      status: this.status,
      statusText: this.statusText,
      headers: new FetchHeaders(this.headers),
      url: this.url,
      redirected: this.redirected,
    });
  }
}
