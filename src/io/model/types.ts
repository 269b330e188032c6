/**
 * The model interface the summarize strategy calls through. These are the shapes the core's summarize decision
 * defines (src/core/summarize.ts); they are declared here too so the model layer stands on its own, and TypeScript's
 * structural typing makes the two the same types. Once both are in one tree this file can re-export the core's.
 */

/** What one summary call is given: Haystack's prompt, as two texts. */
export interface SummaryRequest {
  readonly system: string;
  readonly user: string;
}

/** What a model answered. usage when the endpoint reported it; cached when it came from the cache. */
export interface SummaryReply {
  readonly text: string;
  readonly usage?: { readonly input: number; readonly output: number };
  readonly cached?: boolean;
}

/** Anything that writes summaries: an endpoint, a command, a library callback, a cache around one of them. Throws SummaryCallError for a failed call. */
export type Summarizer = (request: SummaryRequest) => Promise<SummaryReply>;

/** Waits `ms` milliseconds; a seam so tests of retries record the waits instead of waiting. */
export type Sleep = (ms: number) => Promise<void>;

/** The real wait. */
export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
