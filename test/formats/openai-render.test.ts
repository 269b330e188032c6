/**
 * OpenAI messages are parsed natively for rendering unless a tool call's arguments are a JSON object, whose numbers
 * must keep their spelling (Haystack renders them as Python's json.dumps writes them).
 */
import { describe, expect, it } from '@jest/globals';
import { renderMessage } from '../../src/core/render.js';
import { openai } from '../../src/formats/openai.js';

function rendered(raws: string[]): string[] {
  const input = {
    file: 'chat.json',
    items: raws.map((r) => JSON.parse(r) as unknown),
    raws,
    container: null,
    fail: (): never => {
      throw new Error('refused');
    },
  };
  return openai.normalize(input, null).messages.map((m) => renderMessage(m).text);
}

describe('rendering OpenAI tool calls', () => {
  it('keeps the spelling of numbers in arguments given as an object', () => {
    const call = (fn: string): string =>
      `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",${fn}}]}`;
    expect(
      rendered([
        call('"function":{"name":"f","arguments":{"x":1.0,"big":12345678901234567890,"s":"a"}}'),
        call('"custom":{"name":"g","input":{"n":-0.0,"m":[1E2]}}'),
        '{"role":"assistant","content":"","function_call":{"name":"h","arguments":{"z":3.10}}}',
      ]),
    ).toEqual([
      '[assistant -> tool_call] f({"big": 12345678901234567890, "s": "a", "x": 1.0})',
      '[assistant -> tool_call] g({"m": [100.0], "n": -0.0})',
      '[assistant] \n[assistant -> tool_call] h({"z": 3.1})',
    ]);
  });

  it('reads arguments given as text, and plain messages, the same either way', () => {
    expect(
      rendered([
        '{"role":"assistant","content":"hi","tool_calls":[{"id":"c2","type":"function","function":{"name":"g","arguments":"{\\"y\\": 2.50}"}}]}',
        '{"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"ok "},{"type":"image_url","image_url":{"url":"x"}}]}',
        '{"role":"user","content":"a \\u00e9 \\ud83d\\ude00","__proto__":{"content":"not this"}}',
      ]),
    ).toEqual(['[assistant] hi\n[assistant -> tool_call] g({"y": 2.5})', '[tool:g] ok <image>', '[user] a é 😀']);
  });
});
