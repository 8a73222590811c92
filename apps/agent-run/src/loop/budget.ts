import { usdToMicros } from './money.js';

// spec 03: if fewer than 64 output tokens are affordable, the model call is refused.
export const MIN_AFFORDABLE_OUTPUT_TOKENS = 64;

export interface ModelPrice {
  /** micro-dollars per million input tokens */
  inputPerMTok: number;
  /** micro-dollars per million output tokens */
  outputPerMTok: number;
}

export function priceOf(table: Record<string, { input_per_mtok_usd: number; output_per_mtok_usd: number }>, model: string): ModelPrice {
  const p = table[model] ?? table['*'];
  if (!p) throw new Error(`no price for model ${model} and no "*" default`);
  return { inputPerMTok: usdToMicros(p.input_per_mtok_usd), outputPerMTok: usdToMicros(p.output_per_mtok_usd) };
}

const costOf = (tokens: number, perMTok: number) => Math.ceil((tokens * perMTok) / 1_000_000);

/**
 * An upper bound of the prompt's tokens, without a tokenizer for every upstream model: a byte-level
 * BPE token covers at least one UTF-8 byte, so the request's bytes bound its tokens; a fixed
 * allowance per message covers the chat template. Over-estimating only makes the ceiling safer.
 */
export function inputTokenBound(requestJson: string, messageCount: number): number {
  return Buffer.byteLength(requestJson, 'utf8') + 16 * messageCount + 64;
}

export interface ModelReservation {
  maxTokens: number;
  /** The most this call can cost: estimated input plus max_tokens of output. */
  ceilingMicros: number;
}

/**
 * The least any model call of a run reserves (its 64 output tokens, before any input): an account
 * whose available balance is below it cannot pay for a run's first step, whatever the prompt.
 */
export function leastModelCallMicros(price: ModelPrice): number {
  return costOf(MIN_AFFORDABLE_OUTPUT_TOKENS, price.outputPerMTok);
}

/**
 * spec 03: a model call's output tokens are capped at what the remaining budget can pay for after
 * the estimated input cost; fewer than 64 affordable tokens refuse the call (null).
 */
export function reserveModelCall(remainingMicros: number, inputTokens: number, price: ModelPrice, modelMaxTokens: number): ModelReservation | null {
  const inputCost = costOf(inputTokens, price.inputPerMTok);
  const left = remainingMicros - inputCost;
  if (left <= 0) return null;
  const affordable = Math.floor((left * 1_000_000) / price.outputPerMTok);
  if (affordable < MIN_AFFORDABLE_OUTPUT_TOKENS) return null;
  const maxTokens = Math.min(affordable, modelMaxTokens);
  return { maxTokens, ceilingMicros: inputCost + costOf(maxTokens, price.outputPerMTok) };
}

/** What a finished model call costs, never above its reservation (the budget is a ceiling, not a target). */
export function chargeModelCall(usage: { prompt_tokens: number; completion_tokens: number }, price: ModelPrice, r: ModelReservation): number {
  const actual = costOf(usage.prompt_tokens, price.inputPerMTok) + costOf(Math.min(usage.completion_tokens, r.maxTokens), price.outputPerMTok);
  return Math.min(actual, r.ceilingMicros);
}

/** spec 03: a sandbox execution reserves the cost of its full timeout; refused (null) when that exceeds the remainder. */
export function reserveSandbox(remainingMicros: number, timeoutS: number, microsPerSecond: number): number | null {
  const reservation = Math.ceil(timeoutS * microsPerSecond);
  return reservation > remainingMicros ? null : reservation;
}

export function chargeSandbox(durationS: number, microsPerSecond: number, reservation: number): number {
  return Math.min(Math.ceil(Math.ceil(durationS) * microsPerSecond), reservation);
}
