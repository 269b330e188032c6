/** How an offloaded result's pointer begins (`ToolResultOffloadHook._pointer`): its own module, so pruning can tell one. */
export const POINTER_START = "Tool result offloaded to '";

/** Whether a result's text is a pointer an offloading wrote. */
export function isPointerText(text: string): boolean {
  return text.startsWith(POINTER_START);
}
