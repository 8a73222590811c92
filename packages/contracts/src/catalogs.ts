import type { Catalog, ServiceName } from './rpc-entry.js';
import { sandboxCatalog, SANDBOX_ERROR_CODES } from './sandbox.js';
import { fetchCatalog, FETCH_ERROR_CODES } from './fetch.js';
import { searchCatalog, SEARCH_ERROR_CODES } from './search.js';
import { billingCatalog, BILLING_ERROR_CODES } from './billing.js';
import { agentRunCatalog, AGENT_RUN_ERROR_CODES } from './agent-run.js';
import { gatewayCatalog, GATEWAY_ERROR_CODES } from './gateway.js';

/** Every service's catalog, by service name. */
export const CATALOGS = {
  gateway: gatewayCatalog,
  sandbox: sandboxCatalog,
  search: searchCatalog,
  fetch: fetchCatalog,
  billing: billingCatalog,
  'agent-run': agentRunCatalog,
} as const satisfies Record<ServiceName, Catalog>;

/** The services behind the gateway, each answering `<service>.health.v1`. */
export const BACKEND_SERVICES = ['sandbox', 'search', 'fetch', 'billing', 'agent-run'] as const satisfies readonly ServiceName[];

/**
 * Each service's error enum, by service name: every code its subjects may declare (the gateway's
 * HTTP-only codes too). The one list of the enums: a new service is refused here until it has one.
 */
export const SERVICE_ERROR_CODES = {
  gateway: GATEWAY_ERROR_CODES,
  sandbox: SANDBOX_ERROR_CODES,
  fetch: FETCH_ERROR_CODES,
  search: SEARCH_ERROR_CODES,
  billing: BILLING_ERROR_CODES,
  'agent-run': AGENT_RUN_ERROR_CODES,
} as const satisfies Record<ServiceName, readonly string[]>;

/** Every code any part of Drael can answer with; the gateway maps each to HTTP exhaustively. */
export type ErrorCode = (typeof SERVICE_ERROR_CODES)[ServiceName][number];

/** Every code any part of Drael can answer with, at run time (each service's enum, the gateway's HTTP codes too). */
export const ERROR_CODES: readonly ErrorCode[] = [...new Set<ErrorCode>(Object.values(SERVICE_ERROR_CODES).flat())];
