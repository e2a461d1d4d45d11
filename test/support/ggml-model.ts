/**
 * Writes a whisper.cpp ggml model file with made-up weights, laid out the way whisper.cpp's loader
 * reads one (header, mel filters, vocabulary, then every tensor by name and shape). No real
 * whisper model is reachable here and no npm package ships one, so tests use this: small
 * dimensions (64-wide, one layer each side) make a 7 MB file whisper.cpp loads and runs. It
 * recognises nothing; what it outputs is noise from the made-up weights.
 */
import { writeFileSync } from "node:fs";

export interface GgmlModelShape {
  state?: number;
  heads?: number;
  audioLayers?: number;
  textLayers?: number;
  /** Leave the tensors out (whisper.cpp's weightless "for-tests" files). */
  noTensors?: boolean;
}

const N_VOCAB = 51865;
const N_AUDIO_CTX = 1500;
const N_TEXT_CTX = 448;
const N_MELS = 80;
const SCALE = 0.1;

/** A deterministic sequence of small numbers (a linear congruential generator). */
function noise(seed: number) {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32 - 0.5;
  };
}

/** IEEE half-precision bits of a small float (|v| < 1, no subnormal care needed). */
function half(v: number): number {
  if (v === 0) return 0;
  const sign = v < 0 ? 0x8000 : 0;
  const a = Math.abs(v);
  const exp = Math.floor(Math.log2(a));
  const mant = Math.round((a / 2 ** exp - 1) * 1024) & 0x3ff;
  return sign | (Math.max(1, exp + 15) << 10) | mant;
}

export function writeGgmlModel(path: string, shape: GgmlModelShape = {}): void {
  const n = shape.state ?? 64;
  const heads = shape.heads ?? 1;
  const audioLayers = shape.audioLayers ?? 1;
  const textLayers = shape.textLayers ?? 1;
  const rand = noise(42);
  const parts: Buffer[] = [];
  const ints = (...values: number[]) => {
    const b = Buffer.alloc(values.length * 4);
    values.forEach((v, i) => {
      b.writeInt32LE(v, i * 4);
    });
    parts.push(b);
  };
  const b = Buffer.alloc(4);
  b.writeUInt32LE(0x67676d6c, 0);
  parts.push(b);
  ints(N_VOCAB, N_AUDIO_CTX, n, heads, audioLayers, N_TEXT_CTX, n, heads, textLayers, N_MELS, 1);
  ints(N_MELS, 201);
  const filters = Buffer.alloc(N_MELS * 201 * 4);
  for (let i = 0; i < N_MELS * 201; i++) filters.writeFloatLE(Math.abs(rand()) * 0.02, i * 4);
  parts.push(filters);
  // GPT-2's count of text tokens: a blank (whisper.cpp looks it up) and made-up words; whisper.cpp
  // names the special tokens after them itself.
  const words = Array.from({ length: 50257 }, (_v, i) => Buffer.from(i === 0 ? " " : ` w${i.toString(36)}`));
  ints(words.length);
  for (const word of words) {
    ints(word.length);
    parts.push(word);
  }
  if (!shape.noTensors) {
    const tensor = (name: string, f16: boolean, ...dims: number[]) => {
      ints(dims.length, Buffer.byteLength(name), f16 ? 1 : 0, ...dims);
      parts.push(Buffer.from(name));
      const count = dims.reduce((x, y) => x * y, 1);
      const data = Buffer.alloc(count * (f16 ? 2 : 4));
      for (let i = 0; i < count; i++) {
        const v = rand() * SCALE;
        if (f16) data.writeUInt16LE(half(v), i * 2);
        else data.writeFloatLE(name.endsWith("ln.weight") || name.includes("ln_post.weight") ? 1 : v, i * 4);
      }
      parts.push(data);
    };
    const block = (prefix: string, cross: boolean) => {
      tensor(`${prefix}.mlp_ln.weight`, false, n);
      tensor(`${prefix}.mlp_ln.bias`, false, n);
      tensor(`${prefix}.mlp.0.weight`, true, n, 4 * n);
      tensor(`${prefix}.mlp.0.bias`, false, 4 * n);
      tensor(`${prefix}.mlp.2.weight`, true, 4 * n, n);
      tensor(`${prefix}.mlp.2.bias`, false, n);
      for (const attn of cross ? ["attn", "cross_attn"] : ["attn"]) {
        tensor(`${prefix}.${attn}_ln.weight`, false, n);
        tensor(`${prefix}.${attn}_ln.bias`, false, n);
        tensor(`${prefix}.${attn}.query.weight`, true, n, n);
        tensor(`${prefix}.${attn}.query.bias`, false, n);
        tensor(`${prefix}.${attn}.key.weight`, true, n, n);
        tensor(`${prefix}.${attn}.value.weight`, true, n, n);
        tensor(`${prefix}.${attn}.value.bias`, false, n);
        tensor(`${prefix}.${attn}.out.weight`, true, n, n);
        tensor(`${prefix}.${attn}.out.bias`, false, n);
      }
    };
    tensor("encoder.positional_embedding", false, n, N_AUDIO_CTX);
    tensor("encoder.conv1.weight", true, 3, N_MELS, n);
    tensor("encoder.conv1.bias", false, 1, n);
    tensor("encoder.conv2.weight", true, 3, n, n);
    tensor("encoder.conv2.bias", false, 1, n);
    tensor("encoder.ln_post.weight", false, n);
    tensor("encoder.ln_post.bias", false, n);
    for (let i = 0; i < audioLayers; i++) block(`encoder.blocks.${i}`, false);
    tensor("decoder.positional_embedding", false, n, N_TEXT_CTX);
    tensor("decoder.token_embedding.weight", true, n, N_VOCAB);
    tensor("decoder.ln.weight", false, n);
    tensor("decoder.ln.bias", false, n);
    for (let i = 0; i < textLayers; i++) block(`decoder.blocks.${i}`, true);
  }
  writeFileSync(path, Buffer.concat(parts));
}
