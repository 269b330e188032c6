// The identifiers a text names (paths, URLs, hashes, UUIDs, errors, symbols in inline code), and how much of them a
// summary keeps: what a compaction forgets. The rules: docs/strategy.md, "What a compaction forgets".
export { IDENTIFIER_KINDS, type Identifier, type IdentifierKind } from './kinds.js';
export {
  forEachIdentifier,
  forEachIdentifierText,
  identifierKey,
  identifiersIn,
  identifiersOfMessage,
  identifiersOfText,
} from './extract.js';
export { pathOf } from './values.js';
export { retentionFailure, retentionOf, type Retention } from './retention.js';
