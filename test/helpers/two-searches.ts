/**
 * An OpenAI chat file of one task and two search calls, each answered by a 4,000-character result ('x's, then 'y's):
 * the smallest file in which pruning and offloading have a result to take and one to keep.
 */
export const TWO_SEARCHES = JSON.stringify([
  { role: 'user', content: 'task' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'a', type: 'function', function: { name: 'search', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'a', content: 'x'.repeat(4000) },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'b', type: 'function', function: { name: 'search', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'b', content: 'y'.repeat(4000) },
]);
