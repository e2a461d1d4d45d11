/**
 * Matrix files both ways. Downloads use the authenticated media API
 * (`/_matrix/client/v1/media/download`, Matrix 1.11) with the bot's token; uploads go to
 * `/_matrix/media/v3/upload`. In encrypted rooms a file is encrypted on the client (AES-256-CTR,
 * SHA-256 of the ciphertext, the `EncryptedFile` shape of the spec) before upload and decrypted
 * after download, with the hash checked first.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { MatrixEncryptedFile } from "./matrix-inbound.js";

const b64 = (buf: Buffer): string => buf.toString("base64").replace(/=+$/, "");
const b64url = (buf: Buffer): string =>
  buf.toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const fromB64 = (s: string): Buffer => Buffer.from(s.replace(/-/g, "+").replace(/_/g, "/"), "base64");

/** Encrypts file bytes for an encrypted room; `file.url` is filled in after the upload. */
export function encryptAttachment(plain: Buffer): {
  data: Buffer;
  file: Omit<MatrixEncryptedFile, "url"> & Record<string, unknown>;
} {
  const key = randomBytes(32);
  // The spec's IV: 64 random bits, then a 64-bit counter starting at zero.
  const iv = Buffer.concat([randomBytes(8), Buffer.alloc(8)]);
  const cipher = createCipheriv("aes-256-ctr", key, iv);
  const data = Buffer.concat([cipher.update(plain), cipher.final()]);
  return {
    data,
    file: {
      v: "v2",
      key: { kty: "oct", key_ops: ["encrypt", "decrypt"], alg: "A256CTR", k: b64url(key), ext: true },
      iv: b64(iv),
      hashes: { sha256: b64(createHash("sha256").update(data).digest()) },
    },
  };
}

/** Decrypts a downloaded encrypted file; throws when its hash does not match (tampered or wrong file). */
export function decryptAttachment(data: Buffer, file: MatrixEncryptedFile): Buffer {
  const expected = file.hashes.sha256;
  if (!expected) throw new Error("the encrypted file has no SHA-256 hash");
  const actual = b64(createHash("sha256").update(data).digest());
  if (actual !== expected.replace(/=+$/, ""))
    throw new Error("the encrypted file's SHA-256 hash does not match");
  const key = fromB64(file.key.k);
  if (key.length !== 32) throw new Error("the encrypted file's key is not 256 bits");
  const decipher = createDecipheriv("aes-256-ctr", key, fromB64(file.iv));
  return Buffer.concat([decipher.update(data), decipher.final()]);
}

/** `mxc://server/id` → its parts; undefined for anything else (never fetched). */
export function parseMxc(url: string): { server: string; mediaId: string } | undefined {
  const m = /^mxc:\/\/([A-Za-z0-9.:[\]-]+)\/([A-Za-z0-9_-]+)$/.exec(url);
  return m?.[1] && m[2] ? { server: m[1], mediaId: m[2] } : undefined;
}

/** Downloads an `mxc://` URL's bytes, refusing more than `limit` bytes. */
export async function downloadMxc(
  homeserver: string,
  accessToken: string,
  mxc: string,
  limit: number,
): Promise<{ bytes: Buffer; contentType: string | undefined }> {
  const parts = parseMxc(mxc);
  if (!parts) throw new Error(`"${mxc.slice(0, 80)}" is not an mxc:// URL`);
  const url = `${homeserver}/_matrix/client/v1/media/download/${encodeURIComponent(parts.server)}/${encodeURIComponent(parts.mediaId)}`;
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${accessToken}` },
    signal: AbortSignal.timeout(120_000),
  });
  if (!res.ok || !res.body) throw new Error(`the homeserver answered HTTP ${res.status} for ${mxc}`);
  const declared = Number(res.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limit) {
    await res.body.cancel();
    throw new Error(
      `it is ${declared} bytes, over the ${limit}-byte limit (gateway.max_inbound_media_bytes)`,
    );
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    if (total > limit)
      throw new Error(`it is over the ${limit}-byte limit (gateway.max_inbound_media_bytes)`);
    chunks.push(Buffer.from(chunk));
  }
  return { bytes: Buffer.concat(chunks), contentType: res.headers.get("content-type") ?? undefined };
}

/** Uploads bytes; returns the `mxc://` URL. */
export async function uploadMedia(
  homeserver: string,
  accessToken: string,
  bytes: Buffer,
  contentType: string,
  fileName: string,
): Promise<string> {
  const res = await fetch(`${homeserver}/_matrix/media/v3/upload?filename=${encodeURIComponent(fileName)}`, {
    method: "POST",
    headers: { authorization: `Bearer ${accessToken}`, "content-type": contentType },
    body: bytes,
    signal: AbortSignal.timeout(300_000),
  });
  const body = (await res.json().catch(() => undefined)) as
    | { content_uri?: unknown; error?: unknown }
    | undefined;
  if (!res.ok || typeof body?.content_uri !== "string") {
    const why = typeof body?.error === "string" ? body.error : `HTTP ${res.status}`;
    throw new Error(`the homeserver refused the upload of ${fileName}: ${why}`);
  }
  return body.content_uri;
}
