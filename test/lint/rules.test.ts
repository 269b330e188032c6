/**
 * Whose rules judge each format, and which rules each provider rejects: the code against the tables of
 * docs/inspect-rules.md, which give each entry its source, so neither changes without the other.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FORMATS } from '../../src/formats/registry.js';
import { providerOf, PROVIDER_NAMES, RULES, severityOf, WIRE_PROVIDERS, type Provider } from '../../src/lint/rules.js';
import { ROOT } from '../helpers/cli.js';

const doc = readFileSync(path.join(ROOT, 'docs/inspect-rules.md'), 'utf8');

/** The rows of the Markdown table that follows a heading, as cells without their backticks. */
function tableAfter(heading: string): string[][] {
  const start = doc.indexOf(`\n${heading}\n`);
  expect(start).toBeGreaterThanOrEqual(0);
  const lines = doc.slice(start).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** The names in one cell: `a`, `b` → ['a', 'b']. */
const namesIn = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);

describe('the provider of each format', () => {
  const judged = new Map<string, string>();
  for (const [formats, by] of tableAfter('## Which provider judges each format'))
    for (const f of namesIn(formats as string)) judged.set(f, by as string);

  it('is documented for every format, as the code has it', () => {
    expect([...judged.keys()].sort()).toEqual(FORMATS.map((f) => f.name).sort());
    for (const f of FORMATS)
      expect(judged.get(f.name)).toMatch(new RegExp(`^${PROVIDER_NAMES[providerOf(f.name)]}\\b`, 'i'));
  });

  it('sends the frameworks and data sets to no provider in particular, and Claude Code sessions to Anthropic', () => {
    expect(['haystack', 'langchain', 'ai-sdk', 'sharegpt'].map(providerOf)).toEqual(['any', 'any', 'any', 'any']);
    expect(providerOf('claude-code')).toBe('anthropic');
    expect(providerOf('a format added later')).toBe('any');
  });
});

describe('the rules each provider rejects', () => {
  const columns: Provider[] = [...WIRE_PROVIDERS, 'any'];
  const rows = tableAfter('## The rules');

  it('are the documented table, every rule in it once', () => {
    expect(rows.map((r) => namesIn(r[0] as string)[0])).toEqual(RULES);
    for (const row of rows) {
      const rule = namesIn(row[0] as string)[0] as (typeof RULES)[number];
      expect({ rule, severities: row.slice(3) }).toEqual({ rule, severities: columns.map((p) => severityOf(p, rule)) });
    }
  });

  it('make a rule an error for a format of no provider only where every provider rejects it', () => {
    for (const rule of RULES) {
      const everywhere = WIRE_PROVIDERS.every((p) => severityOf(p, rule) === 'error');
      expect(severityOf('any', rule)).toBe(everywhere ? 'error' : 'warning');
    }
  });

  it('keep what the real runs show: OpenAI and Anthropic accept a call id used again in a later message, not twice in one; every provider needs each result', () => {
    expect(severityOf('openai-chat', 'reused-id')).toBe('warning');
    expect(severityOf('anthropic', 'reused-id')).toBe('warning');
    expect(severityOf('openai-chat', 'shared-id')).toBe('error');
    expect(severityOf('anthropic', 'shared-id')).toBe('error');
    for (const p of columns) {
      expect(severityOf(p, 'missing-result')).toBe('error');
      expect(severityOf(p, 'orphan-result')).toBe('error');
    }
  });
});
