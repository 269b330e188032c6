/** The model interface the summarize strategy calls through, as the core's summarize decision defines it. */
export type { SummaryReply, SummaryRequest, Summarizer } from '../../core/summarize.js';

/** Waits `ms` milliseconds; a seam so tests of retries record the waits instead of waiting. */
export type Sleep = (ms: number) => Promise<void>;

/** The real wait. */
export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
