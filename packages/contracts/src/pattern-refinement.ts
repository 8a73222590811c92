/** Refinements made by patternRefinement, with their pattern. */
const refinementPatterns = new WeakMap<object, RegExp>();

/**
 * A string refinement that is exactly "matches `pattern`" (flagless), for
 * `z.string().refine(patternRefinement(p), message)`. Zod runs it as any refinement, and
 * packages/schema-check still compiles a schema using it, as the pattern it is (refinementPattern).
 * Unlike `.regex()`, the pattern stays out of the contract's published JSON Schema (docs/schemas,
 * docs/openapi.json): for a rule other languages' regex engines cannot run (one about UTF-16
 * surrogates, which Rust's and Go's refuse), where it would break a client generated from it.
 */
export function patternRefinement(pattern: RegExp): (value: string) => boolean {
  if (pattern.flags !== '') throw new Error(`patternRefinement takes a pattern without flags, got /${pattern.flags}`);
  const refinement = (value: string) => pattern.test(value);
  refinementPatterns.set(refinement, pattern);
  return refinement;
}

/** The pattern a refinement made by patternRefinement tests; undefined for any other function or value. */
export function refinementPattern(refinement: unknown): RegExp | undefined {
  return typeof refinement === 'function' ? refinementPatterns.get(refinement) : undefined;
}
