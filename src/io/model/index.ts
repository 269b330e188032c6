/** The model access layer: where summaries come from (an endpoint, a command), a cache and a shared concurrency limit. */
export { createEndpointSummarizer, chatCompletionsUrl, type EndpointOptions } from './endpoint.js';
export { createCommandSummarizer, INSTRUCTION_VARIABLE, type CommandOptions } from './command.js';
export {
  withCache,
  defaultCacheDir,
  endpointIdentity,
  commandIdentity,
  type CacheOptions,
  type CacheStats,
  type CachedSummarizer,
} from './cache.js';
export { createLimiter, type Limiter } from './limit.js';
export type { SummaryRequest, SummaryReply, Summarizer } from './types.js';
