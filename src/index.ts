/** swc as a library: the compaction core, the format adapters and the token counters. Nothing here prints. */
export { compact, planCompaction, noteTemplate } from './core/compact.js';
export type { CompactOptions, Group, GroupKind, Plan, Unchanged } from './core/compact.js';
export { analyze, type Structure } from './core/groups.js';
export { DEFAULT_NOTE_TEMPLATE, formatNote, isEarlierNoteText } from './core/note.js';
export { renderMessage } from './core/render.js';
export {
  DEFAULT_PLACEHOLDER,
  fillPlaceholder,
  isPlaceholderText,
  planPruning,
  TOOL_RESULT_PRUNING,
} from './core/prune.js';
export type { PrunedMessage, PruneOptions, PrunePlan } from './core/prune.js';
export type { Content, Message, Rendered, Role, TokenCounter, ToolCall, ToolResult } from './core/types.js';
export {
  CHARS_PER_TOKEN,
  counterName,
  createApproxCounter,
  createBpeCounter,
  createCounter,
  parseCounterOptions,
  resolveCounterOptions,
  TOKENIZERS,
  TOKENS_PER_FILE,
  TOKENS_PER_IMAGE,
} from './tokens/index.js';
export type {
  CounterOptions,
  CounterSettings,
  CounterWithSettings,
  RawCounterOptions,
  ReadCost,
  TokenizerName,
} from './tokens/index.js';
export { FORMATS, findFormat } from './formats/registry.js';
export type { FormatAdapter } from './formats/types.js';
export { compactSource, restoreSource, STRATEGIES } from './pipeline/index.js';
export type {
  FileOptions,
  FileResult,
  PrunedItems,
  RestoreOptions,
  RestoreResult,
  StoreFile,
  StoreReader,
  StoreRecord,
  StoreRecordFile,
  StrategyName,
} from './pipeline/index.js';
export { decodeSource } from './io/source.js';
export { InputError, OptionsError, UsageError } from './errors.js';
export { compactMessages, createCompactor, swcPrepareStep } from './library/index.js';
export { identifiersIn, IDENTIFIER_KINDS } from './core/identifiers/index.js';
export type { Identifier, IdentifierKind } from './core/identifiers/index.js';
export { retentionOf } from './outcome/forgotten.js';
export type { Inventory, LocatedIdentifier, Retention } from './outcome/forgotten.js';
export type {
  CompactedMessages,
  Compactor,
  CompactorOptions,
  CreateNote,
  InMemoryStrategy,
  MessageFormat,
  PrepareStepInput,
  StrategyChain,
  SummarizeCallback,
} from './library/index.js';
export { replay, PRICE_MODELS } from './replay/index.js';
export type {
  ReplayCall,
  ReplayCompaction,
  ReplayCost,
  ReplayLost,
  ReplayOptions,
  ReplayPolicy,
  ReplayPrices,
  ReplayRecorded,
  ReplayRemovedUser,
  ReplayRun,
  ReplayRuns,
  ReplayTotal,
} from './replay/index.js';
export type { SummaryFailure, SummaryRequest, SummaryTier } from './core/summarize.js';
export type { PlacedSummary, SummarizedConversation, SummaryRound } from './pipeline/index.js';
