/**
 * How the formats give a summary prompt its details: Haystack's `TestAttachmentPlaceholder` cases
 * (test_summarization.py) through the Haystack adapter, tool call ids, OpenAI's media types from data URLs, and a
 * summary message written as each format writes one.
 */
import { describe, expect, it } from '@jest/globals';
import { renderForSummary } from '../../src/core/summarize.js';
import type { FormatAdapter } from '../../src/formats/types.js';
import { haystack } from '../../src/formats/haystack.js';
import { openai } from '../../src/formats/openai.js';
import { makeSummaryItem } from '../../src/formats/types.js';

function prompted(adapter: FormatAdapter, items: unknown[]): string[] {
  const raws = items.map((i) => JSON.stringify(i));
  const input = {
    file: 'chat.json',
    items,
    raws,
    container: null,
    fail: (): never => {
      throw new Error('refused');
    },
  };
  return adapter.normalize(input, null).messages.map(renderForSummary);
}

const image = (meta: Record<string, unknown>): unknown => ({
  image: { base64_image: 'Zm9v', mime_type: 'image/png', detail: null, meta, validation: true },
});
const file = (filename: string | null, extra: Record<string, unknown>): unknown => ({
  file: { base64_data: 'Zm9v', mime_type: 'application/pdf', filename, extra },
});
const userWith = (part: unknown): unknown => ({ role: 'user', meta: {}, name: null, content: [part] });

describe('attachment placeholders in Haystack files (TestAttachmentPlaceholder)', () => {
  it.each([
    ['image', image({}), '<image: image/png>'],
    ['image named by meta', image({ file_path: '/tmp/shot.png' }), '<image: image/png, file_path=/tmp/shot.png>'],
    ['file', file('q3.pdf', {}), '<file: q3.pdf, application/pdf>'],
    ['file unnamed with extra', file(null, { page: 4 }), '<file: unnamed, application/pdf, page=4>'],
    [
      'nested metadata left out',
      image({
        boxes: [
          [1, 2],
          [3, 4],
        ],
      }),
      '<image: image/png>',
    ],
    [
      'metadata sorted, as Python writes its values',
      image({ z: true, a: 1.5, m: 'x' }),
      '<image: image/png, a=1.5, m=x, z=True>',
    ],
  ])('names the attachment: %s', (_, part, expected) => {
    expect(prompted(haystack, [userWith(part)])).toEqual([`[user] ${expected}`]);
  });

  it('describes the attachments inside a tool result, and names the call it answers', () => {
    const items = [
      {
        role: 'assistant',
        meta: {},
        name: null,
        content: [{ tool_call: { tool_name: 'browse', arguments: { url: 'https://example.com' }, id: 'c1' } }],
      },
      {
        role: 'tool',
        meta: {},
        name: null,
        content: [
          {
            tool_call_result: {
              result: [{ text: 'captured ' }, image({ file_path: '/tmp/shot.png' })],
              origin: { tool_name: 'browse', arguments: {}, id: 'c1' },
              error: false,
            },
          },
        ],
      },
    ];
    expect(prompted(haystack, items)).toEqual([
      '[assistant -> tool_call id=c1] browse({"url": "https://example.com"})',
      '[tool:browse id=c1] captured <image: image/png, file_path=/tmp/shot.png>',
    ]);
  });
});

describe('summary prompts of OpenAI messages', () => {
  it('names tool call ids and the media types data URLs give', () => {
    const items = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,Zm9v' } },
          { type: 'image_url', image_url: { url: 'https://x/y.png' } },
          { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,Zm9v' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"q": "x"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'found' },
    ];
    expect(prompted(openai, items)).toEqual([
      '[user] look\n[user] <image: image/jpeg>\n[user] <image: unknown type>\n[user] <file: a.pdf, application/pdf>',
      '[assistant -> tool_call id=call_1] search({"q": "x"})',
      '[tool:search id=call_1] found',
    ]);
  });
});

describe('summary messages', () => {
  it('are marked in Haystack files with the strategy and the number of messages replaced', () => {
    expect(
      makeSummaryItem(haystack, {
        text: '<conversation_summary>\nx\n</conversation_summary>',
        summarized: 3,
        items: [],
      }),
    ).toEqual({
      role: 'user',
      meta: { context_compaction: { strategy: 'summarization', summarized_messages: 3 } },
      name: null,
      content: [{ text: '<conversation_summary>\nx\n</conversation_summary>' }],
    });
  });

  it('are a user text message elsewhere, recognised again by the wrapper', () => {
    const text = '<conversation_summary>\nx\n</conversation_summary>';
    const item = makeSummaryItem(openai, { text, summarized: 3, items: [] });
    expect(item).toEqual({ role: 'user', content: text });
    const raws = [JSON.stringify(item)];
    const [message] = openai.normalize(
      {
        file: 'f',
        items: [item],
        raws,
        container: null,
        fail: (): never => {
          throw new Error('refused');
        },
      },
      null,
    ).messages;
    expect(message?.compaction).toBe('summarization');
  });
});
