import { promises as fs } from 'node:fs';
import path from 'node:path';
import { DEFAULT_SUMMARY_INSTRUCTION } from '../core/summary-instruction.js';
import { escapeForLine, UsageError } from '../errors.js';
import {
  commandIdentity,
  createCommandSummarizer,
  createEndpointSummarizer,
  createLimiter,
  defaultCacheDir,
  endpointIdentity,
  withCache,
} from '../io/model/index.js';
import type { Summarizer } from '../core/summarize.js';
import type { SummarySource } from '../summarize-run.js';
import type { CliIo } from './io.js';
import type { CompactSettings } from './settings.js';

/**
 * Where a run's summaries come from: a command or an OpenAI-compatible endpoint, behind the cache (hits take no
 * slot) and one limiter shared by every file of the run (--concurrency). A run that only looks (--dry-run, --check)
 * gets no summarizer at all: its rounds are simulated and nothing is called.
 * @returns null when summarize is not in the chain
 * @throws UsageError for a missing model source or an unreadable instruction file
 */
export async function summarySourceFor(
  settings: CompactSettings,
  io: CliIo,
  seam?: Summarizer,
): Promise<SummarySource | null> {
  const s = settings.summarize;
  if (s === null) return null;
  const instruction =
    s.instructionFile === undefined ? DEFAULT_SUMMARY_INSTRUCTION : await readInstruction(s.instructionFile, io);
  const base = {
    instruction,
    summaryTokens: s.summaryTokens,
    strict: s.strict,
    ...(s.minRetention === undefined ? {} : { minRetention: s.minRetention }),
  };
  if (settings.dryRun || settings.check) return { ...base, summarizer: null };
  const baseUrl = s.baseUrl ?? nonEmpty(io.env.OPENAI_BASE_URL);
  let summarizer: Summarizer;
  let identity: string;
  if (seam !== undefined) {
    summarizer = seam;
    identity = 'test-seam';
  } else if (s.command !== undefined) {
    summarizer = createCommandSummarizer({ command: s.command, env: io.env });
    identity = commandIdentity(s.command);
  } else if (baseUrl !== undefined) {
    if (s.model === undefined || s.model === '')
      throw new UsageError(
        '--strategy summarize with an endpoint needs --model <name> (the model that writes the summaries)',
      );
    const apiKey = nonEmpty(io.env.OPENAI_API_KEY);
    summarizer = createEndpointSummarizer({ baseUrl, model: s.model, ...(apiKey !== undefined ? { apiKey } : {}) });
    identity = endpointIdentity(baseUrl, s.model);
  } else if (s.model !== undefined && s.model !== '') {
    // The model is named; what is missing is where it is served.
    throw new UsageError(
      `--model ${escapeForLine(s.model)} needs an endpoint: --base-url <url> (or OPENAI_BASE_URL), the OpenAI-compatible server that serves it`,
    );
  } else {
    throw new UsageError(
      '--strategy summarize needs a model: --base-url <url> --model <name> (or OPENAI_BASE_URL), or --summarize-command <cmd>; --dry-run and --check preview the rounds without one',
    );
  }
  const limited = createLimiter(s.concurrency)(summarizer);
  const cached = s.cache
    ? withCache(limited, {
        dir: s.cacheDir !== undefined ? path.resolve(io.cwd, s.cacheDir) : defaultCacheDir(io.env),
        model: identity,
      })
    : limited;
  return { ...base, summarizer: cached };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

async function readInstruction(file: string, io: CliIo): Promise<string> {
  let text: string;
  try {
    text = await fs.readFile(path.resolve(io.cwd, file), 'utf8');
  } catch (error) {
    throw new UsageError(
      `--summary-instruction ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  if (text.trim() === '')
    throw new UsageError(`--summary-instruction ${file} is empty: the model would get no instruction`);
  return text;
}
