/**
 * The sliding-window rules 1–11 of issue 2, one describe block each, with a fake counter where every
 * message costs 10 tokens, so every expected number below can be worked out by hand (comments show the sums).
 */
import { describe, expect, it } from '@jest/globals';
import { compact, planCompaction, type CompactOptions, type Plan } from '../../src/core/compact.js';
import { DEFAULT_NOTE_TEMPLATE } from '../../src/core/note.js';
import { renderMessage, textContent } from '../../src/core/render.js';
import { SLIDING_WINDOW, type Message, type TokenCounter } from '../../src/core/types.js';
import {
  assistant,
  createFakeCounter,
  deepFreeze,
  defaultNote,
  earlierNote,
  pruned,
  system,
  tool,
  user,
} from '../helpers/fake-counter.js';

/** The parts of a plan the rules decide. */
function decide(messages: readonly Message[], options: CompactOptions, counter: TokenCounter = createFakeCounter()) {
  const plan: Plan = planCompaction(messages, counter, options);
  return {
    changed: plan.changed,
    kept: plan.kept,
    removed: plan.removed,
    noteIndex: plan.noteIndex,
    noteText: plan.noteText,
  };
}

function changedTo(kept: number[], removed: number[], noteIndex: number | null, noteText: string | null) {
  return { changed: true, kept, removed, noteIndex, noteText };
}

function unchanged(length: number) {
  return { changed: false, kept: [...Array(length).keys()], removed: [], noteIndex: null, noteText: null };
}

/** Compaction notes in a message list. */
function notesIn(messages: readonly Message[]): Message[] {
  return messages.filter((m) => m.compaction === SLIDING_WINDOW);
}

// [S0, A1, U2, A3, T4, N5, U6, A7, T8 (pruned), U9]: an orphan before the first turn, an earlier note inside
// turn [2,3,4], a pruned result inside turn [6,7,8]. Protected [0,9] = 20; each turn = 30; whole = 100.
const history = (): Message[] => [
  system(),
  assistant('orphan before any user message'),
  user('first question'),
  assistant(null, 'search'),
  tool('search'),
  earlierNote(7),
  user('second question'),
  assistant(null, 'fetch'),
  pruned(tool('fetch')),
  user('the current task'),
];

// [S0, U1, A2(x,y), T3(x), T4(y), A5(z), T6(z), S7 stray, T8 orphan, A9]: steps [2,3,4] = 30, [5,6] = 20, [9] = 10.
const parallel = (): Message[] => [
  system(),
  user('task'),
  assistant('two calls at once', 'x', 'y'),
  tool('x'),
  tool('y'),
  assistant(null, 'z'),
  tool('z'),
  system('a stray system message'),
  tool('orphan'),
  assistant('done'),
];

// [S0, U1, A2, U3, A4 T5, A6 T7, A8 T9]: one turn [1,2] = 20, protected [0,3] = 20, three steps of 20; whole = 100.
const threeSteps = (): Message[] => [
  system(),
  user('old question'),
  assistant('old answer'),
  user('task'),
  assistant(null, 'a'),
  tool('a'),
  assistant(null, 'b'),
  tool('b'),
  assistant(null, 'c'),
  tool('c'),
];

describe('rule 1: leading system messages', () => {
  it('keeps every leading system message even at a target of zero', () => {
    const messages = [
      system('one'),
      system('two'),
      user('old'),
      assistant('old'),
      user('task'),
      assistant(null, 'x'),
      tool('x'),
    ];
    // protected [0,1,4] = 30 > 0: every turn and (with min_keep_steps 0) every step goes.
    expect(decide(messages, { target: 0, minKeepSteps: 0 })).toEqual(
      changedTo([0, 1, 4], [2, 3, 5, 6], 3, defaultNote(4)),
    );
  });

  it('treats a system message after the first user message as part of that turn', () => {
    const messages = [
      system(),
      user('old'),
      system('mid-conversation'),
      assistant('old'),
      user('task'),
      assistant('a'),
    ];
    // whole 60 > 55; budget 55 - 20 = 35; steps [5] = 10, left 25; turn [1,2,3] = 30 does not fit.
    expect(decide(messages, { target: 55 })).toEqual(changedTo([0, 4, 5], [1, 2, 3], 1, defaultNote(3)));
  });

  it('ends the leading run at a system message made by compaction', () => {
    const messages = [
      system(),
      pruned(system('pruned')),
      system('after it'),
      user('old'),
      assistant('old'),
      user('task'),
    ];
    // leading run = [0]; [1,2] sit before the first user message in history, in no turn; turn [3,4] = 20 fits 35.
    expect(decide(messages, { target: 55 })).toEqual(changedTo([0, 3, 4, 5], [1, 2], 1, defaultNote(2)));
  });
});

describe('rule 2: the current task', () => {
  it('takes the latest user message not made by compaction as the task', () => {
    const messages = [
      system(),
      user('old'),
      assistant('old'),
      user('task'),
      assistant(null, 'x'),
      tool('x'),
      pruned(user('pruned')),
    ];
    // task = 3; budget 50 - 20 = 30; steps 20, left 10; turn [1,2] = 20 does not fit; the pruned user message is a stray.
    const plan = planCompaction(messages, createFakeCounter(), { target: 50 });
    expect(plan.groups.find((g) => g.kind === 'task')?.start).toBe(3);
    expect(decide(messages, { target: 50 })).toEqual(changedTo([0, 3, 4, 5], [1, 2, 6], 1, defaultNote(3)));
  });

  it('never takes an earlier note for the task', () => {
    const messages = [system(), user('task'), assistant(null, 'x'), tool('x'), earlierNote(3), assistant('done')];
    // task = 1; steps [2,3] = 20 and [5] = 10 exceed budget 40 - 20 = 20: [5] fits, [2,3] does not.
    expect(decide(messages, { target: 40 })).toEqual(changedTo([0, 1, 5], [2, 3, 4], 2, defaultNote(3)));
  });

  it('finds no task and no history without a user message, and looks for steps right after the instructions', () => {
    const messages = [system(), assistant(null, 'x'), tool('x'), assistant(null, 'y'), tool('y')];
    // protected [0] = 10; steps 40 exceed budget 20; [3,4] = 20 fits exactly, [1,2] does not.
    const plan = planCompaction(messages, createFakeCounter(), { target: 30 });
    expect(plan.protectedTokens).toBe(10);
    expect(decide(messages, { target: 30 })).toEqual(changedTo([0, 3, 4], [1, 2], 1, defaultNote(2)));
  });

  it('treats every message as a step or a stray when there is neither a system nor a user message', () => {
    const messages = [tool('orphan'), assistant(null, 'x'), tool('x'), assistant('done')];
    // protected = 0; steps [1,2] = 20 and [3] = 10 exceed budget 10; [3] fits exactly.
    expect(decide(messages, { target: 10 })).toEqual(changedTo([3], [0, 1, 2], 0, defaultNote(3)));
  });

  it('changes nothing in a conversation of only system messages, even far above the target', () => {
    const messages = [system('a'), system('b'), system('c')];
    const plan = planCompaction(messages, createFakeCounter(), { target: 5 });
    expect(plan.unchanged).toBe('nothing-removed');
    expect(plan.tokensAfter).toBe(30);
    expect(plan.targetMet).toBe(false);
    expect(compact(messages, createFakeCounter(), { target: 5 })).toBeNull();
  });

  it('changes nothing in an empty conversation', () => {
    expect(compact([], createFakeCounter(), { target: 0 })).toBeNull();
  });
});

describe('rule 3: history and turns', () => {
  it('keeps whole turns newest first and drops what comes before the first user message', () => {
    // budget 60 - 20 = 40: turn [6,7,8] = 30 fits, left 10; turn [2,3,4] = 30 does not.
    expect(decide(history(), { target: 60 })).toEqual(changedTo([0, 6, 7, 8, 9], [1, 2, 3, 4, 5], 1, defaultNote(5)));
  });

  it('leaves an earlier note out of the turn it sits in, both when measuring and when keeping', () => {
    // budget 80 - 20 = 60 = 30 + 30: both turns fit only because note 5 is not counted in turn [2,3,4].
    expect(decide(history(), { target: 80 })).toEqual(changedTo([0, 2, 3, 4, 6, 7, 8, 9], [1, 5], 1, defaultNote(2)));
  });

  it('keeps a message made by another strategy inside its turn', () => {
    expect(decide(history(), { target: 60 }).kept).toContain(8);
  });

  it('does not start a turn at a user message made by another strategy', () => {
    const messages = [
      system(),
      user('old'),
      assistant('old'),
      pruned(user('pruned question')),
      assistant('answer'),
      user('task'),
    ];
    // one turn [1,2,3,4] = 40 > budget 30; were [3,4] a turn of its own (20) it would have been kept.
    expect(decide(messages, { target: 50 })).toEqual(changedTo([0, 5], [1, 2, 3, 4], 1, defaultNote(4)));
  });
});

describe('rule 4: steps after the task', () => {
  it('drops a stray system message and an orphan tool result after the task', () => {
    // budget 90 - 20 = 70 holds all steps (60); strays 7 and 8 are in no step.
    expect(decide(parallel(), { target: 90 })).toEqual(changedTo([0, 1, 2, 3, 4, 5, 6, 9], [7, 8], 1, defaultNote(2)));
  });

  it('drops a parallel tool call together with all its results', () => {
    // budget 70 - 20 = 50 < 60: [9] = 10, left 40; [5,6] = 20, left 20; [2,3,4] = 30 does not fit, none of it stays.
    expect(decide(parallel(), { target: 70 })).toEqual(changedTo([0, 1, 5, 6, 9], [2, 3, 4, 7, 8], 2, defaultNote(5)));
  });

  it('keeps a parallel tool call together with all its results', () => {
    const messages = [
      system(),
      user('task'),
      assistant(null, 'x'),
      tool('x'),
      assistant(null, 'a', 'b', 'c'),
      tool('a'),
      tool('b'),
      tool('c'),
    ];
    // budget 50 < 60: step [4,5,6,7] = 40 fits, left 10; step [2,3] = 20 does not.
    expect(decide(messages, { target: 70 })).toEqual(changedTo([0, 1, 4, 5, 6, 7], [2, 3], 2, defaultNote(2)));
  });

  it('keeps several results held in one tool message with their call', () => {
    const messages = [system(), user('task'), assistant(null, 'x'), assistant(null, 'a', 'b'), tool('a', 'b')];
    // budget 40 - 20 = 20 < 30: step [3,4] = 20 fits exactly, step [2] does not.
    expect(decide(messages, { target: 40 })).toEqual(changedTo([0, 1, 3, 4], [2], 2, defaultNote(1)));
  });

  it('ends a step at an earlier note and drops the tool result that follows the note', () => {
    const messages = [
      system(),
      user('task'),
      assistant(null, 'x'),
      tool('x'),
      earlierNote(2),
      tool('late'),
      assistant('done'),
    ];
    // steps [2,3] = 20 and [6] = 10 fit budget 60 - 20 = 40; note 4 and orphan 5 are in no step.
    expect(decide(messages, { target: 60 })).toEqual(changedTo([0, 1, 2, 3, 6], [4, 5], 1, defaultNote(2)));
  });

  it('keeps a pruned tool result inside its step', () => {
    const messages = [system(), user('task'), assistant(null, 'x'), pruned(tool('x')), assistant(null, 'y'), tool('y')];
    // budget 50 - 20 = 30 < 40: step [4,5] = 20 fits, left 10; step [2,3] = 20 does not, pruned result included.
    expect(decide(messages, { target: 50 })).toEqual(changedTo([0, 1, 4, 5], [2, 3], 2, defaultNote(2)));
  });
});

describe('rule 5: sizes of groups', () => {
  // Each measured group costs 10 per message plus 5, so measuring two messages together (25) is cheaper than apart (30).
  // [S0, U1, A2, U3, A4, A5]: protected [0,3] = 25, steps together [4,5] = 25, each step 15, turn [1,2] = 25; whole = 65.
  const grouped = (): Message[] => [
    system(),
    user('old'),
    assistant('old'),
    user('task'),
    assistant('a'),
    assistant('b'),
  ];

  it('measures the whole conversation as one group', () => {
    expect(compact(grouped(), createFakeCounter(10, 5), { target: 65 })).toBeNull();
    expect(decide(grouped(), { target: 64 }, createFakeCounter(10, 5)).changed).toBe(true);
  });

  it('measures the protected part as one group and all the task steps as one group', () => {
    // budget 50 - 25 = 25 holds the steps measured together (25), not apart (30), nor with the protected part apart (budget 20).
    expect(decide(grouped(), { target: 50 }, createFakeCounter(10, 5))).toEqual(
      changedTo([0, 3, 4, 5], [1, 2], 1, defaultNote(2)),
    );
  });

  it('measures each step on its own once the steps do not fit together', () => {
    // budget 44 - 25 = 19 < 25: step [5] = 15 fits, left 4; step [4] = 15 does not.
    expect(decide(grouped(), { target: 44 }, createFakeCounter(10, 5))).toEqual(
      changedTo([0, 3, 5], [1, 2, 4], 2, defaultNote(3)),
    );
  });

  it('measures each turn as one group', () => {
    const messages = [system(), tool('orphan'), user('old'), assistant('old'), user('task')];
    // budget 50 - 25 = 25 holds turn [2,3] measured together (25).
    expect(decide(messages, { target: 50 }, createFakeCounter(10, 5))).toEqual(
      changedTo([0, 2, 3, 4], [1], 1, defaultNote(1)),
    );
  });

  it('measures the rendered messages of a group', () => {
    const messages = grouped();
    const counter = createFakeCounter();
    planCompaction(messages, counter, { target: 50 });
    const rendered = messages.map((m) => renderMessage(m));
    expect(counter.calls).toContainEqual([rendered[0], rendered[3]]);
    expect(counter.calls).toContainEqual([rendered[4], rendered[5]]);
  });
});

describe('rule 6: a conversation at or under the target', () => {
  const small = (): Message[] => [system(), user('old'), assistant('old'), user('task'), assistant('a')];

  it('changes nothing when the whole conversation measures exactly the target', () => {
    const plan = planCompaction(small(), createFakeCounter(), { target: 50 });
    expect(plan.unchanged).toBe('fits');
    expect(decide(small(), { target: 50 })).toEqual(unchanged(5));
    expect(compact(small(), createFakeCounter(), { target: 50 })).toBeNull();
  });

  it('compacts when the conversation measures one token over the target', () => {
    // budget 49 - 20 = 29; step 10, left 19; turn [1,2] = 20 does not fit.
    expect(decide(small(), { target: 49 })).toEqual(changedTo([0, 3, 4], [1, 2], 1, defaultNote(2)));
  });
});

describe('rule 7: the budget', () => {
  it('keeps every step and then whole turns newest first while they fit', () => {
    const messages = [
      system(),
      user('t1'),
      user('t2'),
      assistant('t2'),
      user('t3'),
      assistant('t3'),
      user('task'),
      assistant(null, 'x'),
      tool('x'),
    ];
    // budget 70 - 20 = 50; steps 20, left 30; turn [4,5] = 20, left 10; turn [2,3] = 20 does not fit.
    expect(decide(messages, { target: 70 })).toEqual(changedTo([0, 4, 5, 6, 7, 8], [1, 2, 3], 1, defaultNote(3)));
  });

  it('stops at the first turn that does not fit even when an older one would', () => {
    const messages = [
      system(),
      user('small'),
      user('big'),
      assistant('big'),
      assistant('big'),
      user('small'),
      user('task'),
    ];
    // budget 50 - 20 = 30: turn [5] = 10, left 20; turn [2,3,4] = 30 does not fit; turn [1] = 10 would, but is not kept.
    expect(decide(messages, { target: 50 })).toEqual(changedTo([0, 5, 6], [1, 2, 3, 4], 1, defaultNote(4)));
  });

  it('keeps all the steps when they measure exactly the budget', () => {
    const messages = [system(), user('old'), assistant('old'), user('task'), assistant(null, 'x'), tool('x')];
    // budget 40 - 20 = 20 = steps; nothing is left for turn [1,2].
    const plan = planCompaction(messages, createFakeCounter(), { target: 40 });
    expect(plan.heldByMinKeepSteps).toBe(false);
    expect(decide(messages, { target: 40 })).toEqual(changedTo([0, 3, 4, 5], [1, 2], 1, defaultNote(2)));
  });

  it('drops every historical turn when the steps do not fit, even a turn that would', () => {
    const messages = [
      system(),
      user('small old turn'),
      user('task'),
      assistant(null, 'x'),
      tool('x'),
      assistant(null, 'y'),
      tool('y'),
    ];
    // budget 50 - 20 = 30 < 40: step [5,6] = 20, left 10; step [3,4] does not fit; turn [1] = 10 would fit but all turns go.
    expect(decide(messages, { target: 50 })).toEqual(changedTo([0, 2, 5, 6], [1, 3, 4], 2, defaultNote(3)));
  });

  it('stops at the first step that does not fit even when an older one would', () => {
    const messages = [
      system(),
      user('task'),
      assistant('small'),
      assistant(null, 'a', 'b'),
      tool('a'),
      tool('b'),
      assistant('small'),
    ];
    // budget 30 < 50: step [6] = 10, left 20; step [3,4,5] = 30 does not fit; step [2] = 10 would, but is not kept.
    expect(decide(messages, { target: 50 })).toEqual(changedTo([0, 1, 6], [2, 3, 4, 5], 2, defaultNote(4)));
  });

  describe('min_keep_steps', () => {
    // threeSteps at target 40: budget 20 < 60; step [8,9] = 20 fits exactly, step [6,7] does not.
    it('keeps only the steps that fit with min_keep_steps 0', () => {
      expect(decide(threeSteps(), { target: 40, minKeepSteps: 0 })).toEqual(
        changedTo([0, 3, 8, 9], [1, 2, 4, 5, 6, 7], 2, defaultNote(6)),
      );
    });

    it('keeps no step at all with min_keep_steps 0 when none fits', () => {
      // budget 30 - 20 = 10: no step of 20 fits.
      expect(decide(threeSteps(), { target: 30, minKeepSteps: 0 })).toEqual(
        changedTo([0, 3], [1, 2, 4, 5, 6, 7, 8, 9], 2, defaultNote(8)),
      );
    });

    it('keeps the newest step by default when none fits', () => {
      const plan = planCompaction(threeSteps(), createFakeCounter(), { target: 30 });
      expect(plan.heldByMinKeepSteps).toBe(true);
      expect(decide(threeSteps(), { target: 30 })).toEqual(
        changedTo([0, 3, 8, 9], [1, 2, 4, 5, 6, 7], 2, defaultNote(6)),
      );
    });

    it('is not held by min_keep_steps 1 when the newest step fits on its own', () => {
      const plan = planCompaction(threeSteps(), createFakeCounter(), { target: 40, minKeepSteps: 1 });
      expect(plan.heldByMinKeepSteps).toBe(false);
      expect(decide(threeSteps(), { target: 40, minKeepSteps: 1 })).toEqual(
        changedTo([0, 3, 8, 9], [1, 2, 4, 5, 6, 7], 2, defaultNote(6)),
      );
    });

    it('keeps the two newest steps with min_keep_steps 2 although only one fits', () => {
      const plan = planCompaction(threeSteps(), createFakeCounter(), { target: 40, minKeepSteps: 2 });
      expect(plan.heldByMinKeepSteps).toBe(true);
      expect(plan.targetMet).toBe(false);
      expect(decide(threeSteps(), { target: 40, minKeepSteps: 2 })).toEqual(
        changedTo([0, 3, 6, 7, 8, 9], [1, 2, 4, 5], 2, defaultNote(4)),
      );
    });

    it('keeps every step with min_keep_steps 20 and still drops the turns, placing the note after the instructions', () => {
      expect(decide(threeSteps(), { target: 40, minKeepSteps: 20 })).toEqual(
        changedTo([0, 3, 4, 5, 6, 7, 8, 9], [1, 2], 1, defaultNote(2)),
      );
    });

    it('changes nothing with min_keep_steps 20 when the steps are all there is to remove', () => {
      const messages = [system(), user('task'), assistant(null, 'x'), tool('x'), assistant(null, 'y'), tool('y')];
      expect(planCompaction(messages, createFakeCounter(), { target: 10, minKeepSteps: 20 }).unchanged).toBe(
        'nothing-removed',
      );
      expect(compact(messages, createFakeCounter(), { target: 10, minKeepSteps: 20 })).toBeNull();
    });

    it('rejects a negative min_keep_steps', () => {
      expect(() => planCompaction(threeSteps(), createFakeCounter(), { target: 40, minKeepSteps: -1 })).toThrow(
        /min_keep_steps/,
      );
      expect(() => compact(threeSteps(), createFakeCounter(), { target: 1000, minKeepSteps: -1 })).toThrow(RangeError);
    });
  });
});

describe('rule 8: output order', () => {
  it('writes the leading system messages, the note, the kept turns, then the task', () => {
    const input = history();
    const out = compact(input, createFakeCounter(), { target: 80 }) as Message[];
    expect(out).toHaveLength(9);
    expect(out[0]).toBe(input[0]);
    expect(out[1]?.compaction).toBe(SLIDING_WINDOW);
    expect(out.slice(2)).toEqual([2, 3, 4, 6, 7, 8, 9].map((i) => input[i]));
    out.slice(2).forEach((m, k) => expect(m).toBe(input[[2, 3, 4, 6, 7, 8, 9][k] as number]));
  });

  it('writes the task, the note, then the kept steps when steps were removed', () => {
    const input = threeSteps();
    const out = compact(input, createFakeCounter(), { target: 40, minKeepSteps: 2 }) as Message[];
    expect(out.map((m) => (m.compaction === SLIDING_WINDOW ? 'note' : input.indexOf(m)))).toEqual([
      0,
      3,
      'note',
      6,
      7,
      8,
      9,
    ]);
  });
});

describe('rule 9: nothing to remove', () => {
  it('changes nothing when nothing would be removed, even above the target', () => {
    const messages = [system(), user('task'), assistant(null, 'x'), tool('x')];
    const plan = planCompaction(messages, createFakeCounter(), { target: 10 });
    expect(plan.unchanged).toBe('nothing-removed');
    expect(plan.tokensAfter).toBe(40);
    expect(decide(messages, { target: 10 })).toEqual(unchanged(4));
    expect(compact(messages, createFakeCounter(), { target: 10 })).toBeNull();
  });

  it('changes nothing when only an earlier note would be removed and a note is configured', () => {
    const messages = [system(), earlierNote(4), user('task'), assistant('answer')];
    // whole 40 > 30; budget 10 holds the step; only note 1 would go.
    expect(planCompaction(messages, createFakeCounter(), { target: 30 }).unchanged).toBe('only-notes');
    expect(planCompaction(messages, createFakeCounter(), { target: 30, note: 'Cut {num_removed}.' }).unchanged).toBe(
      'only-notes',
    );
    expect(compact(messages, createFakeCounter(), { target: 30 })).toBeNull();
  });

  it('still compacts when the note frees nothing, since something other than a note is removed', () => {
    const messages = [system(), tool('orphan'), user('task'), assistant('answer')];
    // budget 30 - 20 = 10 holds the step; the orphan goes and the note (also 10) takes its place.
    const plan = planCompaction(messages, createFakeCounter(), { target: 30 });
    expect(decide(messages, { target: 30 })).toEqual(changedTo([0, 2, 3], [1], 1, defaultNote(1)));
    expect(plan.tokensAfter).toBe(40);
    expect(plan.targetMet).toBe(false);
    expect(plan.heldByMinKeepSteps).toBe(false);
  });

  it('removes only earlier notes silently when no note is configured', () => {
    const messages = [system(), earlierNote(4), user('task'), assistant('answer')];
    expect(decide(messages, { target: 30, note: '' })).toEqual(changedTo([0, 2, 3], [1], null, null));
    expect(decide(messages, { target: 30, note: null })).toEqual(changedTo([0, 2, 3], [1], null, null));
    expect(compact(messages, createFakeCounter(), { target: 30, note: '' })).toEqual([
      messages[0],
      messages[2],
      messages[3],
    ]);
  });
});

describe('rule 10: the omission note', () => {
  // history() at target 60 removes 5 messages (one of them an earlier note) and keeps no note among the steps.
  it('fills the default template with the number of removed messages', () => {
    expect(decide(history(), { target: 60 }).noteText).toBe(
      '[5 earlier messages were removed from this conversation to free up context and cannot be recovered.]',
    );
    expect(DEFAULT_NOTE_TEMPLATE).toBe(
      '[{num_removed} earlier messages were removed from this conversation to free up context and cannot be recovered.]',
    );
  });

  it('replaces every placeholder of a custom template', () => {
    expect(decide(history(), { target: 60, note: 'Removed {num_removed}; {num_removed} in all.' }).noteText).toBe(
      'Removed 5; 5 in all.',
    );
  });

  it('writes a template without the placeholder as it is', () => {
    expect(decide(history(), { target: 60, note: 'Older messages were removed.' }).noteText).toBe(
      'Older messages were removed.',
    );
  });

  it('leaves stray braces of the template as written', () => {
    const note = '{{num_removed}} {num_removed {num_removed}} {}{x} num_removed}';
    expect(decide(history(), { target: 60, note }).noteText).toBe('{5} {num_removed 5} {}{x} num_removed}');
  });

  it('leaves dollar patterns of the template as written', () => {
    const note = "Gone: $& $1 $$ $` $' $<n> {num_removed}$&";
    expect(decide(history(), { target: 60, note }).noteText).toBe("Gone: $& $1 $$ $` $' $<n> 5$&");
  });

  it('removes silently with an empty template or no template', () => {
    expect(decide(history(), { target: 60, note: '' })).toEqual(
      changedTo([0, 6, 7, 8, 9], [1, 2, 3, 4, 5], null, null),
    );
    expect(decide(history(), { target: 60, note: null })).toEqual(
      changedTo([0, 6, 7, 8, 9], [1, 2, 3, 4, 5], null, null),
    );
    const out = compact(history(), createFakeCounter(), { target: 60, note: '' }) as Message[];
    expect(notesIn(out)).toHaveLength(0);
    expect(out).toHaveLength(5);
  });

  it('puts the note first when there are no leading system messages and no step was removed', () => {
    const messages = [user('old'), assistant('old'), user('task'), assistant('answer')];
    // budget 25 - 10 = 15; step 10, left 5; turn [0,1] = 20 does not fit.
    expect(decide(messages, { target: 25 })).toEqual(changedTo([2, 3], [0, 1], 0, defaultNote(2)));
  });

  it('makes the note a user message marked as a sliding-window compaction', () => {
    const out = compact(history(), createFakeCounter(), { target: 60, note: 'Cut {num_removed}.' }) as Message[];
    expect(out[1]).toEqual({
      role: 'user',
      compaction: SLIDING_WINDOW,
      content: { texts: ['Cut 5.'], toolCalls: [], results: [], images: 0, files: [] },
    });
  });

  // [S0, N1, U2, A3, U4, A5, T6, N7, A8]: notes in history and after the task; steps [5,6] + [8] = 30 fit budget 30 exactly.
  const twoNotes = (): Message[] => [
    system(),
    earlierNote(3),
    user('old'),
    assistant('old'),
    user('task'),
    assistant(null, 'x'),
    tool('x'),
    earlierNote(2),
    assistant('done'),
  ];

  it('folds an earlier note in history and one after the task into the one new note', () => {
    expect(decide(twoNotes(), { target: 50 })).toEqual(changedTo([0, 4, 5, 6, 8], [1, 2, 3, 7], 1, defaultNote(4)));
    const out = compact(twoNotes(), createFakeCounter(), { target: 50 }) as Message[];
    expect(notesIn(out)).toHaveLength(1);
    expect(out).toHaveLength(6);
  });

  it('folds the note of a previous run when a later run removes more', () => {
    const first = compact(twoNotes(), createFakeCounter(), { target: 50 }) as Message[];
    // [S0, N1, U2, A3, T4, A5]: budget 30 - 20 = 10 < 30; step [5] = 10 fits, step [3,4] does not; N1 goes too.
    expect(decide(first, { target: 30 })).toEqual(changedTo([0, 2, 5], [1, 3, 4], 2, defaultNote(3)));
    const second = compact(first, createFakeCounter(), { target: 30 }) as Message[];
    expect(notesIn(second)).toHaveLength(1);
    expect(second.map((m) => (m.compaction === SLIDING_WINDOW ? 'note' : first.indexOf(m)))).toEqual([0, 2, 'note', 5]);
  });

  it('recognises an earlier note by its compaction mark, whatever its text', () => {
    const messages = [
      system(),
      { role: 'user', compaction: SLIDING_WINDOW, content: textContent('free text') } as Message,
      user('task'),
      assistant('a'),
    ];
    expect(planCompaction(messages, createFakeCounter(), { target: 30 }).unchanged).toBe('only-notes');
  });
});

describe('rule 11: the target is a goal', () => {
  it('returns a result above the target without failing when the protected part alone exceeds it', () => {
    const messages = [system(), user('old'), assistant('old'), user('task'), assistant('answer')];
    const plan = planCompaction(messages, createFakeCounter(), { target: 5 });
    expect(decide(messages, { target: 5 })).toEqual(changedTo([0, 3, 4], [1, 2], 1, defaultNote(2)));
    // 3 kept messages and the note.
    expect(plan.tokensAfter).toBe(40);
    expect(plan.targetMet).toBe(false);
    expect(plan.heldByMinKeepSteps).toBe(true);
  });

  it('reports the target met when the result comes in at the target', () => {
    const plan = planCompaction(history(), createFakeCounter(), { target: 60 });
    // 5 kept messages and the note.
    expect(plan.tokensAfter).toBe(60);
    expect(plan.targetMet).toBe(true);
  });

  it('reports the exact size before compaction when asked to measure everything', () => {
    const plan = planCompaction(history(), createFakeCounter(), { target: 60, exhaustive: true });
    expect(plan.tokensBefore).toBe(100);
    expect(plan.tokensBeforeExact).toBe(true);
  });
});

describe('the input', () => {
  it('is never mutated, neither the array nor its messages', () => {
    const conversations = [history(), parallel(), threeSteps()];
    for (const input of conversations) {
      const snapshot = structuredClone(input);
      deepFreeze(input);
      for (const target of [0, 30, 40, 60, 70, 80, 90, 1000]) {
        for (const note of [undefined, null, 'Cut {num_removed}.']) {
          const options = { target, note, minKeepSteps: 2, exhaustive: target === 60 };
          expect(() => planCompaction(input, createFakeCounter(), options)).not.toThrow();
          const out = compact(input, createFakeCounter(), options);
          if (out !== null) expect(out).not.toBe(input);
        }
      }
      expect(input).toEqual(snapshot);
    }
  });

  it('may hold lazy content, which gives the same decision as eager content', () => {
    const eager = history();
    const lazy = eager.map((m) => ({ ...m, content: () => m.content as ReturnType<typeof textContent> }));
    for (const target of [60, 80]) expect(decide(lazy, { target })).toEqual(decide(eager, { target }));
  });
});
