/**
 * Every exit code swc ends with, in one place (documented in docs/cli.md):
 * - 0: done; nothing needs compaction (--check); no problem found (inspect)
 * - 1: --check found files to compact; inspect found problems in readable files
 * - 2: a usage error, or an input that could not be read, parsed or written; an output error
 * - 3: a summary call failed (a model call that errored, an empty reply, a summary that did not shrink or kept too
 *   few identifiers); each file was still written with its last good result. 2 wins over 3, and 3 over 1.
 * - 141: the reader of standard output went away before a run that earned 0 was done (128 + SIGPIPE)
 */
export const EXIT = { ok: 0, changesNeeded: 1, problems: 1, error: 2, summaryFailed: 3, pipe: 141 } as const;
