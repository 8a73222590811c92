import { Inject, Injectable } from '@nestjs/common';
import { SandboxError } from '../sandbox-error.js';
import { KeyedChain } from '../keyed-chain.js';
import { SANDBOX_CONFIG, type SandboxConfig } from '../config/config.schema.js';
import { WorkspaceService } from '../workspace/workspace.service.js';
import { SANDBOX_STORES, type SandboxStores } from './sandbox-stores.js';
import { parseRecord, type SessionRecord } from './session-placement.service.js';

const MIB = 1024 * 1024;
// A tenant's total read from the records is trusted for this long while the tenant is far from
// its budget (under FAR_BELOW of it, with what this replica has added since): a growing save then
// costs no listing. Other replicas' saves in that window are not seen, hence the margin.
const TOTAL_FRESH_MS = 5_000;
const FAR_BELOW = 0.5;
// Tenants whose last total this replica keeps; beyond it the oldest read is dropped (and read
// again from the records at that tenant's next growing save).
const TOTALS_KEPT = 1024;

/** What a record says its saved copy takes: `saved_bytes`, or its size on disk for a record written before that field. */
function savedBytesOfRecord(record: SessionRecord): number {
  if (record.object === undefined) return 0;
  return record.saved_bytes ?? record.bytes;
}

/**
 * Each tenant's budget of saved bytes (SANDBOX_TENANT_STORE_MAX_MB): the saved copies of all its
 * workspaces, sessions and request workspaces, across replicas, as their placement records state
 * them. A save that grows a workspace's copy reserves the growth first and is refused
 * (quota_exceeded) if the tenant would pass its budget; a save that does not grow it is never
 * refused, so deleting files or sessions always frees room. One tenant's saves are checked one at a
 * time in a replica; replicas growing the same tenant's copies at the same instant can each
 * overshoot by one save (as with the session count).
 */
@Injectable()
export class TenantStoreBudget {
  // Per tenant (its key filter): growth reserved by this replica's saves and not yet committed
  // (their records do not show it yet), and the last total read from the records.
  private readonly reserved = new Map<string, number>();
  private readonly totals = new Map<string, { at: number; bytes: number }>();
  private readonly checks = new KeyedChain();

  constructor(
    @Inject(SANDBOX_CONFIG) private readonly config: SandboxConfig,
    @Inject(SANDBOX_STORES) private readonly stores: SandboxStores,
    private readonly workspaces: WorkspaceService,
  ) {}

  /** The budget in bytes; 0 when there is none. */
  private get maxBytes(): number {
    return this.config.SANDBOX_TENANT_STORE_MAX_MB * MIB;
  }

  /**
   * Reserves `growth` more saved bytes for one of `tenant`'s workspaces; throws quota_exceeded
   * when the tenant's saved copies would then take more than its budget. The returned release is
   * called once the save has committed (true: its record now states the bytes) or failed (false).
   */
  async reserve(tenant: string, growth: number): Promise<(committed: boolean) => void> {
    const max = this.maxBytes;
    if (max === 0 || growth <= 0) return () => undefined;
    const filter = this.workspaces.tenantKeysFilter(tenant);
    return this.checks.run(filter, async () => {
      await this.assertFits(filter, growth, max);
      const reserved = this.reserved.get(filter) ?? 0;
      this.reserved.set(filter, reserved + growth);
      let released = false;
      return (committed: boolean) => {
        if (released) return;
        released = true;
        const left = (this.reserved.get(filter) ?? 0) - growth;
        if (left > 0) this.reserved.set(filter, left);
        else this.reserved.delete(filter);
        // Committed: its record now states the growth, and so does the total read before it.
        const total = this.totals.get(filter);
        if (committed && total) total.bytes += growth;
      };
    });
  }

  /**
   * Refuses (quota_exceeded) `bytes` more for `tenant` when they would not fit its budget now,
   * reserving nothing: a file write checks its body before it lands in the workspace, so that a
   * write refused by the save that follows it does not leave the file there. The save still
   * reserves what it really adds (reserve()).
   */
  async assertRoom(tenant: string, bytes: number): Promise<void> {
    const max = this.maxBytes;
    if (max === 0 || bytes <= 0) return;
    const filter = this.workspaces.tenantKeysFilter(tenant);
    await this.checks.run(filter, () => this.assertFits(filter, bytes, max));
  }

  /**
   * What the tenant's saved copies take as their records state them (its sessions' and its
   * request workspaces', every replica's; saves in flight not yet), and its budget (null: none).
   */
  async usage(tenant: string): Promise<{ stored_bytes: number; max_stored_bytes: number | null }> {
    const max = this.maxBytes;
    return { stored_bytes: await this.storedBytes(this.workspaces.tenantKeysFilter(tenant)), max_stored_bytes: max === 0 ? null : max };
  }

  /** Throws quota_exceeded unless `growth` fits the tenant's budget beside what it stores and what is reserved. */
  private async assertFits(filter: string, growth: number, max: number): Promise<void> {
    const reserved = this.reserved.get(filter) ?? 0;
    const seen = this.totals.get(filter);
    const trusted = seen !== undefined && Date.now() - seen.at < TOTAL_FRESH_MS && seen.bytes + reserved + growth <= max * FAR_BELOW;
    const stored = trusted ? seen.bytes : await this.storedBytes(filter);
    if (!trusted) {
      this.totals.delete(filter);
      this.totals.set(filter, { at: Date.now(), bytes: stored });
      if (this.totals.size > TOTALS_KEPT) this.totals.delete(this.totals.keys().next().value!);
    }
    if (stored + reserved + growth > max) throw tenantStoreFull(stored + reserved, max);
  }

  /** The saved bytes every record of the tenant states (each replica's). */
  private async storedBytes(filter: string): Promise<number> {
    const keys = await this.stores.placementKeys(filter);
    const sizes = await Promise.all(
      keys.map(async (key) => {
        const entry = await this.stores.placement.get(key);
        const record = entry?.operation === 'PUT' ? parseRecord(entry.string()) : undefined;
        return record ? savedBytesOfRecord(record) : 0;
      }),
    );
    return sizes.reduce((a, b) => a + b, 0);
  }
}

function tenantStoreFull(storedBytes: number, maxBytes: number): SandboxError {
  const mb = (b: number) => `${Math.ceil(b / MIB)} MB`;
  // No subject name here: this message reaches API clients as it is.
  return new SandboxError(
    'quota_exceeded',
    `this tenant's saved workspaces already take ${mb(storedBytes)} of the ${mb(maxBytes)} it may keep; this call's new files cannot be saved: ` +
      'delete files no longer needed, or sessions (DELETE /v1/sessions/{id}), and retry',
    false,
    { stored_bytes: storedBytes, max_stored_bytes: maxBytes },
  );
}
