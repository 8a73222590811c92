import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxConfig } from '../config/config.schema.js';
import { WorkspaceService } from './workspace.service.js';

// Neither path mounts anything (no volume exists, or creating one is refused), so this runs
// without root or loop devices; mounting volumes is covered by test/session-retention.spec.ts.
describe('WorkspaceService bookkeeping', () => {
  let stateDir: string;
  let workspaces: WorkspaceService;

  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'drael-ws-'));
    workspaces = new WorkspaceService({
      SANDBOX_STATE_DIR: stateDir,
      SANDBOX_SESSION_QUOTA_MB: 8,
      SANDBOX_MAX_SESSIONS_PER_TENANT: 1,
      SANDBOX_SESSION_MAX_IDLE_S: 3600,
      SANDBOX_REQUEST_WORKSPACE_MAX_AGE_S: 3600,
    } as SandboxConfig);
  });
  afterEach(async () => {
    await rm(stateDir, { recursive: true, force: true });
  });

  it('keeps nothing for session ids that name no volume (lookups of unknown sessions cannot grow memory)', async () => {
    for (let i = 0; i < 200; i++) {
      await expect(workspaces.acquire({ tenant: 't1', session: `never-${i}` }, { create: false })).resolves.toBeUndefined();
    }
    expect(workspaces.trackedVolumes).toBe(0);
  });

  it('keeps nothing for sessions refused at the per-tenant cap, however many new ids are tried', async () => {
    // The tenant already holds its one session: an image in its directory is what the cap counts.
    const { dir } = (workspaces as unknown as { locate(ref: { tenant: string; session: string }): { dir: string } }).locate({ tenant: 't1', session: 'held' });
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'held.img'), '');
    const tries = Array.from({ length: 50 }, (_, i) => workspaces.acquire({ tenant: 't1', session: `new-${i}` }, { create: true }));
    const outcomes = await Promise.allSettled(tries);
    expect(outcomes.every((o) => o.status === 'rejected' && (o.reason as { code?: string }).code === 'session_limit_reached')).toBe(true);
    expect(workspaces.trackedVolumes).toBe(0);
  });
});
