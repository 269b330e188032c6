/** How a summary message reads: its strategy marker and its wrapper (kept apart so notes can recognise summaries). */

/** The strategy recorded on every summary (Haystack's `_STRATEGY`), so a later run recognises its own summaries. */
export const SUMMARIZATION = 'summarization';

export const SUMMARY_OPENING = '<conversation_summary>';
export const SUMMARY_CLOSING = '</conversation_summary>';

/** Whether a text is wrapped as a summary: how formats without metadata recognise an earlier one. */
export function isSummaryText(text: string): boolean {
  return (
    text.length >= SUMMARY_OPENING.length + SUMMARY_CLOSING.length &&
    text.startsWith(SUMMARY_OPENING) &&
    text.endsWith(SUMMARY_CLOSING)
  );
}
