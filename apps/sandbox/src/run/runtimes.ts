/** How each runtime is started; the program always arrives as a file, never on the command line. */
export const RUNTIMES = {
  python: { file: 'main.py', cmd: (f: string) => ['python3', '-u', f] },
  bash: { file: 'main.sh', cmd: (f: string) => ['bash', f] },
  node: { file: 'main.js', cmd: (f: string) => ['node', f] },
} as const;
export type Runtime = keyof typeof RUNTIMES;
