/**
 * Every exit code swc ends with, in one place (documented in docs/cli.md):
 * - 0: done; nothing needs compaction (--check); no problem found (inspect)
 * - 1: --check found files to compact; inspect found problems in readable files
 * - 2: a usage error, or an input that could not be read, parsed or written; an output error
 * - 141: the reader of standard output went away before a run that earned 0 was done (128 + SIGPIPE)
 */
export const EXIT = { ok: 0, changesNeeded: 1, problems: 1, error: 2, pipe: 141 } as const;
