export { FairSlots, tenantShareOf, type AcquireOptions, type FairSlotLimits, type Refusal } from './fair-slots.js';
