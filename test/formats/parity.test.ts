import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { planCompaction } from '../../src/core/compact.js';
import { DEFAULT_NOTE_TEMPLATE } from '../../src/core/note.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource, type FileResult } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { REAL_DATA } from '../helpers/cli.js';
import {
  createRng,
  FORMAT_NAMES,
  randomConversation,
  referenceMessages,
  writeAs,
  type Conversation,
  type FormatName,
  type WriteOptions,
} from '../helpers/convert.js';
import { scaled } from '../helpers/scale.js';

/** What one compaction kept of the conversation, message by message, and what it measured. */
interface Outcome {
  readonly kept: boolean[];
  readonly changed: boolean;
  readonly tokensBefore: number;
}

interface Settings {
  readonly target: number;
  readonly minKeepSteps: number;
  readonly note: string | null | undefined;
}

async function compactFile(
  format: FormatName,
  conversation: Conversation,
  settings: Settings,
  options: WriteOptions,
): Promise<{ outcome: Outcome; result: FileResult }> {
  const written = writeAs(format, conversation, options);
  const result = await compactSource(decodeSource(Buffer.from(written.text), written.name), {
    target: settings.target,
    minKeepSteps: settings.minKeepSteps,
    note: settings.note,
    counter: createApproxCounter(),
    exhaustive: true,
  });
  const only = result.conversations[0];
  if (only === undefined) throw new Error('no conversation');
  const keptItems = new Set<number>(only.normalized.pinned ?? []);
  for (const m of only.plan.kept) for (const item of only.normalized.itemsOf[m] ?? []) keptItems.add(item);
  const kept = written.itemOf.map((item) => item === null || keptItems.has(item));
  return { outcome: { kept, changed: only.plan.changed, tokensBefore: only.plan.tokensBefore }, result };
}

function reference(conversation: Conversation, settings: Settings): Outcome {
  const plan = planCompaction(referenceMessages(conversation), createApproxCounter(), {
    ...settings,
    exhaustive: true,
  });
  const kept = new Set(plan.kept);
  return { kept: conversation.map((_, i) => kept.has(i)), changed: plan.changed, tokensBefore: plan.tokensBefore };
}

/** Settings that make a compaction likely: a target between a fifth of the conversation and a little over all of it. */
function randomSettings(seed: number, conversation: Conversation): Settings {
  const rng = createRng(seed * 7919 + 1);
  const whole = planCompaction(referenceMessages(conversation), createApproxCounter(), {
    target: 0,
    exhaustive: true,
  }).tokensBefore;
  return {
    target: Math.max(1, rng.int(Math.floor(whole / 5), Math.ceil(whole * 1.1))),
    minKeepSteps: rng.pick([0, 1, 1, 2, 3]),
    note: rng.pick<string | null | undefined>([
      undefined,
      undefined,
      null,
      'Dropped {num_removed} messages; see the {num_removed} log.',
    ]),
  };
}

/** The spelling variants a seed writes each format in. */
function variants(seed: number, conversation: Conversation): Record<FormatName, WriteOptions> {
  const rng = createRng(seed * 31 + 7);
  const noInstructions = conversation.every((m) => m.role !== 'system');
  return {
    openai: { jsonl: rng.chance(0.5) },
    haystack: { jsonl: rng.chance(0.3) },
    anthropic: { jsonl: noInstructions && rng.chance(0.3), systemString: rng.chance(0.5) },
    responses: { jsonl: rng.chance(0.3), typed: rng.chance(0.5) },
    gemini: { jsonl: noInstructions && rng.chance(0.3), snake: rng.chance(0.5) },
  };
}

/**
 * The format auto-detection names. A list with nothing only Anthropic or Responses writes (plain `{role, content}`
 * messages, text blocks, typed message items) outside an `input` key is OpenAI chat as far as anyone can tell,
 * and OpenAI reads it the same way.
 */
function expectedFormat(format: FormatName, conversation: Conversation, options: WriteOptions): FormatName {
  const rich = conversation.some(
    (m) =>
      (m.role === 'assistant' && (m.calls.length > 0 || m.reasoning !== null)) ||
      (m.role === 'user' && (m.images > 0 || m.files.length > 0)),
  );
  if (format === 'anthropic' && !rich && conversation.every((m) => m.role !== 'system')) return 'openai';
  const items = conversation.some(
    (m) =>
      (m.role === 'assistant' && (m.calls.length > 0 || m.reasoning !== null)) ||
      (m.role === 'user' && m.note !== true && (m.texts.length > 1 || m.images > 0 || m.files.length > 0)),
  );
  // Untyped Responses JSONL with only plain messages is plain chat; typed items (`"type": "message"`) and typed
  // content parts (`input_text`, `input_image`) are Responses only.
  if (format === 'responses' && options.jsonl && !items && options.typed !== true) return 'openai';
  return format;
}

const SEEDS = Array.from({ length: scaled(400) }, (_, k) => k + 1);

describe('the same conversation in every format', () => {
  it('is kept and removed message for message as the core decides on the conversation itself', async () => {
    let changed = 0;
    for (const seed of SEEDS) {
      const conversation = randomConversation(seed);
      const settings = randomSettings(seed, conversation);
      const expected = reference(conversation, settings);
      if (expected.changed) changed++;
      const options = variants(seed, conversation);
      for (const format of FORMAT_NAMES) {
        const { outcome, result } = await compactFile(format, conversation, settings, options[format]);
        const context = `seed ${seed}, ${format} ${JSON.stringify(options[format])}, ${JSON.stringify(settings)}`;
        expect({ context, format: result.format }).toEqual({
          context,
          format: expectedFormat(format, conversation, options[format]),
        });
        expect({ context, ...outcome }).toEqual({ context, ...expected });
      }
    }
    // The settings are drawn so that most conversations do get compacted.
    expect(changed).toBeGreaterThan(SEEDS.length / 2);
  });

  it('changes nothing on a second run with the same settings, in every format', async () => {
    for (const seed of SEEDS.slice(0, scaled(120))) {
      const conversation = randomConversation(seed);
      const settings = randomSettings(seed, conversation);
      const options = variants(seed, conversation);
      for (const format of FORMAT_NAMES) {
        const { result } = await compactFile(format, conversation, settings, options[format]);
        const again = await compactSource(decodeSource(Buffer.from(result.output), result.file), {
          ...settings,
          counter: createApproxCounter(),
        });
        // (What a compaction keeps may no longer show its format: OpenAI then reads it, the same way.)
        expect({ seed, format, changed: again.changed, output: again.output }).toEqual({
          seed,
          format,
          changed: false,
          output: result.output,
        });
      }
    }
  });

  it('recognises an earlier note in every format and folds it into the new one', async () => {
    const conversation: Conversation = [
      { role: 'system', text: 'Be brief.' },
      {
        role: 'user',
        texts: ['[7 earlier messages were removed from this conversation to free up context and cannot be recovered.]'],
        images: 0,
        files: [],
        note: true,
      },
      { role: 'user', texts: ['first question '.repeat(20)], images: 0, files: [] },
      { role: 'assistant', text: 'first answer '.repeat(20), reasoning: null, calls: [] },
      { role: 'user', texts: ['the task'], images: 0, files: [] },
    ];
    for (const format of FORMAT_NAMES) {
      const { outcome, result } = await compactFile(
        format,
        conversation,
        { target: 40, minKeepSteps: 1, note: DEFAULT_NOTE_TEMPLATE },
        {},
      );
      expect({ format, kept: outcome.kept }).toEqual({ format, kept: [true, false, false, false, true] });
      const plan = result.conversations[0]?.plan;
      // The old note's 7 do not add up: the count is of messages this run removed, in the file's own items.
      expect({ format, note: plan?.noteText }).toEqual({
        format,
        note: '[3 earlier messages were removed from this conversation to free up context and cannot be recovered.]',
      });
    }
  });
});

describe('auto-detection on the real transcripts in fixtures/real', () => {
  const expected: Record<string, string> = {
    anthropic: 'anthropic',
    'openai-responses': 'responses',
    gemini: 'gemini',
    'openai-chat': 'openai',
  };
  const files = readdirSync(REAL_DATA, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => readdirSync(path.join(REAL_DATA, d.name)).map((f) => path.join(d.name, f)))
    .sort();

  it('names Anthropic, Responses, Gemini and OpenAI files by their format, and claims no file of another format for them', async () => {
    const found: Record<string, string> = {};
    for (const file of files) {
      let format: string;
      try {
        format = (
          await compactSource(decodeSource(readFileSync(path.join(REAL_DATA, file)), file), {
            target: 1e9,
            counter: createApproxCounter(),
          })
        ).format;
      } catch {
        format = 'error';
      }
      found[file] = format;
    }
    for (const file of files) {
      const want = expected[path.dirname(file)];
      if (want !== undefined) expect({ file, format: found[file] }).toEqual({ file, format: want });
      else
        expect({ file, mine: ['anthropic', 'responses', 'gemini'].includes(found[file] as string) }).toEqual({
          file,
          mine: false,
        });
    }
  });
});
