import { describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import type { SandboxConfig } from '../config/config.schema.js';
import type { WorkspaceStore } from '../workspace/workspace-store.js';
import type { WorkspaceService } from '../workspace/workspace.service.js';
import type { SandboxStores } from './sandbox-stores.js';
import type { Placement, SessionPlacement } from './session-placement.service.js';
import { SessionRouter, type Route } from './session-router.js';

type RunRoute = Route<typeof sandboxCatalog.run>;
const request = { tenant: 't', session: 's1', runtime: 'bash', code: 'sleep 600' } as Parameters<RunRoute['local']>[0];
const answer = (stdout: string) => ({
  ok: true,
  exit_code: 0,
  stdout,
  stderr: '',
  truncated: { stdout: false, stderr: false },
  timed_out: false,
  oom_killed: false,
  duration_s: 0,
});

/** A router over a placement that answers `placement` beside the run, and a save that only counts. */
function routerWith(placement: Placement) {
  const saves: string[] = [];
  const fakePlacement = {
    placeBeside: () => Promise.resolve({ placed: Promise.resolve(placement) }),
    place: () => Promise.resolve(placement),
  } as unknown as SessionPlacement;
  const store = { save: (_ref: unknown, key: string) => Promise.resolve(void saves.push(key)), restore: () => Promise.resolve() } as unknown as WorkspaceStore;
  const workspaces = { discardCopy: () => Promise.resolve() } as unknown as WorkspaceService;
  const config = { LOG_LEVEL: 'silent', DRAEL_NATS_PREFIX: '' } as unknown as SandboxConfig;
  return { router: new SessionRouter(config, {} as SandboxStores, fakePlacement, store, workspaces), saves };
}

/** The run route: the run beside its placement waits until it is stopped (a long program); a run given its placement answers at once. */
function runRoute() {
  const calls: Array<{ placed: Placement | undefined; stopped: boolean }> = [];
  const route: RunRoute = {
    entry: sandboxCatalog.run,
    create: true,
    mutates: true,
    needsFiles: true,
    runsBeside: () => true,
    local: (_req, placed, stop) => {
      const call = { placed, stopped: false };
      calls.push(call);
      if (placed) return Promise.resolve(answer('after its placement'));
      return new Promise((resolve) => {
        stop?.addEventListener('abort', () => {
          call.stopped = true;
          resolve(answer('beside'));
        });
      });
    },
  };
  return { route, calls };
}

describe('SessionRouter: a run beside its placement', () => {
  it('is stopped as soon as its placement says the files here are not the workspace (taken over), then run on the restored copy', async () => {
    const { router, saves } = routerWith({ where: 'here', key: 'k1', takenOver: true, restoreFrom: 'obj-1' });
    const { route, calls } = runRoute();
    router.register(route);
    const reply = await router.call(sandboxCatalog.run, request);
    expect(reply.stdout).toBe('after its placement');
    expect(calls.map((c) => ({ placed: c.placed?.where, stopped: c.stopped }))).toEqual([
      { placed: undefined, stopped: true },
      { placed: 'here', stopped: false },
    ]);
    expect(saves).toEqual(['k1']);
  });

  it('is kept when its placement finds the workspace as this replica left it: one run, saved once', async () => {
    const { router, saves } = routerWith({ where: 'here', key: 'k2', takenOver: false, kept: true });
    const calls: Array<AbortSignal | undefined> = [];
    const { route } = runRoute();
    route.local = (_req, _placed, stop) => {
      calls.push(stop);
      return Promise.resolve(answer('beside'));
    };
    router.register(route);
    expect((await router.call(sandboxCatalog.run, request)).stdout).toBe('beside');
    expect(calls).toHaveLength(1);
    expect(calls[0]?.aborted).toBe(false);
    expect(saves).toEqual(['k2']);
  });
});
