import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

const exec = promisify(execFile);

/**
 * What a test's sandbox instance leaves behind once it is killed: its containers (by its instance
 * label only, never anyone else's), the session volumes it still had mounted under its state dir
 * (a killed service cannot unmount them itself), the state dir, and, given the NATS prefix it
 * owns (the first replica of a prefix; not one that joined another's), its JetStream buckets.
 */
export async function cleanSandboxInstance(instance: string, stateDir: string, ownedPrefix?: string): Promise<void> {
  const { stdout } = await exec('docker', ['ps', '-aq', '--no-trunc', '--filter', `label=drael.sandbox.instance=${instance}`]).catch(() => ({ stdout: '' }));
  const ids = stdout.split('\n').filter(Boolean);
  if (ids.length) await exec('docker', ['rm', '-f', ...ids]).catch(() => undefined);
  const mounts = (await readFile('/proc/self/mountinfo', 'utf8'))
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((m): m is string => !!m && m.startsWith(`${stateDir}/`));
  for (const m of mounts) await exec('umount', ['-l', m]).catch(() => undefined);
  await rm(stateDir, { recursive: true, force: true });
  if (ownedPrefix !== undefined) await destroySandboxBuckets(ownedPrefix);
}

/**
 * The sandbox's JetStream buckets of a NATS prefix (apps/sandbox placement/sandbox-stores.ts names
 * them: placement and replica KVs, the workspace object store), removed from the shared NATS so
 * that test runs do not pile up streams there. Only the streams named after `prefix` are touched.
 */
export async function destroySandboxBuckets(prefix: string, natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222'): Promise<void> {
  // An empty prefix is an installation's own (unprefixed) buckets: never a test's to remove.
  if (prefix === '') throw new Error('destroySandboxBuckets: a test prefix is required');
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const p = prefix.replace(/[^A-Za-z0-9_-]/g, '_');
    for (const stream of [`KV_${p}_sandbox_placement`, `KV_${p}_sandbox_replicas`, `OBJ_${p}_sandbox_workspaces`]) await jsm.streams.delete(stream).catch(() => undefined);
  } finally {
    await nc.close();
  }
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
