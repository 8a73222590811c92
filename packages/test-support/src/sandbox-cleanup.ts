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

/**
 * The containers of a test's sandbox instance that run something. Containers are started ahead of
 * their run (issue 20) and wait, with only their init and the launcher (`read -r _ ...`) alive, for
 * the line that begins it; such a waiting container runs nothing of anyone's and is not counted.
 */
export async function busySandboxContainers(instance: string): Promise<string[]> {
  const { stdout } = await exec('docker', ['ps', '-q', '--no-trunc', '--filter', `label=drael.sandbox.instance=${instance}`, '--filter', 'status=running']).catch(() => ({
    stdout: '',
  }));
  const busy: string[] = [];
  for (const id of stdout.split('\n').filter(Boolean)) {
    const top = await exec('docker', ['top', id]).catch(() => undefined);
    if (!top) continue; // gone between the listing and the look
    const processes = top.stdout.split('\n').slice(1).filter(Boolean);
    if (processes.some((line) => !line.includes('read -r _'))) busy.push(id);
  }
  return busy;
}
