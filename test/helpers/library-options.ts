import type { CompactorOptions } from '../../src/library/index.js';

/** Every option of CompactorOptions, written out here (not read from src/): a new option does not compile without a place here, and then fails without a row above. */
export const EVERY_OPTION = Object.keys({
  format: true,
  target: true,
  contextWindow: true,
  compactAt: true,
  compactTo: true,
  minKeepSteps: true,
  strategy: true,
  minTokens: true,
  placeholder: true,
  note: true,
  createNote: true,
  tokenizer: true,
  charsPerToken: true,
  tokensPerImage: true,
  tokensPerFile: true,
  counter: true,
  system: true,
  tools: true,
  summarize: true,
  summaryTokens: true,
  summaryInstruction: true,
  strict: true,
  minRetention: true,
  assumeUnchanged: true,
} satisfies Record<keyof CompactorOptions, true>);
