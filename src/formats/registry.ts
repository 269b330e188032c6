import { haystack } from './haystack.js';
import { openai } from './openai.js';
import type { FormatAdapter } from './types.js';

/**
 * Every format, in the order auto-detection tries them (more specific shapes first).
 * Adding a format means adding it here.
 */
export const FORMATS: readonly FormatAdapter[] = [haystack, openai];

/** The names `--format` accepts. */
export function formatNames(): string[] {
  return FORMATS.map((f) => f.name);
}

/** Looks a format up by name. */
export function findFormat(name: string): FormatAdapter | undefined {
  return FORMATS.find((f) => f.name === name);
}
