import { describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../config/config.schema.js';
import { ModelRegistry } from './model-registry.js';

const registry = new ModelRegistry({ DRAEL_MODELS: {} } as unknown as GatewayConfig);
const refusalOf = (alias: string) => {
  try {
    registry.resolve(alias);
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('resolved');
};

describe('an unknown model', () => {
  it('is model_not_found quoting the name; a name of any length is quoted at most 200 characters (the body could hold megabytes)', () => {
    expect(refusalOf('nope')).toMatchObject({ code: 'model_not_found', message: "The model 'nope' does not exist or you do not have access to it." });
    const long = refusalOf('a'.repeat(60_000));
    expect(long.message).toContain(`'${'a'.repeat(200)}…'`);
    expect(long.message.length).toBeLessThan(300);
  });
});
