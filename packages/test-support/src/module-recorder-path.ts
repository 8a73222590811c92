import { fileURLToPath } from 'node:url';

/** For `NODE_OPTIONS: --import <MODULE_RECORDER>`: a process that logs each OpenTelemetry module it loads (module-recorder.ts). */
export const MODULE_RECORDER = fileURLToPath(new URL('./module-recorder.js', import.meta.url));

/** The OpenTelemetry modules a process started with MODULE_RECORDER reported loading. */
export function openTelemetryModulesLoaded(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('module-loaded '))
    .map((line) => line.slice('module-loaded '.length));
}
