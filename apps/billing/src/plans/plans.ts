import type { Plan } from '@drael/contracts';

/**
 * THE plans and their weekly figures: the only place they are written (spec 01: "a number in two
 * places is a number that drifts"). GET /api/billing/plans publishes them from here over NATS, and
 * every hold reads its allowance from here.
 */
export const PLANS: readonly Plan[] = [
  { id: 'free', name: 'Free', price_usd_per_month: 0, weekly: { images: 20, lookups: 0 }, tools: ['generate_image'] },
  {
    id: 'pro',
    name: 'Pro',
    price_usd_per_month: 20,
    weekly: { images: 200, lookups: 100 },
    tools: ['generate_image', 'breach_lookup', 'contact_lookup'],
  },
  {
    id: 'team',
    name: 'Team',
    price_usd_per_month: 100,
    weekly: { images: 1_000, lookups: 500 },
    tools: ['generate_image', 'breach_lookup', 'contact_lookup'],
  },
];
