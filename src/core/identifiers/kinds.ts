/** What the identifiers of a text are: their kinds and values. */

/** The kinds of identifiers, in the order outputs list them. */
export const IDENTIFIER_KINDS = ['path', 'url', 'hash', 'uuid', 'error', 'symbol'] as const;
export type IdentifierKind = (typeof IDENTIFIER_KINDS)[number];

/** One identifier: its kind and its normalised value (two mentions of one thing have the same value). */
export interface Identifier {
  readonly kind: IdentifierKind;
  readonly value: string;
}
