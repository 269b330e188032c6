/**
 * JSON Pointers (RFC 6901) as `--conversation-path` takes them: `/input_data/serialized_data/gpt-4o/messages`, each
 * reference token after a `/`, with `~1` standing for `/` and `~0` for `~`. The empty pointer is the whole value.
 */

/** Thrown for a pointer that is not RFC 6901 syntax. */
export class PointerSyntaxError extends Error {}

/**
 * The reference tokens of a pointer, unescaped.
 * @throws PointerSyntaxError when it does not start with `/` (and is not empty), or has a `~` not followed by 0 or 1
 */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/'))
    throw new PointerSyntaxError(
      `a JSON Pointer starts with "/" (as in /input_data/messages), got ${JSON.stringify(pointer)}`,
    );
  return pointer
    .slice(1)
    .split('/')
    .map((token) => {
      if (/~(?![01])/.test(token))
        throw new PointerSyntaxError(
          `"~" in a JSON Pointer must be followed by 0 (for "~") or 1 (for "/"), got ${JSON.stringify(pointer)}`,
        );
      // ~1 first: "~01" is "~1", not "/".
      return token.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

/** The pointer of the first `count` tokens, escaped again (for messages). */
export function pointerOf(tokens: readonly string[], count = tokens.length): string {
  return tokens
    .slice(0, count)
    .map((t) => `/${t.replace(/~/g, '~0').replace(/\//g, '~1')}`)
    .join('');
}

/** Whether a token can index a list: a decimal number without leading zeros (`-`, the end, names nothing there). */
export function isIndexToken(token: string): boolean {
  return /^(0|[1-9][0-9]*)$/.test(token);
}
