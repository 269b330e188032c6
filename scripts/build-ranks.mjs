/**
 * Part of `npm run build`: writes each BPE encoding swc counts with (its token bytes in rank order and its
 * pre-tokenizer pattern) to dist/ranks/<name>.bin, built from OpenAI's published rank files as gpt-tokenizer ships
 * them (`gpt-tokenizer/data/<name>.tiktoken`, one `base64-bytes rank` line per token, checked by sha256 so a
 * different file fails the build rather than changing counts) and the split patterns below (tiktoken's). swc then loads an
 * encoding by reading one small file instead of compiling gpt-tokenizer's 2.4 MB rank module and building its
 * 200,000-entry map (~0.3 s a process). Layout (little-endian), read by src/tokens/ranks.ts:
 *
 *   "SWCRANK3"  u32 token count  u32 slot count  u32 longest token (bytes)  u32 n + pattern (UTF-8)  u32 n + flags
 *   (zeros to a multiple of 4)  i32 lookup slots  u32 where each rank's bytes start, and where the last ends
 *   every token's bytes, in rank order (a rank with no token has none).
 *
 * Runs after tsc: the lookup slots are built by the same code that reads them (dist/tokens/ranks.js).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSlots, startsOf } from '../dist/tokens/ranks.js';

const out = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'ranks');
const require = createRequire(import.meta.url);

/** The pre-tokenizer patterns are tiktoken's (flags `gu`); the sha256 pins the rank files counts are tested against. */
const CONTRACTIONS = "(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))";
const ENCODINGS = [
  {
    name: 'o200k_base',
    sha256: '446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d',
    pattern: [
      `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+${CONTRACTIONS}?`,
      `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*${CONTRACTIONS}?`,
      '\\p{N}{1,3}',
      ' ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*',
      '\\s*[\\r\\n]+',
      '\\s+(?!\\S)',
      '\\s+',
    ].join('|'),
  },
  {
    name: 'cl100k_base',
    sha256: '223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7',
    pattern: [
      CONTRACTIONS.slice(3, -1),
      '[^\\r\\n\\p{L}\\p{N}]?\\p{L}+',
      '\\p{N}{1,3}',
      ' ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*',
      '\\s+$',
      '\\s*[\\r\\n]',
      '\\s+(?!\\S)',
      '\\s',
    ].join('|'),
  },
];
const FLAGS = 'gu';

const strict = new TextDecoder('utf-8', { fatal: true });
/** Decodes as gpt-tokenizer does: a leading byte-order mark is dropped. */
const lenient = new TextDecoder('utf-8');

/** Whether bytes are valid UTF-8. */
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

/** The token bytes of a `.tiktoken` file, indexed by rank. */
function readRanks(name, sha256) {
  const file = readFileSync(require.resolve(`gpt-tokenizer/data/${name}.tiktoken`));
  const digest = createHash('sha256').update(file).digest('hex');
  if (digest !== sha256)
    throw new Error(`${name}.tiktoken has sha256 ${digest}, expected ${sha256}: the rank file changed`);
  const ranks = [];
  for (const line of file.toString('latin1').split('\n')) {
    if (line === '') continue;
    const [token, rank] = line.split(' ');
    ranks[Number(rank)] = Buffer.from(token, 'base64');
  }
  return ranks;
}

mkdirSync(out, { recursive: true });
for (const { name, sha256, pattern } of ENCODINGS) {
  const ranks = readRanks(name, sha256);
  const tokenSplitRegex = new RegExp(pattern, FLAGS);
  const lengths = Buffer.alloc(ranks.length);
  const parts = [];
  for (let rank = 0; rank < ranks.length; rank++) {
    const token = ranks[rank];
    if (token === undefined) continue;
    const bytes = token;
    // gpt-tokenizer looks bytes up as a string when they are valid UTF-8 (decoded with a leading byte-order mark
    // dropped) and by bytes otherwise. A token whose bytes are valid UTF-8 but do not survive that decoding (those
    // that start with EF BB BF) is then never found: swc leaves it out, so its lookups find what gpt-tokenizer's find.
    if (isValidUtf8(bytes) && !Buffer.from(lenient.decode(bytes), 'utf8').equals(bytes)) continue;
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
