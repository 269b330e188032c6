// The library's API for messages held in memory: compactMessages, createCompactor, swcPrepareStep.
export { compactMessages, createCompactor } from './compactor.js';
export { swcPrepareStep } from './prepare-step.js';
export type { CompactedMessages, Compactor, PrepareStepInput } from './types.js';
export type {
  CompactorOptions,
  CreateNote,
  InMemoryStrategy,
  MessageFormat,
  StrategyChain,
  SummarizeCallback,
} from '../settings/library.js';
