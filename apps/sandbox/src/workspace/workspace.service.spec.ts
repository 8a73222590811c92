import { mkdtemp, mkdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxConfig } from '../config/config.schema.js';
import { answering } from '../after-answer.js';
import { WorkspaceService } from './workspace.service.js';

// No path mounts anything (no volume exists, creating one is refused, or a request's workspace
// comes from a "fresh slot" that is a plain directory), so this runs without root or loop
// devices; mounting volumes is covered by test/session-retention.spec.ts.
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

  // issue 20: a workspace's last use is kept in its entry at once and written to its image's mtime
  // once the call's answer has left, not on the call's path.
  describe('last use', () => {
    const ref = { tenant: 't1', session: 'req-use', scope: 'request' as const };
    const HOUR_AGO = new Date(Date.now() - 3_600_000);
    const service = () =>
      new WorkspaceService({
        SANDBOX_STATE_DIR: stateDir,
        SANDBOX_SESSION_QUOTA_MB: 8,
        SANDBOX_MAX_SESSIONS_PER_TENANT: 1,
        SANDBOX_SESSION_MAX_IDLE_S: 60,
        SANDBOX_REQUEST_WORKSPACE_MAX_AGE_S: 60,
      } as SandboxConfig);
    // A request's workspace from a fresh slot (here a plain directory: nothing to mount), its
    // image then marked as if last used an hour ago.
    const acquireFresh = async (svc: WorkspaceService) => {
      const slot = join(stateDir, 'slot');
      await mkdir(slot, { recursive: true });
      const ws = await svc.acquire(ref, { create: true, fresh: () => Promise.resolve(slot) });
      if (!ws) throw new Error('no workspace');
      await utimes(markerOf(svc), HOUR_AGO, HOUR_AGO);
      return ws;
    };
    const markerOf = (svc: WorkspaceService) => (svc as unknown as { locate(r: typeof ref): { image: string } }).locate(ref).image;
    const markedAt = async (svc: WorkspaceService) => (await stat(markerOf(svc))).mtimeMs;

    it("is written to the image's mtime after the call's answer, not before", async () => {
      const svc = service();
      const first = await acquireFresh(svc);
      expect(first.fresh).toBe(true);
      let answered!: () => void;
      const answer = new Promise<void>((r) => (answered = r));
      const call = answering(async () => {
        await first.release();
        const again = await svc.acquire(ref, { create: false });
        expect(again?.fresh).toBe(false);
        await again?.release();
        // Used and let go, the answer not sent yet: nothing was written on the way.
        expect(await markedAt(svc)).toBe(HOUR_AGO.getTime());
        await answer;
      });
      answered();
      await call;
      await expect.poll(() => markedAt(svc)).toBeGreaterThan(HOUR_AGO.getTime() + 60_000);
    });

    it('kept in the entry, it keeps the sweep off a workspace whose image mtime says idle', async () => {
      const svc = service();
      const ws = await acquireFresh(svc);
      await answering(async () => {
        await ws.release();
        // As if its mark were lost: the image says an hour idle, its entry says just used.
        await utimes(markerOf(svc), HOUR_AGO, HOUR_AGO);
        expect(await svc.sweepIdleWorkspaces()).toBe(0);
        // Another process on this state dir knows only the image: for it, the workspace is idle.
        // (Its sweep would unmount a slot; here it finds a plain directory nothing holds.)
        expect(await service().sweepIdleWorkspaces()).toBe(1);
      });
    });
  });
});
