import type { Provider } from '@nestjs/common';
import { HEALTH_CHECKS, type HealthCheck } from '@drael/nats-rpc';
import { CONTAINER_RUNTIME, type ContainerRuntime } from '../runtime/container-runtime.js';

/** sandbox's dependency: the container engine every run goes to, with the run image loaded. */
export const sandboxHealthChecks: Provider = {
  provide: HEALTH_CHECKS,
  inject: [CONTAINER_RUNTIME],
  useFactory: (runtime: ContainerRuntime): HealthCheck[] => [{ name: 'docker', check: () => runtime.ping() }],
};
