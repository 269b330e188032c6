/** A conversation's structure and plan as plain data, to compare a list with a copy of it. */
import { planCompaction } from '../../src/core/compact.js';
import { analyze, stepMessages } from '../../src/core/groups.js';
import type { Message } from '../../src/core/types.js';
import { createApproxCounter } from '../../src/tokens/approx.js';

/** The structure with its lazy lists read out as arrays. */
export function structureOf(messages: readonly Message[]): unknown {
  const s = analyze(messages);
  return {
    ...s,
    stepMessages: [...stepMessages(messages, s)],
    turns: Array.from(s.turns, (t) => [...t]),
    steps: Array.from(s.steps, (t) => [...t]),
    notes: [...s.notes],
  };
}

/**
 * The plan as plain data, its lazily listed fields read.
 * @param messages - the conversation
 * @param target - the target in approximate tokens
 * @param minKeepSteps - the steps kept whatever the target
 * @param note - the note's template, or null for none
 * @returns the plan, as JSON would carry it
 */
export function planOf(
  messages: readonly Message[],
  target: number,
  minKeepSteps: number,
  note: string | null,
): unknown {
  return JSON.parse(JSON.stringify(planCompaction(messages, createApproxCounter(), { target, minKeepSteps, note })));
}
