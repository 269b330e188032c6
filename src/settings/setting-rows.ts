import { DEFAULT_SUMMARY_TOKENS } from '../core/summarize.js';
import { formatNames, STRATEGIES } from '../pipeline/index.js';
import { CHARS_PER_TOKEN, TOKENIZERS, TOKENS_PER_FILE, TOKENS_PER_IMAGE } from '../tokens/index.js';
import {
  DEFAULT_COMPACT_AT,
  DEFAULT_COMPACT_TO,
  DEFAULT_CONCURRENCY,
  DEFAULT_MIN_KEEP_STEPS,
  DEFAULT_MIN_TOKENS,
  DEFAULT_OFFLOAD_OVER,
  DEFAULT_PREVIEW_CHARS,
  DEFAULT_TOKENIZER,
} from './defaults.js';
import { COMPACTING, LIBRARY_ONLY, on, READING, thousands, type OptionRow } from './option-row.js';

/**
 * The options table's settings: what a compaction does and how a transcript is read and counted, which the library
 * and a settings file take too (the table's order is the order their names are listed in messages).
 */
export const SETTING_ROWS: readonly OptionRow[] = [
  {
    name: 'target',
    flags: '-t, --target',
    argument: '<tokens>',
    value: 'tokens',
    min: 1,
    config: true,
    library: true,
    displaces: ['contextWindow', 'compactAt', 'compactTo'],
    on: { compact: { help: 'the token budget to compact to (required, unless --context-window)' } },
  },
  {
    name: 'contextWindow',
    flags: '--context-window',
    argument: '<tokens>',
    value: 'tokens',
    min: 1,
    config: true,
    library: true,
    displaces: ['target'],
    on: {
      compact: { help: 'compact by thresholds of this context window instead of a fixed --target' },
      replay: { help: "the model's context window the hook compacts for (required)" },
    },
  },
  {
    name: 'compactAt',
    flags: '--compact-at',
    argument: '<fraction>',
    value: 'share',
    default: DEFAULT_COMPACT_AT,
    config: true,
    library: true,
    on: {
      compact: {
        help: `with --context-window: compact files whose size reaches this share of it (default: ${DEFAULT_COMPACT_AT})`,
      },
      replay: { help: `compact once the history reaches this share of the window (default: ${DEFAULT_COMPACT_AT})` },
    },
  },
  {
    name: 'compactTo',
    flags: '--compact-to',
    argument: '<fraction>',
    value: 'share',
    default: DEFAULT_COMPACT_TO,
    config: true,
    library: true,
    on: {
      compact: { help: `with --context-window: compact them to this share of it (default: ${DEFAULT_COMPACT_TO})` },
      replay: { help: `compact it to this share of the window (default: ${DEFAULT_COMPACT_TO})` },
    },
  },
  {
    name: 'minKeepSteps',
    flags: '-k, --min-keep-steps',
    argument: '<n>',
    value: 'whole',
    default: DEFAULT_MIN_KEEP_STEPS,
    min: 0,
    config: true,
    library: true,
    on: on(COMPACTING, {
      help: `newest steps of the current task always kept (default: ${DEFAULT_MIN_KEEP_STEPS})`,
    }),
  },
  {
    name: 'strategy',
    flags: '--strategy',
    argument: '<list>',
    value: 'strategies',
    config: true,
    library: true,
    on: {
      compact: {
        help: "window (sliding window), prune (tool-result pruning), offload (results to files), summarize (a model's summary), or a comma-separated chain applied in order, e.g. prune,window (default: window)",
        chain: STRATEGIES,
      },
      replay: {
        help: 'a policy to replay, repeatable: none (never compacts), window, prune, summarize, or a chain such as prune,window (default: window)',
        argument: '<policy>',
        repeat: 'list',
        chain: ['none', ...STRATEGIES.filter((s) => s !== 'offload')],
      },
    },
  },
  {
    name: 'minTokens',
    flags: '--min-tokens',
    argument: '<n>',
    value: 'tokens',
    default: DEFAULT_MIN_TOKENS,
    min: 0,
    strategy: 'prune',
    config: true,
    library: true,
    on: on(COMPACTING, {
      help: `with prune or offload: only replace tool results of more than this many tokens (default: ${DEFAULT_MIN_TOKENS})`,
    }),
  },
  {
    name: 'placeholder',
    flags: '--placeholder',
    argument: '<template>',
    value: 'placeholder',
    strategy: 'prune',
    config: true,
    library: true,
    on: on(COMPACTING, { help: "with prune: the text left in place of a result; {tool_name} becomes the tool's name" }),
  },
  {
    name: 'offloadDir',
    flags: '--offload-dir',
    argument: '<dir>',
    value: 'folder',
    strategy: 'offload',
    config: true,
    on: {
      compact: {
        help: 'with offload: the store directory the offloaded results are written under (one folder per input file)',
      },
      restore: { help: 'the store the results were offloaded to (default: the store the pointers lead to)' },
    },
  },
  {
    name: 'offloadHook',
    flags: '--offload-hook',
    argument: '<chars>',
    value: 'tokens',
    min: 1,
    strategy: 'offload',
    config: true,
    on: {
      compact: {
        help: `with offload: Haystack's ToolResultOffloadHook rule instead of its compactor: offload every older result longer than this many characters, whatever the target (e.g. ${thousands(DEFAULT_OFFLOAD_OVER)})`,
      },
    },
  },
  {
    name: 'offloadOver',
    flags: '--offload-over',
    argument: '<chars>',
    value: 'tokens',
    min: 1,
    strategy: 'offload',
    config: true,
    on: { compact: { help: 'deprecated: the same as --offload-hook' } },
  },
  {
    name: 'previewChars',
    flags: '--preview-chars',
    argument: '<n>',
    value: 'whole',
    default: DEFAULT_PREVIEW_CHARS,
    min: 0,
    strategy: 'offload',
    config: true,
    on: {
      compact: {
        help: `with offload: characters of each offloaded result its pointer shows (default: ${DEFAULT_PREVIEW_CHARS})`,
      },
    },
  },
  {
    name: 'note',
    flags: '--note',
    argument: '<template>',
    negated: { flag: '--no-note', help: 'remove silently, without an omission note' },
    value: 'note',
    config: true,
    library: true,
    on: on(COMPACTING, { help: 'omission note text; {num_removed} becomes the number of removed messages' }),
  },
  { name: 'createNote', value: 'library', config: LIBRARY_ONLY, library: true, on: {} },
  {
    name: 'tokenizer',
    flags: '--tokenizer',
    argument: '<name>',
    value: 'tokenizer',
    default: DEFAULT_TOKENIZER,
    choices: () => TOKENIZERS,
    config: true,
    library: true,
    on: on(READING, { help: 'how tokens are counted', preset: true }),
  },
  {
    name: 'format',
    flags: '-f, --format',
    argument: '<name>',
    value: 'format',
    default: 'auto',
    choices: () => ['auto', ...formatNames()],
    config: true,
    library: true,
    on: {
      ...on(READING, { help: 'transcript format', preset: true }),
      restore: { help: 'transcript format (default: detected, as for compact)' },
    },
  },
  {
    name: 'charsPerToken',
    flags: '--chars-per-token',
    argument: '<x>',
    value: 'rate',
    default: CHARS_PER_TOKEN,
    needs: 'approx',
    config: true,
    library: true,
    on: on(READING, {
      help: `with --tokenizer approx: characters per token, decimals allowed (default: ${CHARS_PER_TOKEN})`,
    }),
  },
  {
    name: 'tokensPerImage',
    flags: '--tokens-per-image',
    argument: '<n>',
    value: 'tokens',
    default: TOKENS_PER_IMAGE,
    min: 0,
    config: true,
    library: true,
    on: on(READING, { help: `tokens an image costs (default: ${thousands(TOKENS_PER_IMAGE)})` }),
  },
  {
    name: 'tokensPerFile',
    flags: '--tokens-per-file',
    argument: '<n>',
    value: 'tokens',
    default: TOKENS_PER_FILE,
    min: 0,
    config: true,
    library: true,
    on: on(READING, { help: `tokens a file attachment costs (default: ${thousands(TOKENS_PER_FILE)})` }),
  },
  { name: 'counter', value: 'library', config: LIBRARY_ONLY, library: true, on: {} },
  { name: 'system', value: 'library', config: LIBRARY_ONLY, library: true, on: {} },
  { name: 'tools', value: 'library', config: LIBRARY_ONLY, library: true, on: {} },
  {
    name: 'conversationKey',
    flags: '--conversation-key',
    argument: '<key>',
    value: 'text',
    config: true,
    displaces: ['conversationPath'],
    on: {
      ...on(READING, {
        help: 'in files of many records, the key each record holds its conversation under (tried before messages, conversations, traj, history)',
      }),
      restore: {
        help: 'in files of many records, the key each record holds its conversation under (default: as the store recorded it)',
      },
    },
  },
  {
    name: 'conversationPath',
    flags: '--conversation-path',
    argument: '<pointer>',
    value: 'pointer',
    config: true,
    displaces: ['conversationKey'],
    on: {
      ...on(READING, {
        help: 'a JSON Pointer to the conversation, in the file or in each record: /input_data/serialized_data/gpt-4o/messages',
      }),
      restore: {
        help: 'a JSON Pointer to the conversation, in the file or in each record (default: as the store recorded it)',
      },
    },
  },
  {
    name: 'summarize',
    value: 'library',
    strategy: 'summarize',
    config: LIBRARY_ONLY,
    library: true,
    on: {},
  },
  {
    name: 'summaryTokens',
    flags: '--summary-tokens',
    argument: '<n>',
    value: 'tokens',
    default: DEFAULT_SUMMARY_TOKENS,
    min: 1,
    strategy: 'summarize',
    config: true,
    library: true,
    on: {
      compact: {
        help: `with summarize: about how long a summary comes out, for planning each round (default: ${thousands(DEFAULT_SUMMARY_TOKENS)})`,
      },
      replay: {
        help: `with summarize: the size a summary is assumed to have without a model (default: ${thousands(DEFAULT_SUMMARY_TOKENS)})`,
      },
    },
  },
  {
    name: 'summaryInstruction',
    flags: '--summary-instruction',
    argument: '<file>',
    value: 'file',
    strategy: 'summarize',
    config: 'give --summary-instruction FILE on the command line (the library takes the text itself)',
    library: true,
    on: {
      compact: {
        help: "with summarize: the summary prompt's instruction, read from a file (default: swc's own, for agent transcripts)",
      },
      replay: { help: "with summarize: the summary prompt's instruction, read from a file" },
    },
  },
  {
    name: 'baseUrl',
    flags: '--base-url',
    argument: '<url>',
    value: 'text',
    strategy: 'summarize',
    config:
      'give --base-url on the command line: a file never chooses where the transcripts and $OPENAI_API_KEY are sent',
    on: {
      compact: {
        help: 'with summarize: an OpenAI-compatible endpoint, POST {url}/chat/completions (default: $OPENAI_BASE_URL); the key comes from $OPENAI_API_KEY',
      },
      replay: {
        help: 'with summarize: an OpenAI-compatible endpoint that writes the summaries (default: $OPENAI_BASE_URL)',
      },
    },
  },
  {
    name: 'model',
    flags: '--model',
    argument: '<name>',
    value: 'text',
    strategy: 'summarize',
    config: true,
    on: on(COMPACTING, { help: 'with summarize: the model the endpoint writes summaries with' }),
  },
  {
    name: 'summarizeCommand',
    flags: '--summarize-command',
    argument: '<cmd>',
    value: 'text',
    strategy: 'summarize',
    config: 'give --summarize-command on the command line: a file never chooses a command to run',
    displaces: ['model'],
    on: {
      compact: {
        help: 'with summarize: a shell command that writes a summary: the prompt on stdin, the instruction in $SWC_SUMMARY_INSTRUCTION, the summary on stdout',
      },
      replay: { help: 'with summarize: a shell command that writes a summary (the prompt on stdin)' },
    },
  },
  {
    name: 'concurrency',
    flags: '--concurrency',
    argument: '<n>',
    value: 'whole',
    default: DEFAULT_CONCURRENCY,
    min: 1,
    strategy: 'summarize',
    config: true,
    on: {
      compact: {
        help: `with summarize: summary calls in flight at once across the files (default: ${DEFAULT_CONCURRENCY})`,
      },
      replay: { help: `with summarize: summary calls in flight at once (default: ${DEFAULT_CONCURRENCY})` },
    },
  },
  {
    name: 'cacheDir',
    flags: '--cache-dir',
    argument: '<dir>',
    value: 'folder',
    strategy: 'summarize',
    config: true,
    displaces: ['cache'],
    on: on(COMPACTING, {
      help: 'with summarize: where summaries are cached (default: $XDG_CACHE_HOME/swc or ~/.cache/swc)',
    }),
  },
  {
    name: 'cache',
    flags: '--no-cache',
    value: 'boolean',
    strategy: 'summarize',
    config: true,
    displaces: ['cacheDir'],
    on: on(COMPACTING, { help: 'with summarize: neither read nor write the summary cache' }),
  },
  {
    name: 'strict',
    flags: '--strict',
    value: 'boolean',
    strategy: 'summarize',
    config: true,
    library: true,
    on: {
      compact: {
        help: 'with summarize: a failed or useless summary fails the file (exit 2, nothing written) instead of keeping the last good result',
      },
    },
  },
  {
    name: 'minRetention',
    flags: '--min-retention',
    argument: '<f>',
    value: 'retention',
    strategy: 'summarize',
    config: true,
    library: true,
    on: {
      compact: {
        help: 'with summarize: a summary that keeps less than this share (0 to 1, or 80%) of the identifiers it replaces counts as a failed call',
      },
      replay: {
        help: 'with summarize: a summary keeping less than this share of the identifiers it replaces fails',
      },
    },
  },
  {
    name: 'exact',
    flags: '--exact',
    value: 'boolean',
    config: true,
    on: {
      compact: {
        help: 'count the tokens before exactly in every file (by default files over 4 MiB show an estimate, marked ≈)',
      },
    },
  },
  {
    name: 'skipUnrecognized',
    flags: '--skip-unrecognized',
    value: 'boolean',
    needs: 'batch',
    config: true,
    on: {
      compact: {
        help: 'count files in which no conversation is found (other JSON) as skipped, not failed; broken transcripts still fail',
      },
      inspect: {
        help: 'leave out files in which no conversation is found (other JSON), counted in the total; broken transcripts still fail',
      },
    },
  },
  { name: 'assumeUnchanged', value: 'library', library: true, on: {} },
];
