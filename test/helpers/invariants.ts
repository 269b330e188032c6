/** Checks the promises every compaction keeps, on OpenAI-chat and Haystack message lists. */

type Msg = Record<string, unknown>;

/** The call ids a message makes and the call ids it answers, in either format. */
export function pairing(message: Msg): { calls: string[]; answers: string[] } {
  const calls: string[] = [];
  const answers: string[] = [];
  if (Array.isArray(message.tool_calls))
    for (const c of message.tool_calls as Msg[]) if (typeof c.id === 'string') calls.push(c.id);
  if (typeof message.tool_call_id === 'string') answers.push(message.tool_call_id);
  if (Array.isArray(message.tool_call_ids))
    for (const id of message.tool_call_ids) if (typeof id === 'string') answers.push(id);
  if (Array.isArray(message.content)) {
    for (const part of message.content as Msg[]) {
      const call = part.tool_call as Msg | undefined;
      if (call && typeof call.id === 'string') calls.push(call.id);
      const result = part.tool_call_result as Msg | undefined;
      const origin = result?.origin as Msg | undefined;
      if (origin && typeof origin.id === 'string') answers.push(origin.id);
    }
  }
  return { calls, answers };
}

/**
 * Asserts that no kept call lost a result it had and no kept result lost its call.
 * @returns a list of problems (empty when the pairing is intact)
 */
export function pairingProblems(input: Msg[], output: Msg[]): string[] {
  const answeredIn = new Set(input.flatMap((m) => pairing(m).answers));
  const calledIn = new Set(input.flatMap((m) => pairing(m).calls));
  const calledOut = new Set(output.flatMap((m) => pairing(m).calls));
  const answeredOut = new Set(output.flatMap((m) => pairing(m).answers));
  const problems: string[] = [];
  for (const id of calledOut)
    if (answeredIn.has(id) && !answeredOut.has(id)) problems.push(`call ${id} lost its result`);
  for (const id of answeredOut) if (calledIn.has(id) && !calledOut.has(id)) problems.push(`result ${id} lost its call`);
  return problems;
}
