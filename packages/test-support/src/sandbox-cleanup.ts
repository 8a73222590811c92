import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/**
 * What a test's sandbox instance leaves behind once it is killed: its containers (by its instance
 * label only, never anyone else's), the session volumes it still had mounted under its state dir
 * (a killed service cannot unmount them itself) and the state dir.
 */
export async function cleanSandboxInstance(instance: string, stateDir: string): Promise<void> {
  const { stdout } = await exec('docker', ['ps', '-aq', '--no-trunc', '--filter', `label=drael.sandbox.instance=${instance}`]).catch(() => ({ stdout: '' }));
  const ids = stdout.split('\n').filter(Boolean);
  if (ids.length) await exec('docker', ['rm', '-f', ...ids]).catch(() => undefined);
  const mounts = (await readFile('/proc/self/mountinfo', 'utf8'))
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((m): m is string => !!m && m.startsWith(`${stateDir}/`));
  for (const m of mounts) await exec('umount', ['-l', m]).catch(() => undefined);
  await rm(stateDir, { recursive: true, force: true });
}
