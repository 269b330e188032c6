import { offloadStep } from './offload.js';
import { pruneStep } from './prune.js';
import type { Step } from './step.js';
import { summarizeStep } from './summarize.js';
import { windowStep } from './window.js';

/**
 * The strategies a run can chain, by the name `--strategy` and the library's `strategy` give them: the sliding window
 * (`SlidingWindowCompactor`), tool-result pruning (`ToolResultPruningCompactor`), offloading (`ToolResultOffloadHook`
 * with a file-system store) and summarizing (`SummarizationCompactor`). A new strategy is one step file and one line
 * here.
 */
export const STEPS = {
  window: windowStep,
  prune: pruneStep,
  offload: offloadStep,
  summarize: summarizeStep,
} as const satisfies Readonly<Record<string, Step>>;

export type StrategyName = keyof typeof STEPS;

/** The strategies' names, in the order help and errors list them. */
export const STRATEGIES: readonly StrategyName[] = Object.freeze(Object.keys(STEPS) as StrategyName[]);
