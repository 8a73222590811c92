import { describe, expect, it, vi } from 'vitest';
import type { ContainerRuntime } from '../runtime/container-runtime.js';
import type { SessionWorkspace, WorkspaceService } from '../workspace/workspace.service.js';
import { RunWorkspaces } from './run-workspace.js';

// The quota check before a run (issue 3), and what a fresh request workspace skips of it (issue 20).
describe('RunWorkspaces quota check', () => {
  const QUOTA = 8 * 1024 * 1024;
  const setup = (ws: Omit<SessionWorkspace, 'path' | 'release'>) => {
    const release = vi.fn(() => Promise.resolve());
    const workspaces = {
      quotaBytes: QUOTA,
      onBeforeUnmount: () => undefined,
      acquire: () => Promise.resolve({ path: '/nowhere', release, ...ws }),
    } as unknown as WorkspaceService;
    const runtime = { takeFreshWorkspace: () => Promise.resolve(undefined), prepareFor: () => undefined } as unknown as ContainerRuntime;
    return { runs: new RunWorkspaces(runtime, workspaces), release };
  };
  const req = { tenant: 't', session: 's', scope: 'request' as const, runtime: 'python' as const, code: '' };

  it('refuses a run in a workspace with less than the headroom free, and lets it go', async () => {
    const usage = vi.fn(() => Promise.resolve({ usedBytes: QUOTA, freeBytes: 0 }));
    const { runs, release } = setup({ fresh: false, usage });
    await expect(runs.acquire(req)).rejects.toMatchObject({ code: 'quota_exceeded' });
    expect(usage).toHaveBeenCalledOnce();
    expect(release).toHaveBeenCalledOnce();
  });

  it('asks nothing of a fresh workspace from the pool: it is empty, its whole quota free', async () => {
    const usage = vi.fn(() => Promise.resolve({ usedBytes: QUOTA, freeBytes: 0 }));
    const { runs, release } = setup({ fresh: true, usage });
    const ws = await runs.acquire(req);
    expect(ws.mount).toEqual({ kind: 'held', path: '/nowhere' });
    expect(usage).not.toHaveBeenCalled();
    expect(release).not.toHaveBeenCalled();
  });
});
