/**
 * swc's offloading and its chain with the window against Haystack's `ToolResultOffloadHook` (`OffloadOverChars`,
 * applied to a whole transcript as swc documents it) followed by its `SlidingWindowCompactor`, end to end: random
 * conversations written as files of every format, through `swc compact --strategy offload` and `offload,window` (in
 * process), compared with test/reference/haystack.ts: which results go to the store, the pointer left for each, what
 * the window keeps after, and the figures; then `swc restore` gives the input back byte for byte.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { portableName, portablePart, storeKey } from '../../src/core/offload.js';
import type { FormatName } from '../helpers/convert.js';
import { runSwc } from '../helpers/run-in-process.js';
import {
  applyWindow,
  approximateCounter,
  DEFAULT_OMISSION_NOTE,
  offloadCandidates,
  offloadPointer,
  resultStepOf,
  slidingWindow,
  type HMessage,
} from '../reference/haystack.js';
import {
  ALL_FORMATS,
  itemsOfOutput,
  noteTextOf,
  randomShapes,
  scratch,
  shapeForResults,
  writeCase,
} from './harness.js';
import { scaled, scaledCount, scaledTimeout } from '../helpers/scale.js';

const count = approximateCounter();
const tmp = scratch();
afterAll(() => tmp.remove());

interface Case {
  readonly seed: number;
  readonly format: FormatName;
  readonly jsonl: boolean;
  readonly chain: 'offload' | 'offload,window';
  readonly minKeepSteps: number;
  readonly over: number;
  readonly perMille: number;
}

const caseArb = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  format: fc.constantFrom(...ALL_FORMATS),
  jsonl: fc.boolean(),
  chain: fc.constantFrom<Case['chain']>('offload', 'offload,window'),
  minKeepSteps: fc.constantFrom(1, 1, 2, 3),
  over: fc.constantFrom(50, 200, 600, 2000),
  perMille: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 400, max: 1000 })),
});

/**
 * The store reference swc writes for a result (docs/cli.md, "The offload store"): the store folder, the input's path
 * as named, then `{step}_{tool}_{call id}-{first 16 hex of the text's sha256}.txt`, relative to the output's folder.
 */
function referenceOf(store: string, input: string, step: number, tool: string, id: string, text: string): string {
  const hash = createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
  return `${store}/${input}/${step}_${tool}_${id}-${hash}.txt`;
}

/** Every string in a parsed item that is a pointer. */
function pointersIn(value: unknown): string[] {
  if (typeof value === 'string') return value.startsWith('Tool result offloaded to ') ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(pointersIn);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(pointersIn);
  return [];
}

describe("swc compact --strategy offload decides as Haystack's ToolResultOffloadHook (then its window)", () => {
  it(
    'on random conversations in every format, through the command line, and restores byte for byte',
    async () => {
      let n = 0;
      const seen = { offloaded: 0, windowed: 0, restored: 0 };
      await fc.assert(
        fc.asyncProperty(caseArb, async (k) => {
          const c = writeCase(k.format, randomShapes(k.seed, shapeForResults(k.format)), k.jsonl);
          const whole = count(c.view.messages);
          const target = Math.max(1, Math.floor((whole * k.perMille) / 1000));
          const name = `o${n++}-${c.name}`;
          const store = `store-${n}`;
          tmp.write(name, c.text);

          // The reference: Haystack's offloading of every candidate, each result replaced by its pointer.
          const candidates = offloadCandidates(c.view.messages, { minKeepSteps: k.minKeepSteps, over: k.over });
          const stepOf = resultStepOf(c.view.messages);
          const view: HMessage[] = c.view.messages.map((m, v) => {
            if (!candidates.includes(v)) return m;
            const r = m.results[0] as HMessage['results'][number];
            const pointer = offloadPointer(
              referenceOf(store, name, stepOf.get(v) ?? 0, r.toolName, r.id ?? '', r.text),
              r.text,
            );
            return { ...m, results: [{ ...r, text: pointer }], meta: { ...m.meta, offloaded: true } };
          });
          const window =
            k.chain === 'offload,window'
              ? slidingWindow(view, target, count, { minKeepSteps: k.minKeepSteps, note: DEFAULT_OMISSION_NOTE })
              : null;

          const r = await runSwc(
            [
              'compact',
              name,
              '--tokenizer',
              'approx',
              '-t',
              String(target),
              '-k',
              String(k.minKeepSteps),
              '--strategy',
              k.chain,
              '--offload-dir',
              store,
              '--offload-over',
              String(k.over),
              '-o',
              `${name}.out`,
              '--json',
            ],
            { cwd: tmp.dir },
          );
          const label = { ...k, target };
          expect({ ...label, status: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({
            ...label,
            status: 0,
            stderr: '',
          });
          const report = JSON.parse(r.stdout) as { changed: boolean; tokensBefore: number; tokensAfter: number };
          const output = tmp.read(`${tmp.dir}/${name}.out`);
          if (candidates.length === 0 && window === null) {
            expect({ ...label, changed: report.changed, same: output === c.text }).toEqual({
              ...label,
              changed: false,
              same: true,
            });
            return;
          }
          if (candidates.length > 0) seen.offloaded++;
          if (window !== null) seen.windowed++;
          const kept = window === null ? c.view.messages.map((_, v) => v) : window.kept;
          // Each kept offloaded result holds exactly the reference's pointer; nothing else does.
          const outItems = itemsOfOutput(k.format, output, k.jsonl);
          const expectedPointers = candidates
            .filter((v) => kept.includes(v))
            .map((v) => (view[v] as HMessage).results[0]?.text);
          expect({ ...label, pointers: outItems.flatMap(pointersIn) }).toEqual({
            ...label,
            pointers: expectedPointers,
          });
          const final =
            window === null ? view : applyWindow(view, { ...window, noteText: noteTextOf(c, window.removed) });
          expect({ ...label, before: report.tokensBefore, after: report.tokensAfter }).toEqual({
            ...label,
            before: whole,
            after: count(final),
          });
          if (window === null) {
            // Nothing removed: restore gives the input back byte for byte, finding the store from the pointers.
            const back = await runSwc(['restore', `${name}.out`, '-o', `${name}.back`], { cwd: tmp.dir });
            expect({
              ...label,
              status: back.status,
              stderr: back.stderr,
              same: back.status === 0 && tmp.read(`${tmp.dir}/${name}.back`) === c.text,
            }).toEqual({ ...label, status: 0, stderr: back.stderr, same: true });
            seen.restored++;
          }
        }),
        { numRuns: scaled(300) },
      );
      // The cases really offload, cut and restore (a generator that stopped making long results would pass vacuously).
      expect(Math.min(seen.offloaded, seen.windowed, seen.restored)).toBeGreaterThan(scaledCount(20, 300));
    },
    scaledTimeout(90_000),
  );
});

/**
 * A name every common file system and sync tool holds (docs/cli.md, "The offload store"): none of the characters
 * Windows reserves or controls, no lone surrogate, the same under NFC and NFD (sync tools rewrite names to either), no
 * Windows device name (with any extension), no leading space, no trailing dot or space, at most 255 bytes of UTF-8.
 */
function isPortableName(name: string): boolean {
  return (
    name !== '' &&
    !/[<>:"/\\|?*\u0000-\u001f\u007f-\u009f]/.test(name) &&
    !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(name) &&
    !/[\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/.test(name) &&
    name.normalize('NFC') === name &&
    name.normalize('NFD') === name &&
    !/^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3]|conin\$|conout\$|clock\$)(\.|$)/i.test(
      name.replace(/ +(?=\.|$)/g, ''),
    ) &&
    !name.startsWith(' ') &&
    !/[. ]$/.test(name) &&
    Buffer.byteLength(name) <= 255
  );
}

/** A name's text back from its escapes, as docs/cli.md describes them (`%XX` per UTF-8 byte), for well-formed texts. */
function unescapeName(name: string): string {
  return name.replace(/(?:%[0-9A-F]{2})+/g, (run) =>
    new TextDecoder('utf-8', { fatal: true }).decode(
      Uint8Array.from(
        run
          .slice(1)
          .split('%')
          .map((h) => parseInt(h, 16)),
      ),
    ),
  );
}

/** Whether a text is well-formed UTF-16 (no lone surrogate). */
const isWellFormed = (text: string): boolean =>
  !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

/** Characters that file systems, sync tools and the escaping itself trip over, and a few that are harmless. */
const HOSTILE = [
  'a',
  'Z',
  '0',
  '_',
  '-',
  '.',
  ' ',
  ':',
  '*',
  '?',
  '"',
  '<',
  '>',
  '|',
  '\\',
  '/',
  '%',
  '~',
  '\u0000',
  '\n',
  '\u001f',
  '\u007f',
  '\u0085',
  'é',
  'e\u0301',
  '中',
  '😀',
  '\u202e',
  '\u200b',
  '\ud800',
  '\udfff',
  'ﬁ',
  'İ',
];
const hostileText = (maxLength: number, minLength = 0): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...HOSTILE), minLength, maxLength });
/** Texts that escape to nearly the same name: a small alphabet of escapes and what they escape to. */
const nearText = fc.string({ unit: fc.constantFrom('a', 'A', '3', ':', '%', '_', '~'), minLength: 1, maxLength: 6 });
/** Long texts sharing their beginning, which the cap cuts to the same text. */
const longText = hostileText(6).map((tail) => `${'x'.repeat(60)}${tail}`);
const partText = fc.oneof(hostileText(12), nearText, longText);

describe('store names are portable', () => {
  it('every name part and folder name is portable, and reads back as its text', () => {
    fc.assert(
      fc.property(partText, fc.integer({ min: 0, max: 50 }), (text, step) => {
        const part = portablePart(text, 48);
        const name = portableName(text);
        const key = storeKey(step, text, text, 0, 'ab12cd34ef56ab78');
        expect({
          text,
          name,
          portable: isPortableName(name),
          key,
          keyPortable: isPortableName(key),
          record: isPortableName(`${key}.0123456789abcdef.swc.json`),
        }).toEqual({ text, name, portable: true, key, keyPortable: true, record: true });
        expect(Buffer.byteLength(part)).toBeLessThanOrEqual(48);
        // Under the cap a name is its text escaped: it reads back as the text, so two texts never share one.
        if (isWellFormed(text) && !part.includes('~')) expect(unescapeName(part)).toBe(text);
        if (isWellFormed(text) && !name.includes('~')) expect(unescapeName(name)).toBe(text === '' ? '~' : text);
      }),
      { numRuns: scaled(2000) },
    );
  });

  it('two different texts never give one name part or folder name', () => {
    fc.assert(
      fc.property(partText, partText, (a, b) => {
        fc.pre(a !== b);
        expect({
          a,
          b,
          same: portablePart(a, 48) === portablePart(b, 48) || portableName(a) === portableName(b),
        }).toEqual({ a, b, same: false });
      }),
      { numRuns: scaled(2000) },
    );
  });

  it(
    'hostile tool names, call ids and input names: every store file name is portable, every result its own file, and restore gives the bytes back',
    async () => {
      let n = 0;
      const call = fc.record({
        tool: fc.oneof(hostileText(10), nearText, longText).map((t) => t.replace(/_/g, '-')),
        id: partText.filter((t) => t !== ''),
        fill: fc.constantFrom('p', 'q'),
      });
      const caseArb = fc.record({
        format: fc.constantFrom('openai', 'anthropic'),
        input: fc.oneof(
          fc.constantFrom(
            'CON',
            'nul.json',
            'COM1',
            'aux.jsonl',
            'LPT\u00b9',
            'trail.',
            'trail ',
            ' lead',
            '..x',
            'a:b*c?.json',
            '%41',
            '~',
          ),
          hostileText(12, 1),
        ),
        steps: fc.array(fc.array(call, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }),
      });
      await fc.assert(
        fc.asyncProperty(caseArb, async (k) => {
          // Ids are unique in a conversation; the text of a result repeats across results (one file per call even so).
          const seen = new Set<string>();
          const steps = k.steps
            .map((calls) => calls.filter((c) => !seen.has(c.id) && seen.add(c.id) !== undefined))
            .filter((calls) => calls.length > 0);
          fc.pre(steps.length > 0);
          const results = steps.flat().length;
          const input = k.input.replace(/[/\u0000]/g, '-');
          fc.pre(!['', '.', '..'].includes(input) && !input.startsWith('-'));
          const dir = path.join(tmp.dir, `names-${n++}`);
          mkdirSync(dir);
          writeFileSync(
            path.join(dir, input),
            hostileConversation(
              k.format,
              steps,
              input.endsWith('.jsonl') ? 'lines' : input.endsWith('.json') ? 'json' : 'any',
            ),
          );
          const original = readFileSync(path.join(dir, input));
          const r = await runSwc(
            [
              'compact',
              `./${input}`,
              '--tokenizer',
              'approx',
              '-t',
              '1',
              '--strategy',
              'offload',
              '--offload-dir',
              'store',
              '--offload-over',
              '1000',
              '-o',
              'out',
            ],
            { cwd: dir },
          );
          const label = { ...k, input };
          expect({ ...label, status: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({
            ...label,
            status: 0,
            stderr: '',
          });
          const names = (readdirSync(path.join(dir, 'store'), { recursive: true }) as string[]).sort();
          const unportable = names
            .flatMap((f) => f.split(path.sep))
            .filter((segment) => segment !== '.swc-store' && !isPortableName(segment));
          expect({ ...label, unportable }).toEqual({ ...label, unportable: [] });
          const files = names.filter((f) => statSync(path.join(dir, 'store', f)).isFile());
          expect({
            ...label,
            texts: files.filter((f) => f.endsWith('.txt')).length,
            records: files.filter((f) => f.endsWith('.swc.json')).length,
          }).toEqual({ ...label, texts: results, records: results });
          const back = await runSwc(['restore', 'out', '-o', 'back'], { cwd: dir });
          expect({
            ...label,
            status: back.status,
            stderr: back.stderr,
            same: back.status === 0 && readFileSync(path.join(dir, 'back')).equals(original),
          }).toEqual({ ...label, status: 0, stderr: back.stderr, same: true });
        }),
        { numRuns: scaled(60) },
      );
    },
    scaledTimeout(120_000),
  );
});

/**
 * A conversation of tool-calling steps in a format, every call's result long enough to offload but for the newest
 * step's, which stays: as JSON, as lines (JSONL: OpenAI's messages, or one Anthropic request as a record), or either.
 */
function hostileConversation(
  format: string,
  steps: readonly (readonly { tool: string; id: string; fill: string }[])[],
  layout: 'json' | 'lines' | 'any',
): string {
  const long = (c: { fill: string }): string => c.fill.repeat(1500);
  if (format === 'anthropic') {
    const messages: unknown[] = [{ role: 'user', content: 'task' }];
    for (const calls of steps) {
      messages.push({
        role: 'assistant',
        content: calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.tool, input: {} })),
      });
      messages.push({
        role: 'user',
        content: calls.map((c) => ({ type: 'tool_result', tool_use_id: c.id, content: long(c) })),
      });
    }
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: 'last', name: 'done', input: {} }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'last', content: 'ok' }] });
    return layout === 'lines'
      ? `${JSON.stringify({ model: 'm', max_tokens: 10, messages })}\n`
      : JSON.stringify({ model: 'm', max_tokens: 10, messages }, null, 2);
  }
  const messages: unknown[] = [{ role: 'user', content: 'task' }];
  for (const calls of steps) {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.tool, arguments: '{}' } })),
    });
    for (const c of calls) messages.push({ role: 'tool', tool_call_id: c.id, content: long(c) });
  }
  messages.push({
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'last', type: 'function', function: { name: 'done', arguments: '{}' } }],
  });
  messages.push({ role: 'tool', tool_call_id: 'last', content: 'ok' });
  return layout === 'json'
    ? JSON.stringify(messages, null, 1)
    : `${messages.map((m) => JSON.stringify(m)).join('\n')}\n`;
}
