import { it } from '@jest/globals';
import { planCompaction } from '../../../src/core/compact.js';
import { renderMessage } from '../../../src/core/render.js';
import { decodeSource } from '../../../src/io/source.js';
import { compactSource } from '../../../src/pipeline.js';
import { createApproxCounter } from '../../../src/tokens/approx.js';
import { createRng, FORMAT_NAMES, randomConversation, referenceMessages, writeAs } from '../../helpers/convert.js';
it('debug', () => {
  for (let seed = 401; seed <= 2400; seed++) {
    const conversation = randomConversation(seed);
    const rng = createRng(seed * 7919 + 1);
    const whole = planCompaction(referenceMessages(conversation), createApproxCounter(), { target: 0, exhaustive: true }).tokensBefore;
    const settings = { target: Math.max(1, rng.int(Math.floor(whole / 5), Math.ceil(whole * 1.1))), minKeepSteps: rng.pick([0, 1, 1, 2, 3]), note: rng.pick<string | null | undefined>([undefined, undefined, null, 'Dropped {num_removed} messages; see the {num_removed} log.']) };
    const ref = planCompaction(referenceMessages(conversation), createApproxCounter(), { ...settings, exhaustive: true });
    const v = createRng(seed * 31 + 7);
    const noI = conversation.every((m) => m.role !== 'system');
    const opts: any = { openai: { jsonl: v.chance(0.5) }, haystack: { jsonl: v.chance(0.3) }, anthropic: { jsonl: noI && v.chance(0.3), systemString: v.chance(0.5) }, responses: { jsonl: v.chance(0.3), typed: v.chance(0.5) }, gemini: { jsonl: noI && v.chance(0.3), snake: v.chance(0.5) } };
    for (const format of FORMAT_NAMES) {
      const w = writeAs(format, conversation, opts[format]);
      const r = compactSource(decodeSource(Buffer.from(w.text), w.name), { ...settings, counter: createApproxCounter(), exhaustive: true });
      const c = r.conversations[0]!;
      const keptItems = new Set<number>(c.normalized.pinned ?? []);
      for (const m of c.plan.kept) for (const i of c.normalized.itemsOf[m] ?? []) keptItems.add(i);
      const kept = w.itemOf.map((i) => i === null || keptItems.has(i));
      const exp = conversation.map((_, i) => ref.kept.includes(i));
      if (JSON.stringify(kept) !== JSON.stringify(exp)) {
        console.log(seed, format, r.format, JSON.stringify(opts[format]), JSON.stringify(settings));
        console.log(conversation.map((m, i) => `${i} ${m.role} ${exp[i]} ${kept[i]} ${JSON.stringify(renderMessage(referenceMessages(conversation)[i]!).text.slice(0, 80))}`).join('\n'));
        console.log(c.normalized.messages.map((m, i) => `${i} ${m.role} ${JSON.stringify(c.normalized.itemsOf[i])} ${JSON.stringify(renderMessage(m).text.slice(0, 80))}`).join('\n'));
        return;
      }
    }
  }
});
