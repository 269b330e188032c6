/**
 * Part of `npm run build`: writes each BPE encoding swc counts with (its token bytes in rank order and its
 * pre-tokenizer pattern) to dist/ranks/<name>.bin, taken from the installed gpt-tokenizer. swc then loads an
 * encoding by reading one small file instead of compiling gpt-tokenizer's 2.4 MB rank module and building its
 * 200,000-entry map (~0.3 s a process). Layout (little-endian), read by src/tokens/ranks.ts:
 *
 *   "SWCRANK3"  u32 token count  u32 slot count  u32 longest token (bytes)  u32 n + pattern (UTF-8)  u32 n + flags
 *   (zeros to a multiple of 4)  i32 lookup slots  u32 where each rank's bytes start, and where the last ends
 *   every token's bytes, in rank order (a rank with no token has none).
 *
 * Runs after tsc: the lookup slots are built by the same code that reads them (dist/tokens/ranks.js).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSlots, startsOf } from '../dist/tokens/ranks.js';

const out = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'ranks');
const ENCODINGS = [
  { name: 'o200k_base', params: 'O200KBase' },
  { name: 'cl100k_base', params: 'Cl100KBase' },
];

const utf8 = new TextEncoder();
const strict = new TextDecoder('utf-8', { fatal: true });

/** Whether bytes are valid UTF-8 (gpt-tokenizer keeps a token as a string exactly when they are). */
function isValidUtf8(bytes) {
  try {
    strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function u32(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

function withLength(text) {
  const bytes = Buffer.from(text, 'utf8');
  return Buffer.concat([u32(bytes.length), bytes]);
}

mkdirSync(out, { recursive: true });
for (const { name, params } of ENCODINGS) {
  const ranks = (await import(`gpt-tokenizer/esm/bpeRanks/${name}`)).default;
  const { tokenSplitRegex } = (await import(`gpt-tokenizer/esm/encodingParams/${name}`))[params](ranks);
  const lengths = Buffer.alloc(ranks.length);
  const parts = [];
  for (let rank = 0; rank < ranks.length; rank++) {
    const token = ranks[rank];
    if (token === undefined) continue;
    const bytes = typeof token === 'string' ? utf8.encode(token) : Uint8Array.from(token);
    // gpt-tokenizer looks bytes up as a string when they are valid UTF-8 (decoded with a leading byte-order mark
    // dropped) and by bytes otherwise. A token kept as bytes although they are valid UTF-8 (those that start with
    // EF BB BF) is then never found: swc leaves it out, so its lookups find what gpt-tokenizer's find.
    if (typeof token !== 'string' && isValidUtf8(bytes)) continue;
    if (typeof token === 'string' && (!isValidUtf8(bytes) || strict.decode(bytes) !== token)) {
      throw new Error(`${name}: token ${rank} is a string that does not round-trip through UTF-8`);
    }
    if (bytes.length === 0 || bytes.length > 255) throw new Error(`${name}: token ${rank} has ${bytes.length} bytes`);
    lengths[rank] = bytes.length;
    parts.push(bytes);
  }
  const bytes = Buffer.concat(parts);
  const starts = startsOf(lengths);
  const slots = buildSlots(bytes, starts);
  const head = Buffer.concat([
    Buffer.from('SWCRANK3', 'latin1'),
    u32(ranks.length),
    u32(slots.length),
    u32(lengths.reduce((a, b) => Math.max(a, b), 0)),
    withLength(tokenSplitRegex.source),
    withLength(tokenSplitRegex.flags),
  ]);
  const pad = Buffer.alloc((4 - (head.length % 4)) % 4);
  const words = (array) => Buffer.from(array.buffer, array.byteOffset, array.byteLength);
  const file = Buffer.concat([head, pad, words(slots), words(starts), bytes]);
  writeFileSync(path.join(out, `${name}.bin`), file);
}
