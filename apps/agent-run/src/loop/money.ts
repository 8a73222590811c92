/** Money inside agent-run is integer micro-dollars, so sums are exact and comparisons never round. */
export const MICROS_PER_USD = 1_000_000;

export const usdToMicros = (usd: number): number => Math.round(usd * MICROS_PER_USD);
export const microsToUsd = (micros: number): number => micros / MICROS_PER_USD;
