import { z } from 'zod';

// A NUL, or a UTF-16 surrogate without its pair (not encodable as UTF-8).
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * True when PostgreSQL can store the string as it is: its text type refuses NUL (the driver's
 * error would surface as a 500), and a lone surrogate would be silently replaced on the way.
 */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

export const UNSTORABLE_TEXT_MESSAGE = 'must not contain NUL characters or unpaired surrogates';

/**
 * A string bound for a database column: refused at the NATS boundary (typed `bad_request` naming
 * the field) instead of reaching PostgreSQL. Every id, name and text field a service stores uses it.
 */
export function storedText(min: number, max: number) {
  return z.string().min(min).max(max).refine(isStorableText, UNSTORABLE_TEXT_MESSAGE);
}
