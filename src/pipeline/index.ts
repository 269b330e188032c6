// The one road: bytes (or the library's arrays) -> adapter -> chain of steps -> outcome -> bytes. What the command
// line and the library need of the core and the formats comes through here.
export { noteTemplate } from '../core/compact.js';
export { DEFAULT_PLACEHOLDER } from '../core/prune.js';
export { formatNames } from '../formats/registry.js';
export { decide, planWithThresholds, type Decided } from './chain.js';
export { compactSource, createFileCompactor, decideChain, type FileCompactor, type RunOptions } from './compact.js';
export { chooseFormat, GrowingDetection, normalizeSlot, toolsText, type SlotShape } from './detect.js';
export { createInspector, inspectSource, type FileInspector, type InspectOptions } from './inspect.js';
export { restoreSource, type RestoreOptions, type RestoreResult, type StoreReader } from './restore.js';
export { STRATEGIES, STEPS, type StrategyName } from './steps/index.js';
export type {
  ChainOptions,
  OutputEntry,
  PlacedSummary,
  Step,
  StepReport,
  SummarizedConversation,
  SummarizeSettings,
  SummaryRound,
  WindowThresholds,
} from './steps/step.js';
export { STORE_RECORD_VERSION, storeHash, type StoreRecord, type StoreRecordFile } from './store.js';
export {
  EXACT_COUNT_UP_TO,
  type ConversationResult,
  type FileOptions,
  type FileResult,
  type FileReplies,
  type PrunedItems,
  type StoreFile,
  type SummaryReport,
  type SummaryRunner,
  type SummaryUsage,
} from './types.js';
export { entryOrder, finishedWrite, outputBytes, writeSlot, type FinishedWrite } from './write.js';
