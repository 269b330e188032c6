/**
 * Loading what a command needs when it needs it. A plain `swc compact FILE -o OUT` loads only its own road; the
 * modules of other commands and options (inspect, restore, summaries, offloading, plans) load at their point of use,
 * through `loadLazily`. No imports here: main.ts reads this before anything else has loaded.
 */

/** A module could not load for want of resources: `swc: cannot start: …`, one line, exit 2. */
export class CannotStartError extends Error {
  constructor(why: string) {
    super(`cannot start: ${why}`);
    this.name = 'CannotStartError';
  }
}

/** What running out of a resource is called, by system error code. */
const SHORTAGES: ReadonlyMap<string, string> = new Map([
  ['EMFILE', 'too many open files (raise the limit with ulimit -n)'],
  ['ENFILE', 'too many open files (raise the limit with ulimit -n)'],
  ['ENOMEM', 'out of memory'],
]);

/** The system error code of a failure, if it has one. */
function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Why a module could not load, in the words `swc: cannot start:` uses.
 * @returns undefined for an error without a system error code (a bug, which keeps its stack)
 */
export function whyCannotStart(error: unknown): string | undefined {
  const code = codeOf(error);
  if (code === undefined) return undefined;
  return SHORTAGES.get(code) ?? (error as Error).message;
}

/**
 * What a failure that reaches the top of a run says when it came from running out of open files or memory while
 * loading what the run needs (a module, an encoding): as start-up says it, one line.
 * @returns null for any other failure
 */
export function cannotStart(error: unknown): CannotStartError | null {
  if (error instanceof CannotStartError) return error;
  const shortage = SHORTAGES.get(codeOf(error) ?? '');
  return shortage === undefined ? null : new CannotStartError(shortage);
}

/**
 * Loads a module at its point of use. A load that fails under a low open-file or memory limit says so as a start-up
 * failure does, whenever it happens.
 * @param load `() => import('./module.js')`
 * @returns the module
 * @throws CannotStartError when the module could not load for want of resources
 */
export async function loadLazily<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const why = whyCannotStart(error);
    if (why === undefined) throw error;
    throw new CannotStartError(why);
  }
}
