/**
 * Detection of a list that grows, item by item (a warm compactor's), finds what detecting the whole list finds: for
 * lists drawn from the items of every shipped fixture and some that fit no format, grown in random steps.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { FORMATS } from '../../src/formats/registry.js';
import { GrowingDetection } from '../../src/pipeline/index.js';
import { scaled } from '../helpers/scale.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return files(full);
    return /\.jsonl?$/.test(name) ? [full] : [];
  });
}

/** The elements of every list of objects in a value, two levels down at most (where transcripts keep messages). */
function listItems(value: unknown, depth: number, out: unknown[]): void {
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every((v) => typeof v === 'object' && v !== null)) out.push(...value.slice(0, 40));
    if (depth > 0) for (const v of value.slice(0, 5)) listItems(v, depth - 1, out);
  } else if (typeof value === 'object' && value !== null && depth > 0)
    for (const v of Object.values(value)) listItems(v, depth - 1, out);
}

function parsed(file: string): unknown[] {
  const text = readFileSync(file, 'utf8');
  try {
    return [JSON.parse(text) as unknown];
  } catch {
    const lines: unknown[] = [];
    for (const line of text.split('\n')) {
      try {
        if (line.trim() !== '') lines.push(JSON.parse(line) as unknown);
      } catch {
        // A broken line is a case of its own, not an item.
      }
    }
    return [lines];
  }
}

const POOL: unknown[] = [];
for (const file of files(FIXTURES)) for (const value of parsed(file)) listItems(value, 2, POOL);
POOL.push(1, null, 'text', {}, { role: 'user' }, { role: 'user', content: 'hi' }, [], { type: 'x' });

const wholeList = (items: readonly unknown[], container: Record<string, unknown> | null): string | undefined =>
  FORMATS.find((f) => f.detect(items, container))?.name;

describe('detection of a growing list', () => {
  it('draws its items from every format', () => {
    const found = new Set(POOL.map((item) => wholeList([item], null)).filter((n) => n !== undefined));
    expect(found.size).toBeGreaterThanOrEqual(7);
  });

  it('finds, after every step, the format detection of the whole list finds', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.nat(POOL.length - 1), { minLength: 0, maxLength: 4 }), { minLength: 1, maxLength: 12 }),
        fc.nat(POOL.length - 1),
        fc.constantFrom(null, { system: 'rules' }, { instructions: 'rules' }),
        (steps, first, container) => {
          // Lists mostly of one format (the first item's neighbours in the pool), with strays.
          const detection = new GrowingDetection(container);
          const list: unknown[] = [];
          for (const step of steps) {
            for (const pick of step) list.push(POOL[pick % 3 === 0 ? pick : (first + (pick % 7)) % POOL.length]);
            expect(detection.formatOf(list)?.name).toEqual(wholeList(list, container));
          }
        },
      ),
      { numRuns: scaled(400) },
    );
  });
});
