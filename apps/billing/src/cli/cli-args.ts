// Argument rules of the operator CLI: every number is checked here, before anything is sent, and
// a bad one is a UsageError naming its flag (exit 2), never a stack trace or a silent default.

/** A mistake in the command line: printed with the command's usage, exit 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose usage is shown after the message ('' = the overview). */
    readonly command = '',
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

const INTEGER = /^[0-9]+$/;
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;

/** A whole number in [min, max] written in plain digits ("1e3", "12abc", "-5", "0x10" are refused). */
export function integerFlag(flag: string, value: string, min: number, max: number): number {
  const n = INTEGER.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${flag} must be a whole number from ${min.toLocaleString('en')} to ${max.toLocaleString('en')} (got ${JSON.stringify(value)})`);
  }
  return n;
}

/** An amount in US dollars, at most 6 decimals (the wire is integer micro-dollars), in [min, max]. */
export function usdFlag(flag: string, value: string, min: number, max: number): number {
  const usd = DECIMAL.test(value) ? Number(value) : Number.NaN;
  const decimals = value.split('.')[1]?.length ?? 0;
  if (!Number.isFinite(usd) || decimals > 6 || usd < min || usd > max) {
    throw new UsageError(`--${flag} must be an amount in USD from ${min} to ${max.toLocaleString('en')}, at most 6 decimals (got ${JSON.stringify(value)})`);
  }
  return Math.round(usd * 1_000_000);
}

/**
 * node:util parseArgs reads `--per-minute -5` as a flag followed by another flag and fails with a
 * message about ambiguity; written `--per-minute=-5` it reaches the number check, which names the
 * flag and the rule. Only the value of a known string option is rewritten.
 */
export function joinDashValues(argv: readonly string[], stringOptions: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (arg.startsWith('--') && stringOptions.has(arg.slice(2)) && next !== undefined && /^-[0-9.]/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}
