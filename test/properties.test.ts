/**
 * Properties of compaction over generated transcript files (fast-check): OpenAI chat and Haystack, JSON and JSONL,
 * in many layouts, with unusual numbers, escapes and `__proto__`-like keys. They go through the library pipeline
 * (decode, layout, adapter, decision, rebuild) with the approximate counter, and never look inside an item: which
 * items survived is read from the output text, and what each message was comes from the generator's model.
 * Other formats plug in by adding a codec to CODECS (see test/helpers/conversation-arbitraries.ts).
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { compact, noteTemplate, planCompaction } from '../src/core/compact.js';
import { formatNote } from '../src/core/note.js';
import { readLayout } from '../src/io/layout.js';
import { decodeSource } from '../src/io/source.js';
import { chooseFormat, compactSource, normalizeSlot, writeSlot } from '../src/pipeline/index.js';
import { createApproxCounter } from '../src/tokens/approx.js';
import {
  haystackCodec,
  noteArb,
  openaiCodec,
  transcriptFileArb,
  writeItems,
  type ConvMessage,
  type FormatCodec,
  type TranscriptFile,
} from './helpers/conversation-arbitraries.js';
import { deepFreeze } from './helpers/fake-counter.js';
import { scaled } from './helpers/scale.js';
import type { JsonNode } from './helpers/json-text.js';

const CODECS: readonly FormatCodec[] = [openaiCodec, haystackCodec];
const RUNS = scaled(150);
const counter = createApproxCounter();

interface Settings {
  /** The target as a share of the file's size (above 1: the file already fits). */
  readonly share: number;
  readonly minKeepSteps: number;
  readonly note: string | null | undefined;
}

const settingsArb: fc.Arbitrary<Settings> = fc.record({
  share: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constant(1.5)),
  minKeepSteps: fc.integer({ min: 0, max: 3 }),
  note: noteArb,
});

function compactBytes(
  bytes: Buffer,
  name: string,
  target: number,
  settings: Settings,
): ReturnType<typeof compactSource> {
  return compactSource(decodeSource(bytes, name), {
    target,
    minKeepSteps: settings.minKeepSteps,
    note: settings.note,
    counter,
  });
}

/** The file's size in tokens (what a target of "everything" measures). */
async function sizeOf(file: TranscriptFile): Promise<number> {
  const result = await compactBytes(file.bytes, file.name, Number.MAX_SAFE_INTEGER, {
    share: 1,
    minKeepSteps: 1,
    note: undefined,
  });
  return result.conversations.reduce((a, c) => a + c.plan.tokensBefore, 0);
}

async function targetOf(file: TranscriptFile, share: number): Promise<number> {
  return Math.max(1, Math.floor((await sizeOf(file)) * share));
}

/** The items a file's text holds, as written. */
function rawsOf(text: string, name: string): readonly string[] {
  const slots = readLayout(decodeSource(Buffer.from(text, 'utf8'), name)).slots;
  expect(slots).toHaveLength(1);
  // A JSONL item's raw text runs to the end of its line, a CR of a CRLF included.
  return (slots[0] as (typeof slots)[number]).raws.map((r) => (r.endsWith('\r') ? r.slice(0, -1) : r));
}

/**
 * Which input items an output holds, read from its text: every output item is an input item byte for byte, in input
 * order, except new ones (notes), whose output positions are returned.
 */
function survivors(file: TranscriptFile, output: string): { kept: number[]; added: { at: number; raw: string }[] } {
  const before = rawsOf(file.text, file.name);
  const after = output.trim() === '' ? [] : rawsOf(output, file.name);
  const kept: number[] = [];
  const added: { at: number; raw: string }[] = [];
  let next = 0;
  after.forEach((r, at) => {
    const found = before.indexOf(r, next);
    if (found === -1) added.push({ at, raw: r });
    else {
      kept.push(found);
      next = found + 1;
    }
  });
  return { kept, added };
}

/** The messages (by model index) whose items all survived. */
function keptMessages(file: TranscriptFile, keptItems: readonly number[]): Set<number> {
  const items = new Set(keptItems);
  const out = new Set<number>();
  file.itemOf.forEach((its, m) => {
    if (its.length > 0 && its.every((i) => items.has(i))) out.add(m);
  });
  return out;
}

/** Problems with tool calls and results that were separated, in the model's terms. */
function separations(messages: readonly ConvMessage[], kept: ReadonlySet<number>): string[] {
  const problems: string[] = [];
  const callOwner = new Map<string, number>();
  messages.forEach((m, k) => {
    if (m.role === 'assistant') for (const c of m.calls) callOwner.set(c.id, k);
  });
  messages.forEach((m, k) => {
    if (m.role !== 'tool') return;
    const owner = callOwner.get(m.callId);
    if (owner !== undefined && kept.has(owner) !== kept.has(k))
      problems.push(`result ${k} and its call in ${owner}: one kept, one removed`);
    // A result stays with the assistant message it follows, and with every result between them.
    let a = k - 1;
    while (a >= 0 && messages[a]?.role === 'tool') a--;
    if (a < 0 || messages[a]?.role !== 'assistant' || !kept.has(k)) return;
    for (let j = a; j < k; j++) if (!kept.has(j)) problems.push(`result ${k} kept but ${j} of its step removed`);
  });
  return problems;
}

/** The leading system messages and the task (the latest user message that is not a note), by model index. */
function protectedMessages(messages: readonly ConvMessage[]): number[] {
  const out: number[] = [];
  for (let k = 0; k < messages.length && messages[k]?.role === 'system'; k++) out.push(k);
  for (let k = messages.length - 1; k >= 0; k--) {
    if (messages[k]?.role === 'user') {
      out.push(k);
      break;
    }
  }
  return out;
}

describe('compaction of generated OpenAI and Haystack files, JSON and JSONL', () => {
  it('never separates a tool call from its results and keeps the instructions and the task', async () => {
    await fc.assert(
      fc.asyncProperty(transcriptFileArb(CODECS), settingsArb, async (file, settings) => {
        const result = await compactBytes(file.bytes, file.name, await targetOf(file, settings.share), settings);
        const kept = keptMessages(file, survivors(file, result.output).kept);
        expect(separations(file.messages, kept)).toEqual([]);
        for (const k of protectedMessages(file.messages)) expect(kept.has(k)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it("writes kept items byte for byte and the note in the file's own style, or the input itself when nothing changes", async () => {
    await fc.assert(
      fc.asyncProperty(transcriptFileArb(CODECS), settingsArb, async (file, settings) => {
        const result = await compactBytes(file.bytes, file.name, await targetOf(file, settings.share), settings);
        expect(result.layout.source.bom).toBe(file.style.bom);
        if (!result.changed) {
          expect(result.output).toBe(file.text);
          return;
        }
        const { kept, added } = survivors(file, result.output);
        const template = noteTemplate(settings.note);
        expect(added.length).toBe(template === null ? 0 : 1);
        // The whole output is what the file's own writer would write for the kept items and the note.
        const items: JsonNode[] = kept.map((i) => file.items[i] as JsonNode);
        if (template !== null) {
          const removed = file.items.length - kept.length;
          items.splice(
            (added[0] as { at: number }).at,
            0,
            file.codec.note(formatNote(template, removed), removed, kept.length),
          );
        }
        expect(result.output).toBe(writeItems(items, file.framing, file.frame, file.style));
      }),
      { numRuns: RUNS },
    );
  });

  it('writes output that parses in the same format, and a second run with the same settings changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(transcriptFileArb(CODECS), settingsArb, async (file, settings) => {
        const target = await targetOf(file, settings.share);
        const first = await compactBytes(file.bytes, file.name, target, settings);
        expect(first.format).toBe(file.codec.name);
        // Compaction may remove every item of a conversation without instructions or a task (with no note and
        // --min-keep-steps 0); an empty file is an error for swc, so such an output is not read again.
        fc.pre(survivors(file, first.output).kept.length + survivors(file, first.output).added.length > 0);
        const second = await compactBytes(Buffer.from(first.output, 'utf8'), file.name, target, settings);
        expect(second.format).toBe(file.codec.name);
        expect(second.changed).toBe(false);
        expect(second.output).toBe(first.output);
      }),
      { numRuns: RUNS },
    );
  });

  it('keeps every message a smaller target keeps when the target grows', async () => {
    await fc.assert(
      fc.asyncProperty(
        transcriptFileArb(CODECS),
        settingsArb,
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (file, settings, more) => {
          const size = await sizeOf(file);
          const small = Math.max(1, Math.floor(size * Math.min(settings.share, 1)));
          const large = small + 1 + Math.floor((size - small) * more);
          const keptSmall = survivors(file, (await compactBytes(file.bytes, file.name, small, settings)).output).kept;
          const keptLarge = new Set(
            survivors(file, (await compactBytes(file.bytes, file.name, large, settings)).output).kept,
          );
          for (const i of keptSmall) expect(keptLarge.has(i)).toBe(true);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('never mutates the parsed items, the container or the normalized messages', async () => {
    await fc.assert(
      fc.asyncProperty(transcriptFileArb(CODECS), settingsArb, async (file, settings) => {
        const source = decodeSource(file.bytes, file.name);
        const slot = readLayout(source).slots[0];
        if (slot === undefined) throw new Error('no slot');
        const before = JSON.stringify([slot.items, slot.container]);
        deepFreeze(slot.items);
        deepFreeze(slot.container);
        const template = noteTemplate(settings.note);
        const adapter = chooseFormat(slot, 'auto', file.name);
        const normalized = normalizeSlot(source, slot, adapter, template);
        deepFreeze(normalized);
        const options = {
          target: await targetOf(file, settings.share),
          minKeepSteps: settings.minKeepSteps,
          note: template,
        };
        // Frozen values throw on any write (ES modules are strict), so passing means nothing was written.
        const plan = planCompaction(normalized.messages, counter, options);
        writeSlot(slot, adapter, normalized, plan);
        const result = compact(normalized.messages, counter, options);
        expect(result === null).toBe(!plan.changed);
        expect(JSON.stringify([slot.items, slot.container])).toBe(before);
      }),
      { numRuns: RUNS },
    );
  });
});
