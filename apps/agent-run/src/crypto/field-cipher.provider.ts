import type { Provider } from '@nestjs/common';
import { AGENT_RUN_CONFIG, type AgentRunConfig } from '../config/config.schema.js';
import { FieldCipher } from './field-cipher.js';

export const cryptoProviders: Provider[] = [
  {
    provide: FieldCipher,
    inject: [AGENT_RUN_CONFIG],
    useFactory: (c: AgentRunConfig) => FieldCipher.fromConfig(c.AGENT_RUN_DATA_KEYS, c.AGENT_RUN_DATA_KEY_ACTIVE),
  },
];
