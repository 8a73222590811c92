import type { Provider } from '@nestjs/common';
import { HEALTH_CHECKS, type HealthCheck } from '@drael/nats-rpc';
import { CONTAINER_RUNTIME, type ContainerRuntime } from '../runtime/container-runtime.js';
import { SANDBOX_STORES, type SandboxStores } from '../placement/sandbox-stores.js';

/**
 * sandbox's dependencies: the container engine every run goes to, with the run image loaded; and
 * JetStream, where sessions are placed and saved (placement/). Its check reads this replica's own
 * heartbeat: without it the other replicas take this one's sessions over.
 */
export const sandboxHealthChecks: Provider = {
  provide: HEALTH_CHECKS,
  inject: [CONTAINER_RUNTIME, SANDBOX_STORES],
  useFactory: (runtime: ContainerRuntime, stores: SandboxStores): HealthCheck[] => [
    { name: 'docker', check: () => runtime.ping() },
    {
      name: 'jetstream',
      check: async () => {
        const beat = await stores.replicas.get(stores.replicaId);
        if (!beat || beat.operation !== 'PUT') throw new Error("this replica's heartbeat is missing from JetStream");
      },
    },
  ],
};
