// The benches' command-line options, `--name value` anywhere after the script: one reading for
// every bench (each used to carry its own copy), and a value that is missing or not a number stops
// the bench with the option's name instead of letting it run with undefined or NaN.

/** The string after `--name`, or `fallback` when the option is not given. */
export function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) return fallback;
  const value = process.argv[at + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`--${name} needs a value`);
  return value;
}

/** The number after `--name`, or `fallback` when the option is not given. */
export function numberOption(name, fallback) {
  const value = option(name, undefined);
  if (value === undefined) return fallback;
  const number = Number(value);
  if (value.trim() === '' || Number.isNaN(number)) throw new Error(`--${name} takes a number, not "${value}"`);
  return number;
}
