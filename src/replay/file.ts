import { hookThresholds } from '../core/hook.js';
import { readLayout } from '../io/layout.js';
import type { SourceText } from '../io/source.js';
import { slotsWithAdapters } from '../pipeline/detect.js';
import { createCounter, type CounterOptions, type TokenizerName } from '../tokens/index.js';
import { replaySource, type ReplaySettings } from './run.js';
import type { ReplayRun } from './types.js';

/** The settings of a replay of files: how they are read and counted, and what every policy shares. */
export interface FileReplayOptions extends Omit<ReplaySettings, 'counter' | 'trigger' | 'target'> {
  readonly tokenizer: TokenizerName;
  readonly counterOptions?: CounterOptions;
  /** `auto` or a format's name. */
  readonly format?: string;
  readonly conversationKey?: string | undefined;
  readonly conversationPath?: string | undefined;
  /** The policies as given: `none`, or a strategy chain. */
  readonly strategies: readonly string[];
}

/** Replays files with one run's settings; the counter is loaded once and stays inside. */
export interface FileReplayer {
  readonly tokenizer: string;
  /** Every conversation of a file replayed (a file of many records holds one run per record). */
  replay(source: SourceText): Promise<ReplayRun[]>;
}

/**
 * Loads a run's tokenizer once and returns a replayer for its files, which reads slots and formats as every command
 * does.
 */
export async function createFileReplayer(options: FileReplayOptions): Promise<FileReplayer> {
  const counter = await createCounter(options.tokenizer, options.counterOptions);
  const { trigger, target } = hookThresholds(options.contextWindow, options.compactAt, options.compactTo);
  // A BPE counter's count of a group adds up message by message; approx divides the whole once.
  const settings: ReplaySettings = {
    ...options,
    counter,
    trigger,
    target,
    sumsMessages: options.tokenizer !== 'approx',
  };
  return {
    tokenizer: counter.name,
    async replay(source) {
      const layout = readLayout(source, undefined, {
        conversationKey: options.conversationKey,
        conversationPath: options.conversationPath,
      });
      const runs: ReplayRun[] = [];
      const many = layout.slots.length > 1;
      for (const { slot, adapter } of slotsWithAdapters(layout, options.format, source.file, [])) {
        const file = many ? `${source.file} (${slot.where})` : source.file;
        runs.push(
          await replaySource(
            { file, adapter, items: slot.items, container: slot.container },
            options.strategies,
            settings,
          ),
        );
      }
      return runs;
    },
  };
}
