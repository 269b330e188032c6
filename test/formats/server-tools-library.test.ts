/**
 * Server tool results through the library and through offloading: counted, removed with the message that holds them,
 * never offloaded (an encrypted result cannot be rewritten).
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { renderMessage } from '../../src/core/render.js';
import { renderForSummary } from '../../src/core/summarize.js';
import type { Message } from '../../src/core/types.js';
import { decodeSource } from '../../src/io/source.js';
import { compactMessages } from '../../src/library/index.js';
import { compactSource } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

const PAGES = 'Result page text. '.repeat(200);

const searching = {
  role: 'assistant',
  content: [
    { type: 'text', text: 'Searching.' },
    { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'release date' } },
    {
      type: 'web_search_tool_result',
      tool_use_id: 'srvtoolu_1',
      content: [{ type: 'web_search_result', url: 'https://a.example/', title: 'A', encrypted_content: PAGES }],
    },
  ],
};
const messages = [
  { role: 'user', content: 'Find the release date.' },
  searching,
  { role: 'assistant', content: [{ type: 'text', text: 'It was 2025-03-01.' }] },
  { role: 'user', content: 'Thanks. Which version?' },
];

describe('Anthropic server tool results in the library', () => {
  it('counts them and removes the turn that holds them, its one message counted once in the note', async () => {
    const result = await compactMessages(messages, { format: 'anthropic', target: 100, tokenizer: 'approx' });
    expect(result.plan.tokensBefore).toBeGreaterThan(PAGES.length / 4);
    expect(result.messages).toEqual([
      {
        role: 'user',
        content: '[3 earlier messages were removed from this conversation to free up context and cannot be recovered.]',
      },
      messages[3],
    ]);
  });
});

describe('Anthropic server tool results and offloading', () => {
  it('never offloads a server result: nothing is stored and the message stays as it was', async () => {
    const store = tempDir();
    const input = [
      messages[0],
      searching,
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'short' }] },
    ];
    const run = await runSwc(
      [
        'compact',
        '-',
        '--tokenizer',
        'approx',
        '-t',
        '100',
        '--strategy',
        'offload',
        '--offload-over',
        '100',
        '--offload-dir',
        store,
      ],
      { cwd: tempDir(), stdin: JSON.stringify({ messages: input }) },
    );
    // Nothing counted as offloaded either: the figures are the file's.
    expect({ status: run.status, stderr: run.stderr }).toEqual({
      status: 0,
      stderr: expect.stringMatching(/^swc: <stdin>: unchanged, [\d,]+ tokens/),
    });
    expect((JSON.parse(run.stdout) as { messages: unknown[] }).messages).toEqual(input);
    expect(readdirSync(store)).toEqual([]);
  });
});

describe('a fetched document among Anthropic server tool results', () => {
  const fetched = (source: Record<string, unknown>): unknown[] => [
    { role: 'user', content: 'Summarise the paper.' },
    {
      role: 'assistant',
      content: [
        { type: 'server_tool_use', id: 'srvtoolu_f', name: 'web_fetch', input: { url: 'https://a.example/p.pdf' } },
        {
          type: 'web_fetch_tool_result',
          tool_use_id: 'srvtoolu_f',
          content: {
            type: 'web_fetch_result',
            url: 'https://a.example/p.pdf',
            content: { type: 'document', source, title: 'Paper', citations: { enabled: true } },
            retrieved_at: '2026-03-02T09:00:00Z',
          },
        },
      ],
    },
  ];

  it('counts a fetched PDF as a file, at its flat cost, not its base64 as text', async () => {
    const data = 'JVBERi0xLjQK'.repeat(2000);
    const pdf = await compactMessages(fetched({ type: 'base64', media_type: 'application/pdf', data }), {
      format: 'anthropic',
      target: 1e6,
      tokenizer: 'approx',
    });
    expect(pdf.plan.tokensBefore).toBeGreaterThanOrEqual(1000);
    expect(pdf.plan.tokensBefore).toBeLessThan(1000 + 200);
  });

  it('counts a fetched page as its text', async () => {
    const text = 'Page text. '.repeat(400);
    const page = await compactMessages(fetched({ type: 'text', media_type: 'text/plain', data: text }), {
      format: 'anthropic',
      target: 1e6,
      tokenizer: 'approx',
    });
    expect(page.plan.tokensBefore).toBeGreaterThan(text.length / 4);
    expect(page.plan.tokensBefore).toBeLessThan(text.length / 4 + 200);
  });
});

describe('encrypted server tool results in a summary prompt', () => {
  it('shows a web search result to the summarizing model without its encrypted content, which no other model reads', async () => {
    const normalized = (
      await compactSource(decodeSource(Buffer.from(JSON.stringify({ messages })), 'm.json'), {
        target: 1e9,
        counter: createApproxCounter(),
        format: 'anthropic',
      })
    ).conversations[0]?.normalized;
    const results = normalized?.messages[2] as Message;
    expect(renderForSummary(results)).toBe(
      '[tool:web_search id=srvtoolu_1] [{"encrypted_content": "<encrypted>", "title": "A", "type": "web_search_result", "url": "https://a.example/"}]',
    );
    // Counting still reads the whole of it.
    expect(renderMessage(results).text).toContain(PAGES);
  });
});
