import { Ajv, type ValidateFunction } from 'ajv';
import { z } from 'zod';
import { refinementPattern } from '@drael/contracts';

/** What `safeParse` answers, as zod's own does. */
export type CheckResult<T> = { success: true; data: T } | { success: false; error: z.ZodError };

/** A schema's check with zod's `safeParse` shape; see compiledCheck. */
export interface SchemaCheck<T> {
  safeParse(value: unknown): CheckResult<T>;
  /** True when a compiled validator answers values that pass (false: zod checks every value). */
  readonly compiled: boolean;
}

/**
 * The check of a zod schema for values parsed from JSON (a NATS reply, SearXNG's answer), made as
 * cheap as the schema allows. Where zod's output for any valid value equals the value itself (no
 * transform, default, refinement or stripped key: see identityReason), a validator compiled from
 * the schema's JSON Schema (ajv) decides; a value it accepts is returned as it is. Anything it
 * rejects, and every value of a schema that does not qualify, goes to zod, so the answer (the
 * data, or zod's error and its message) is always zod's.
 *
 * Why: a reply is checked by a process that has just woken from a wait (the search service's
 * reply after SearXNG's), with cold caches, where zod's general parser costs ~100 µs for the
 * search reply and the compiled validator ~20 µs (bench/search/README.md, issue 20).
 *
 * Safe by construction: the compiled validator may only be stricter than zod, never looser. Every
 * construct the walk below accepts is expressed exactly by z.toJSONSchema, or more strictly (a
 * stripping object, whose JSON Schema forbids the extra keys zod would drop); everything else
 * makes the schema zod's alone. Numbers follow JSON (no NaN or Infinity), which is why this is
 * for parsed JSON only.
 */
export function compiledCheck<T extends z.ZodType>(schema: T): SchemaCheck<z.output<T>> {
  const byZod = (value: unknown) => schema.safeParse(value) as CheckResult<z.output<T>>;
  // Compiled on first use, not when a module makes its checks: boot pays nothing for subjects never used.
  let validate: ValidateFunction | null | undefined;
  const validator = (): ValidateFunction | null => {
    if (validate === undefined) validate = identityReason(schema) === undefined ? compile(schema) : null;
    return validate;
  };
  return {
    get compiled() {
      return validator() !== null;
    },
    safeParse(value) {
      const v = validator();
      return v !== null && v(value) ? { success: true, data: value as z.output<T> } : byZod(value);
    },
  };
}

function compile(schema: z.ZodType): ValidateFunction | null {
  try {
    return ajv().compile(z.toJSONSchema(schema, { target: 'draft-7', io: 'output', unrepresentable: 'throw', override: withRefinementPatterns }));
  } catch {
    // Something ajv refuses (strict mode): zod alone, as for any schema the walk does not accept.
    return null;
  }
}

/**
 * Zod's `.trim()`: an overwrite whose function is zod's own `(input) => input.trim()`, known by
 * its source (the same text in any string schema; one with no free variable, so the same text
 * is the same function). Its output equals its input exactly when the input has no whitespace at
 * either end: that is what the compiled check accepts (TRIMMED), anything else goes to zod.
 */
let zodTrimSource: string | undefined;
function isZodTrim(tx: unknown): boolean {
  zodTrimSource ??= String(defOf(z.string().trim()).checks?.[0]?._zod.def.tx);
  return typeof tx === 'function' && String(tx) === zodTrimSource;
}
/** A string that trim() leaves as it is (JavaScript's \s is exactly what trim() removes). */
const TRIMMED = '^(?:\\S(?:[\\s\\S]*\\S)?)?$';

/**
 * The pattern a string check is compiled as, for the two that JSON Schema leaves out but a pattern
 * says exactly: a patternRefinement (contracts) and zod's trim. Undefined for any other check.
 */
function compiledPatternOf(check: CheckDef): string | undefined {
  if (check.check === 'overwrite' && isZodTrim(check.tx)) return TRIMMED;
  return check.check === 'custom' ? refinementPattern(check.fn)?.source : undefined;
}

/** z.toJSONSchema leaves refinements and overwrites out: those compiledPatternOf knows go into the compiled schema as their pattern. */
function withRefinementPatterns(ctx: { zodSchema: unknown; jsonSchema: Record<string, unknown> }): void {
  const patterns = (defOf(ctx.zodSchema as z.ZodType).checks ?? []).flatMap((c) => {
    const pattern = compiledPatternOf(c._zod.def);
    return pattern === undefined ? [] : [{ pattern }];
  });
  if (patterns.length > 0) ctx.jsonSchema.allOf = [...((ctx.jsonSchema.allOf as unknown[] | undefined) ?? []), ...patterns];
}

let shared: Ajv | undefined;
/** One validator compiler per process; it keeps nothing between compiles but their functions. */
function ajv(): Ajv {
  // A keyword ajv does not know fails the compile (the schema is then zod's alone) rather than
  // being ignored; no coercion, no defaults, no removal: it only says yes or no. Type unions
  // (`["string","null"]`, a nullable) are how z.toJSONSchema writes nullables.
  shared ??= new Ajv({
    strictSchema: true,
    strictNumbers: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allowUnionTypes: true,
    // Patterns without the u flag, as zod runs them. (String lengths are counted in code points by
    // both, ajv's default and zod 4's: the tests hold them to each other.)
    unicodeRegExp: false,
    allErrors: false,
    coerceTypes: false,
    useDefaults: false,
    removeAdditional: false,
  });
  return shared;
}

/** One check of a zod schema (zod 4's check `_zod.def`): `fn` a refinement's, `tx` an overwrite's. */
interface CheckDef {
  check: string;
  format?: string;
  pattern?: RegExp;
  fn?: unknown;
  tx?: unknown;
}

/** A zod schema's internals, as far as the walk reads them (zod 4's `_zod.def`). */
interface ZodDef {
  type: string;
  check?: string;
  format?: string;
  pattern?: RegExp;
  checks?: { _zod: { def: CheckDef } }[];
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  innerType?: z.ZodType;
  options?: z.ZodType[];
  items?: z.ZodType[];
  rest?: z.ZodType | null;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  values?: unknown[];
  entries?: Record<string, unknown>;
}

const defOf = (schema: z.ZodType): ZodDef => (schema as unknown as { _zod: { def: ZodDef } })._zod.def;

/**
 * The checks zod's JSON Schema expresses exactly, as ajv is set up here (ajv()), on each type; any
 * other makes a schema zod's alone. Strings: lengths (code points, as zod 4 counts them), and a
 * pattern without flags (ajv runs it as zod does, `new RegExp(source).test`); not zod's named
 * formats (email, uuid, ...: their JSON Schema names a format, not zod's own regex). Numbers: not
 * multiple_of (a float's remainder is computed differently), number_format only as safeint.
 */
const EXACT_CHECKS: Record<string, ReadonlySet<string>> = {
  string: new Set(['min_length', 'max_length', 'length_equals', 'string_format']),
  number: new Set(['greater_than', 'less_than', 'number_format']),
  array: new Set(['min_length', 'max_length', 'length_equals']),
};

/**
 * Undefined when zod's output equals its input for every value the schema accepts and the
 * schema's JSON Schema says exactly that (or more); otherwise what stops it, for the tests and
 * whoever wonders why a schema is not compiled.
 */
export function identityReason(schema: z.ZodType, ancestors = new Set<z.ZodType>()): string | undefined {
  // Only the schemas on the path from the root: one reused in two fields is walked twice, not
  // taken for recursion (a getter that returns an ancestor is, and stays with zod).
  if (ancestors.has(schema)) return 'recursive';
  ancestors.add(schema);
  try {
    return identityReasonOf(schema, ancestors);
  } finally {
    ancestors.delete(schema);
  }
}

function identityReasonOf(schema: z.ZodType, ancestors: Set<z.ZodType>): string | undefined {
  const def = defOf(schema);
  const checks = [...(def.checks ?? []).map((c) => c._zod.def), ...(def.check ? [{ check: def.check, format: def.format, pattern: def.pattern }] : [])];
  const allowed = EXACT_CHECKS[def.type] ?? new Set<string>();
  for (const c of checks) {
    // A patternRefinement, or zod's trim ("already trimmed": a value with whitespace at an end goes to zod, which trims it).
    if (def.type === 'string' && compiledPatternOf(c) !== undefined) continue;
    if (!allowed.has(c.check)) return `${def.type} with a ${c.check} check`;
    if (c.check === 'number_format' && c.format !== 'safeint') return `number of format ${c.format}`;
    if (c.check === 'string_format' && (c.format !== 'regex' || c.pattern?.flags !== '')) return `string of format ${c.format}${c.pattern?.flags ? ` /${c.pattern.flags}` : ''}`;
  }
  const inner = (s: z.ZodType | undefined | null): string | undefined => (s ? identityReason(s, ancestors) : undefined);
  switch (def.type) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'null':
    case 'unknown':
    case 'any':
      return undefined;
    case 'literal':
      return def.values?.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v)) ? undefined : 'literal that is not JSON';
    case 'enum':
      return Object.values(def.entries ?? {}).every((v) => typeof v === 'string' || typeof v === 'number') ? undefined : 'enum that is not JSON';
    case 'optional':
    case 'nullable':
      return inner(def.innerType);
    case 'array':
      return inner(def.element);
    case 'object': {
      for (const [key, field] of Object.entries(def.shape ?? {})) {
        // A field's own default (its outermost wrapper): the output's JSON Schema requires the key,
        // so a value that has it is checked as it is (zod leaves it unchanged) and one without it
        // goes to zod, which fills the default in. Anywhere else a default stays zod's.
        const fieldDef = defOf(field);
        const why = inner(fieldDef.type === 'default' ? fieldDef.innerType : field);
        if (why) return `${key}: ${why}`;
      }
      // No catchall: extra keys are stripped by zod and refused by the JSON Schema (stricter). never: strict. Else kept as they are.
      return inner(def.catchall);
    }
    case 'never':
      return undefined;
    case 'union':
      for (const option of def.options ?? []) {
        const why = inner(option);
        if (why) return why;
      }
      return undefined;
    case 'tuple':
      for (const item of def.items ?? []) {
        const why = inner(item);
        if (why) return why;
      }
      return inner(def.rest);
    case 'record': {
      const key = def.keyType ? defOf(def.keyType) : undefined;
      // An enum or literal key makes zod require every key: not what the JSON Schema says.
      if (key?.type !== 'string' || (key.checks?.length ?? 0) > 0) return 'record whose keys are not plain strings';
      return inner(def.valueType);
    }
    default:
      // transform, pipe, default, prefault, catch, readonly (frozen output), lazy, date, bigint, custom, ...
      return def.type;
  }
}
