import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compiledCheck, identityReason } from '../src/compiled-check.js';
import { billingCatalog, replyEnvelope, sandboxCatalog, searchCatalog } from '@drael/contracts';

// The compiled check may only ever be as strict as zod or stricter (a value it refuses goes to zod,
// which answers): these tests send both the same values, valid, broken and hostile, and hold every
// answer to zod's own.

/** A schema with every construct the compiled path accepts. */
const Everything = z.object({
  id: z.string().min(1).max(8),
  code: z.string().regex(/^[a-z]{2}-\d+$/),
  // Without the u flag "." is one UTF-16 unit, as zod runs it: 😀 does not match.
  one: z.string().regex(/^.$/).optional(),
  exact: z.string().length(2).optional(),
  n: z.number().min(0).max(10),
  gt: z.number().gt(0).lt(1).optional(),
  count: z.int().nonnegative(),
  flag: z.boolean(),
  nothing: z.null(),
  maybe: z.string().nullable(),
  kind: z.enum(['a', 'b']),
  lit: z.literal('x'),
  tags: z.array(z.string()).min(1).max(3),
  pair: z.tuple([z.string(), z.number()]).rest(z.unknown()),
  meta: z.record(z.string(), z.unknown()),
  any: z.unknown(),
  either: z.union([z.object({ t: z.literal(1), a: z.string() }).strict(), z.object({ t: z.literal(2), b: z.number() })]),
  tagged: z.discriminatedUnion('ok', [z.object({ ok: z.literal(true), v: z.number() }), z.object({ ok: z.literal(false), why: z.string() })]),
  loose: z.looseObject({ keep: z.string() }),
});

const valid = {
  id: 'abc',
  code: 'ab-12',
  n: 3.5,
  count: 4,
  flag: true,
  nothing: null,
  maybe: null,
  kind: 'a',
  lit: 'x',
  tags: ['t'],
  pair: ['p', 1, { extra: true }],
  meta: { a: 1, b: [2] },
  any: [1, 'two'],
  either: { t: 2, b: 3 },
  tagged: { ok: false, why: 'no' },
  loose: { keep: 'k', other: { nested: 1 } },
};

/** Broken and hostile variants of `valid`, each one change away from it. */
const variants: [string, unknown][] = [
  ['valid', valid],
  ['extra key on a stripping object', { ...valid, extra: 1 }],
  ['extra key on a strict object', { ...valid, either: { t: 1, a: 'x', extra: 1 } }],
  ['missing key', (({ id: _id, ...rest }) => rest)(valid)],
  ['empty string under min', { ...valid, id: '' }],
  ['string over max', { ...valid, id: 'abcdefghi' }],
  // zod 4 counts a string's length in code points, as JSON Schema does: 😀 is one, in two UTF-16 units.
  ['astral characters at the max in code points', { ...valid, id: '😀'.repeat(8) }],
  ['astral characters over the max in code points', { ...valid, id: '😀'.repeat(9) }],
  ['length(2) with one astral character', { ...valid, exact: '😀' }],
  ['length(2) with two astral characters', { ...valid, exact: '😀😀' }],
  ['length(2) with a lone surrogate and a letter', { ...valid, exact: '\ud83da' }],
  ['min(1) with a lone surrogate', { ...valid, id: '\udc00' }],
  ['pattern miss', { ...valid, code: 'AB-12' }],
  ['pattern with a line break', { ...valid, code: 'ab-12\n' }],
  ['pattern "." against an astral character', { ...valid, one: '😀' }],
  ['pattern "." against one letter', { ...valid, one: 'a' }],
  ['number below min', { ...valid, n: -1 }],
  ['number above max', { ...valid, n: 10.5 }],
  ['gt bound itself', { ...valid, gt: 0 }],
  ['lt bound itself', { ...valid, gt: 1 }],
  ['integer with a fraction', { ...valid, count: 1.5 }],
  ['integer beyond the safe range', { ...valid, count: 2 ** 60 }],
  ['string for a number', { ...valid, n: '3' }],
  ['number for a string', { ...valid, id: 3 }],
  ['null where not nullable', { ...valid, id: null }],
  ['wrong enum value', { ...valid, kind: 'c' }],
  ['wrong literal', { ...valid, lit: 'y' }],
  ['empty array under min', { ...valid, tags: [] }],
  ['array over max', { ...valid, tags: ['a', 'b', 'c', 'd'] }],
  ['wrong array element', { ...valid, tags: ['a', 1] }],
  ['object for an array', { ...valid, tags: { 0: 'a', length: 1 } }],
  ['short tuple', { ...valid, pair: ['p'] }],
  ['wrong tuple item', { ...valid, pair: [1, 1] }],
  ['array for a record', { ...valid, meta: [1] }],
  ['union matching no option', { ...valid, either: { t: 3 } }],
  ['union option mixed up', { ...valid, either: { t: 1, b: 3 } }],
  ['discriminator missing', { ...valid, tagged: { v: 1 } }],
  ['loose object missing its key', { ...valid, loose: { other: 1 } }],
  ['a __proto__ key', JSON.parse('{"__proto__": {"polluted": true}, "id": "x"}')],
  ['null', null],
  ['an array', [valid]],
  ['a string', 'valid'],
];

describe('compiledCheck', () => {
  it('compiles a schema made of constructs JSON Schema expresses exactly', () => {
    expect(identityReason(Everything)).toBeUndefined();
    expect(compiledCheck(Everything).compiled).toBe(true);
  });

  it.each(variants)('answers as zod does: %s', (_name, value) => {
    const ours = compiledCheck(Everything).safeParse(value);
    const zods = Everything.safeParse(value);
    expect(ours.success).toBe(zods.success);
    if (ours.success && zods.success) expect(ours.data).toEqual(zods.data);
    if (!ours.success && !zods.success) expect(ours.error.issues).toEqual(zods.error.issues);
  });

  it('returns a valid value as it is, and what zod makes of one it refuses (an extra key stripped)', () => {
    const check = compiledCheck(Everything);
    const ok = check.safeParse(valid);
    expect(ok.success && ok.data).toBe(valid);
    const stripped = check.safeParse({ ...valid, extra: 1 });
    expect(stripped.success && 'extra' in stripped.data).toBe(false);
  });

  // Each of these would be looser (or change the value) if compiled from its JSON Schema: zod alone checks it.
  const zodOnly: [string, z.ZodType, unknown][] = [
    ['a refinement', z.object({ n: z.number().refine((n) => n % 2 === 0) }), { n: 3 }],
    ['a transform', z.object({ s: z.string().transform((s) => s.toUpperCase()) }), { s: 'a' }],
    ['an overwrite other than trim', z.object({ s: z.string().toLowerCase() }), { s: 'A' }],
    ['a default under optional', z.object({ s: z.string().default('d').optional() }), {}],
    ['a default that is not a field', z.array(z.string().default('d')), ['x']],
    ['a regex with flags', z.object({ s: z.string().regex(/^a$/i) }), { s: 'A' }],
    ['a named format', z.object({ e: z.email() }), { e: 'not an email' }],
    ['multipleOf', z.object({ n: z.number().multipleOf(0.1) }), { n: 0.3 }],
    ['a 32-bit integer', z.object({ n: z.int32() }), { n: 2 ** 40 }],
    ['readonly (frozen)', z.object({ a: z.string() }).readonly(), { a: 'x' }],
    ['an enum-keyed record', z.record(z.enum(['a', 'b']), z.number()), { a: 1 }],
    ['a pipe', z.object({ n: z.string().pipe(z.coerce.number()) }), { n: '1' }],
    [
      'recursion',
      (() => {
        const Node: z.ZodType = z.lazy(() => z.object({ next: Node.nullable() }));
        return Node;
      })(),
      { next: { next: null } },
    ],
    ['a catch', z.object({ n: z.number().catch(0) }), { n: 'x' }],
    [
      'recursion through a getter',
      (() => {
        const Tree = z.object({
          name: z.string(),
          get children(): z.ZodArray<typeof Tree> {
            return z.array(Tree);
          },
        });
        return Tree;
      })(),
      { name: 'a', children: [{ name: 'b', children: [] }] },
    ],
  ];

  it('compiles a schema that uses one sub-schema in two places (reuse is not recursion)', () => {
    const Point = z.object({ x: z.number(), y: z.number() });
    const Line = z.object({ from: Point, to: Point, via: z.array(Point).max(4) });
    expect(identityReason(Line)).toBeUndefined();
    const check = compiledCheck(Line);
    expect(check.compiled).toBe(true);
    const line = { from: { x: 0, y: 0 }, to: { x: 1, y: 1 }, via: [] };
    expect(check.safeParse(line)).toEqual({ success: true, data: line });
    expect(check.safeParse({ ...line, to: { x: 1 } }).success).toBe(false);
  });

  it("compiles a field's own default: a value with the key is checked as it is, one without goes to zod", () => {
    const Body = z.object({ q: z.string().trim().min(1), n: z.int().min(1).max(20).default(10), opts: z.object({ deep: z.boolean().default(false) }).default({ deep: false }) });
    expect(identityReason(Body)).toBeUndefined();
    const check = compiledCheck(Body);
    expect(check.compiled).toBe(true);
    const whole = { q: 'a', n: 3, opts: { deep: true } };
    const asIs = check.safeParse(whole);
    expect(asIs.success && asIs.data).toBe(whole);
    for (const value of [
      { q: 'a' },
      { q: 'a', n: 3 },
      { q: 'a', opts: {} },
      { q: ' a ', n: 2 },
      { q: 'a', n: 0 },
      { q: 'a', n: null },
      { q: 'a', n: '3' },
      { q: 'a', n: 3, extra: 1 },
    ]) {
      const ours = check.safeParse(value);
      const zods = Body.safeParse(value);
      expect(ours.success).toBe(zods.success);
      if (ours.success && zods.success) expect(ours.data).toEqual(zods.data);
      if (!ours.success && !zods.success) expect(ours.error.issues).toEqual(zods.error.issues);
    }
    expect(check.safeParse({ q: 'a' })).toEqual({ success: true, data: { q: 'a', n: 10, opts: { deep: false } } });
  });

  it.each(zodOnly)("leaves a schema with %s to zod, with zod's answer", (_name, schema, value) => {
    expect(identityReason(schema)).toBeDefined();
    const check = compiledCheck(schema);
    expect(check.compiled).toBe(false);
    const ours = check.safeParse(value);
    const zods = schema.safeParse(value);
    expect(ours.success).toBe(zods.success);
    if (ours.success && zods.success) expect(ours.data).toEqual(zods.data);
  });

  it("holds random mutations of a valid value to zod's answer", () => {
    const check = compiledCheck(Everything);
    const odd = [undefined, null, 0, -1, 1.5, 2 ** 53, '', 'x', '😀'.repeat(5), true, [], [1], {}, { a: 1 }];
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const mutate = (v: unknown, depth: number): unknown => {
      if (depth > 3 || v === null || typeof v !== 'object' || random(4) === 0) return random(2) === 0 ? odd[random(odd.length)] : v;
      const copy: Record<string, unknown> = Array.isArray(v) ? ([...v] as unknown as Record<string, unknown>) : { ...(v as Record<string, unknown>) };
      const keys = Object.keys(copy);
      const key = random(5) === 0 ? `k${random(3)}` : keys[random(keys.length)];
      if (key === undefined) return copy;
      if (random(6) === 0) delete copy[key];
      else copy[key] = mutate(copy[key], depth + 1);
      return copy;
    };
    let refused = 0;
    let accepted = 0;
    for (let i = 0; i < 3000; i++) {
      const value = mutate(structuredClone(valid), 0);
      const ours = check.safeParse(value);
      const zods = Everything.safeParse(value);
      expect(ours.success).toBe(zods.success);
      if (ours.success && zods.success) expect(ours.data).toEqual(zods.data);
      if (zods.success) accepted++;
      else refused++;
    }
    // The mutations reach both answers (a test that only ever saw valid values would prove nothing).
    expect(refused).toBeGreaterThan(500);
    expect(accepted).toBeGreaterThan(10);
  });

  it('compiles the replies on the hot paths: a search, a run, a file, a key, a hold', () => {
    for (const entry of [searchCatalog.query, sandboxCatalog.run, sandboxCatalog.filesRead, billingCatalog.verifyKey, billingCatalog.hold, billingCatalog.settle]) {
      expect(compiledCheck(replyEnvelope(entry.reply)).compiled, entry.subject).toBe(true);
    }
  });

  it("compiles zod's trim as 'already trimmed': a value with whitespace at an end goes to zod, which trims it", () => {
    const schema = z.object({ q: z.string().trim().min(1).max(5) });
    const check = compiledCheck(schema);
    expect(check.compiled).toBe(true);
    expect(compiledCheck(searchCatalog.query.request).compiled).toBe(true);
    for (const q of ['abc', ' abc', 'abc ', '  ', '', '\uFEFFx', 'x\u2028', '\u00a0', 'a b', ' abcdef ', 'abcdef', 'é', '😀', 7]) {
      const ours = check.safeParse({ q });
      const zods = schema.safeParse({ q });
      expect(ours.success, JSON.stringify(q)).toBe(zods.success);
      if (ours.success && zods.success) expect(ours.data, JSON.stringify(q)).toEqual(zods.data);
    }
  });

  it("holds a stored text field (ids, names: a pattern, not a refinement) to zod's answer", () => {
    const check = compiledCheck(billingCatalog.hold.request.pick({ account_id: true }));
    expect(check.compiled).toBe(true);
    for (const account_id of ['acct_1', '', 'a\u0000', '\ud800', 'x\udc00', '😀', '\ud83d\ude00\ud83d', 'x'.repeat(64), 'x'.repeat(65), 7, null]) {
      const ours = check.safeParse({ account_id });
      const zods = billingCatalog.hold.request.pick({ account_id: true }).safeParse({ account_id });
      expect(ours.success, JSON.stringify(account_id)).toBe(zods.success);
      if (!ours.success && !zods.success) expect(ours.error.issues).toEqual(zods.error.issues);
    }
  });
});
