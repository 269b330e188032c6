/**
 * Part of `npm run build`: writes each BPE encoding swc counts with (its token bytes in rank order and its
 * pre-tokenizer pattern) to dist/ranks/<name>.bin, taken from the installed gpt-tokenizer. swc then loads an
 * encoding by reading one small file instead of compiling gpt-tokenizer's 2.4 MB rank module and building its
 * 200,000-entry map (~0.3 s a process). Layout (little-endian), read by src/tokens/ranks.ts:
 *
 *   "SWCRANK1"  u32 token count  u32 n + pattern (UTF-8)  u32 n + flags  u8 byte length of each token (0: none)
 *   then every token's bytes, in rank order.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
  const file = Buffer.concat([
    Buffer.from('SWCRANK1', 'latin1'),
    u32(ranks.length),
    withLength(tokenSplitRegex.source),
    withLength(tokenSplitRegex.flags),
    lengths,
    ...parts,
  ]);
  writeFileSync(path.join(out, `${name}.bin`), file);
}
