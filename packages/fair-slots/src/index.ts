export { ANONYMOUS_TENANT, FairSlots, tenantShareOf, type AcquireOptions, type FairSlotLimits, type Refusal } from './fair-slots.js';
