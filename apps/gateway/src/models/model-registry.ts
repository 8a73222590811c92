import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../errors/api-error.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import type { ModelAliasConfig } from './model-routes.config.js';

/** A model alias as requests see it: its deployments (upstreams) and how the router picks among them. */
export type ResolvedModel = ModelAliasConfig;

export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/** The configured model aliases: what /v1/models lists and where each request is routed. */
@Injectable()
export class ModelRegistry {
  private readonly routes: ReadonlyMap<string, ResolvedModel>;
  // Config is fixed at boot, so the list is too.
  private readonly createdAt = Math.floor(Date.now() / 1000);

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.routes = new Map(Object.entries(config.DRAEL_MODELS));
  }

  resolve(alias: string): ResolvedModel {
    const route = this.routes.get(alias);
    if (!route) throw new ApiError('model_not_found', `The model '${quoted(alias)}' does not exist or you do not have access to it.`, 'model');
    return route;
  }

  /** Every alias's configuration (the router builds its deployments from it). */
  all(): ResolvedModel[] {
    return [...this.routes.values()];
  }

  list(): ModelObject[] {
    return [...this.routes.keys()].map((id) => this.objectOf(id));
  }

  /** One alias as OpenAI's model object (models.retrieve); an unknown one is 404 model_not_found. */
  retrieve(alias: string): ModelObject {
    this.resolve(alias);
    return this.objectOf(alias);
  }

  private objectOf(id: string): ModelObject {
    return { id, object: 'model', created: this.createdAt, owned_by: 'drael' };
  }
}

// A client's model name is quoted back up to this length: the body may hold megabytes of it.
const QUOTED_CHARS = 200;

function quoted(name: string): string {
  return name.length > QUOTED_CHARS ? `${name.slice(0, QUOTED_CHARS)}…` : name;
}
