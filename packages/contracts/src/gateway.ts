import { COMMON_ERROR_CODES } from './wire-error.js';

/** Codes the gateway itself raises (HTTP surface), beside every service's own. */
export const GATEWAY_ERROR_CODES = [
  ...COMMON_ERROR_CODES,
  'invalid_json',
  'invalid_request',
  'model_not_found',
  'upstream_unreachable',
  'upstream_timeout',
  'upstream_error',
  'invalid_api_key',
  'missing_api_key',
  'rate_limit_exceeded',
  'not_found',
  'service_unavailable',
] as const;
export type GatewayErrorCode = (typeof GATEWAY_ERROR_CODES)[number];

/** Subjects the gateway answers over NATS (for example inference for agent runs). */
export const gatewayCatalog = {} as const;
