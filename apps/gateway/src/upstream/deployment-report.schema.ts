import { z } from 'zod';

/** A model deployment as /readyz (and the console) report it: its state, cooldown and counters. */
export const DeploymentReportSchema = z.object({
  alias: z.string(),
  priority: z.number().int(),
  weight: z.number(),
  state: z.enum(['healthy', 'cooling', 'probing']),
  cooling_until: z.string().optional(),
  reason: z.string().optional(),
  in_flight: z.number().int(),
  attempts: z.number().int(),
  successes: z.number().int(),
  failures: z.record(z.string(), z.number().int()),
  cooldowns: z.number().int(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
});

export type DeploymentReport = z.infer<typeof DeploymentReportSchema>;
