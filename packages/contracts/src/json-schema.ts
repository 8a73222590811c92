import { z } from 'zod';
import { replyEnvelope } from './wire-error.js';
import type { RpcEntry } from './rpc-entry.js';

/** A JSON Schema document (draft-07, the dialect AsyncAPI 3 and most validators take), as z.toJSONSchema writes it. */
export type JsonSchema = Record<string, unknown>;

export interface EntrySchemas {
  /** What a caller sends: the request itself (plain JSON), or Nest's packet's `data`. */
  request: JsonSchema;
  /** What comes back: the reply envelope, `{"result": …}` or `{"error": {code, message, retryable, details?}}`. */
  reply: JsonSchema;
}

const cache = new WeakMap<RpcEntry, EntrySchemas>();

/**
 * The JSON Schemas of one catalog entry, generated from its zod schemas (never written by hand),
 * so $SRV.INFO, docs/asyncapi.yaml and other teams' code read the rules the services enforce.
 * Requests are described as they are sent (`io: 'input'`: a field with a default is optional),
 * replies as they are received. A zod construct JSON Schema cannot express (a refinement, a
 * transform) is described by the part it can (`unrepresentable: 'any'`); the service still checks all.
 */
export function entrySchemas(entry: RpcEntry): EntrySchemas {
  let schemas = cache.get(entry);
  if (!schemas) {
    schemas = {
      request: z.toJSONSchema(entry.request, { target: 'draft-7', io: 'input', unrepresentable: 'any' }),
      reply: z.toJSONSchema(replyEnvelope(entry.reply), { target: 'draft-7', io: 'output', unrepresentable: 'any' }),
    };
    cache.set(entry, schemas);
  }
  return schemas;
}
