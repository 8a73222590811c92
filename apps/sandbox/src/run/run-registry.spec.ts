import { describe, expect, it } from 'vitest';
import { RunRegistry } from './run-registry.js';

describe('RunRegistry', () => {
  it("a cancel stops the tenant's own run only, and says whether this replica ran it", () => {
    const runs = new RunRegistry();
    const run = runs.track('owner', 'job-1');
    expect(runs.cancel('intruder', 'job-1')).toBe(false);
    expect(run.signal.aborted).toBe(false);
    expect(runs.cancel('owner', 'job-1')).toBe(true);
    expect(run.signal.aborted).toBe(true);
    run.done();
    // Finished: a later cancel finds nothing here.
    expect(runs.cancel('owner', 'job-1')).toBe(false);
  });

  it("a run that arrives after its own cancel starts cancelled; another tenant's cancel does not touch it", () => {
    const runs = new RunRegistry();
    expect(runs.cancel('owner', 'late')).toBe(false);
    expect(runs.cancel('intruder', 'other')).toBe(false);
    expect(runs.track('owner', 'late').signal.aborted).toBe(true);
    expect(runs.track('owner', 'other').signal.aborted).toBe(false);
    // The early cancel is used once: the same run id again starts normally.
    expect(runs.track('owner', 'late').signal.aborted).toBe(false);
  });

  it('a run cancelled while it ran does not start again if it comes back (run again after its placement moved)', () => {
    const runs = new RunRegistry();
    const first = runs.track('owner', 'job-2');
    expect(runs.cancel('owner', 'job-2')).toBe(true);
    first.done();
    expect(runs.track('owner', 'job-2').signal.aborted).toBe(true);
    // A run that ended without a cancel leaves nothing behind.
    runs.track('owner', 'job-3').done();
    expect(runs.track('owner', 'job-3').signal.aborted).toBe(false);
  });
});
