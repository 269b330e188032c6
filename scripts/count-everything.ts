/**
 * A count-everything compactor for the benchmark: the same reading, the same decisions and the same output as
 * `swc compact`, but it tokenizes the whole conversation first (every message, as a straightforward implementation
 * does) instead of stopping where the decision no longer needs counts.
 *
 * Usage (after bench.ts has compiled it): node count-everything.mjs <file> <target> <out>
 */
import { writeFileSync } from 'node:fs';
import { encodeOutput } from '../src/io/source.js';
import { readSourceFile } from '../src/io/lines.js';
import { compactSource } from '../src/pipeline/index.js';
import { createCounter } from '../src/tokens/index.js';

const [file, target, out] = process.argv.slice(2);
if (file === undefined || target === undefined || out === undefined)
  throw new Error('usage: count-everything <file> <target> <out>');
const counter = await createCounter('o200k_base');
const source = readSourceFile(file);
// exhaustive: the whole conversation and every group are counted, whatever the decision needs.
const result = await compactSource(source, { target: Number(target), counter, exhaustive: true });
writeFileSync(out, encodeOutput(result.output, source.bom));
const plan = result.conversations[0]?.plan;
process.stdout.write(`${plan?.tokensBefore ?? 0} ${plan?.tokensAfter ?? 0}\n`);
