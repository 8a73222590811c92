import { z } from 'zod';
import { patternRefinement } from './pattern-refinement.js';

/**
 * Text PostgreSQL can store as it is: its text type refuses NUL (the driver's error would surface
 * as a 500), and a UTF-16 surrogate without its pair (not encodable as UTF-8) would be silently
 * replaced on the way. So: only characters other than NUL and surrogates, or a surrogate pair.
 *
 * A whole-string pattern, made a patternRefinement: the schemas using it are checked by a compiled
 * validator (packages/schema-check), and the pattern, which Rust's and Go's regex engines refuse
 * (surrogate escapes), stays out of the published JSON Schemas. Linear: a 10-million-character
 * string in ~15 ms. test/hostile-input.spec.ts holds it to a walk over the code units.
 */
export const STORABLE_TEXT = /^(?:[^\0\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/;

export const isStorableText = patternRefinement(STORABLE_TEXT);

export const UNSTORABLE_TEXT_MESSAGE = 'must not contain NUL characters or unpaired surrogates';

/**
 * A string bound for a database column: refused at the NATS boundary (typed `bad_request` naming
 * the field) instead of reaching PostgreSQL. Every id, name and text field a service stores uses it.
 */
export function storedText(min: number, max: number) {
  return z.string().min(min).max(max).refine(isStorableText, UNSTORABLE_TEXT_MESSAGE);
}
