/**
 * Server tool steps for the differential tests: a written Anthropic or Responses case rewritten so that some of its
 * steps run at the provider, the results held by the model's own item. Anthropic: the assistant message's
 * `tool_use` blocks become `mcp_tool_use` and the user message of their `tool_result`s becomes `mcp_tool_result`
 * blocks at the end of the assistant message. Responses: each `function_call` with its `function_call_output` becomes
 * one `mcp_call` with its `output`. MCP results are texts, so they read exactly as the client results they replace:
 * the same conversation, with fewer items.
 */

/** A written case's items and, for each message of the conversation, the item it became (null: beside the list). */
export interface ServerCase {
  readonly items: unknown[];
  readonly itemOf: (number | null)[];
}

type Block = Record<string, unknown> & { type?: unknown };
type Item = Record<string, unknown>;

const isItem = (v: unknown): v is Item => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The case with the items `drop` names removed and every index moved to the item that now holds it. */
function remap(
  items: readonly unknown[],
  itemOf: readonly (number | null)[],
  into: ReadonlyMap<number, number>,
): ServerCase {
  const kept = items.flatMap((item, i) => (into.has(i) ? [] : [{ item, i }]));
  const at = new Map(kept.map(({ i }, k) => [i, k]));
  return {
    items: kept.map(({ item }) => item),
    itemOf: itemOf.map((i) => (i === null ? null : (at.get(into.get(i) ?? i) as number))),
  };
}

/**
 * An Anthropic case with the steps `atServer` picks run at the provider: an assistant message whose calls are all
 * answered by the user message right after it, which holds nothing else.
 * @param written the written case (`writeAs` items and `itemOf`)
 * @param atServer whether the step of this assistant item (its index in the written items) runs at the provider
 */
export function anthropicServerSteps(written: ServerCase, atServer: (item: number) => boolean): ServerCase {
  const items = written.items.map((item) => (isItem(item) ? { ...item } : item));
  const into = new Map<number, number>();
  items.forEach((item, i) => {
    const next = items[i + 1];
    if (!isItem(item) || item.role !== 'assistant' || !Array.isArray(item.content) || !isItem(next)) return;
    const calls = (item.content as Block[]).filter((b) => b.type === 'tool_use');
    const results = Array.isArray(next.content) ? (next.content as Block[]) : [];
    const ids = calls.map((c) => c.id);
    const answered =
      next.role === 'user' &&
      results.length === calls.length &&
      results.every((r) => r.type === 'tool_result' && ids.includes(r.tool_use_id));
    if (calls.length === 0 || !answered || !atServer(i)) return;
    item.content = [
      ...(item.content as Block[]).map((b) =>
        b.type === 'tool_use' ? { ...b, type: 'mcp_tool_use', server_name: 'diff' } : b,
      ),
      ...results.map((r) => ({
        type: 'mcp_tool_result',
        tool_use_id: r.tool_use_id,
        is_error: false,
        content: [{ type: 'text', text: r.content }],
      })),
    ];
    into.set(i + 1, i);
  });
  return remap(items, written.itemOf, into);
}

/**
 * A Responses case with the steps `atServer` picks run at the provider: an assistant run with a message item whose
 * function calls are answered, in order, by the outputs right after it, and that no call item follows (a call after
 * a server call reads as the same turn, as the API writes it).
 * @param written the written case (`writeAs` items and `itemOf`)
 * @param atServer whether the step whose first call is this item runs at the provider
 */
export function responsesServerSteps(written: ServerCase, atServer: (item: number) => boolean): ServerCase {
  const items = written.items.map((item) => (isItem(item) ? { ...item } : item));
  const into = new Map<number, number>();
  const isCall = (i: number): boolean => isItem(items[i]) && (items[i] as Item).type === 'function_call';
  const isMessage = (i: number): boolean =>
    isItem(items[i]) && (items[i] as Item).role === 'assistant' && (items[i] as Item).type !== 'function_call';
  for (let i = 0; i < items.length; i++) {
    if (!isCall(i) || isCall(i - 1) || !isMessage(i - 1)) continue;
    let n = 0;
    while (isCall(i + n)) n++;
    const outputs = items.slice(i + n, i + 2 * n) as Item[];
    const answered = outputs.every(
      (o, k) => isItem(o) && o.type === 'function_call_output' && o.call_id === (items[i + k] as Item).call_id,
    );
    if (outputs.length !== n || !answered || isCall(i + 2 * n) || !atServer(i)) continue;
    for (let k = 0; k < n; k++) {
      const call = items[i + k] as Item;
      items[i + k] = {
        type: 'mcp_call',
        id: call.call_id,
        name: call.name,
        server_label: 'diff',
        arguments: call.arguments,
        output: (outputs[k] as Item).output,
        error: null,
      };
      into.set(i + n + k, i + k);
    }
    i += 2 * n - 1;
  }
  return remap(items, written.itemOf, into);
}
