import type { SearchIntent } from '@drael/contracts';

/**
 * A small rule-based classifier of what a query asks for. The first rule that matches wins, in
 * this order (documented in apps/search/README.md). It reads only the query text, so equal
 * queries always get equal intents; it never changes which results are returned.
 */
const RULES: readonly (readonly [SearchIntent, RegExp])[] = [
  // "curs BNR euro azi", "usd to eur", "exchange rate", "100 EUR in RON"
  [
    'currency',
    /\b(exchange rate|currency|forex|curs(ul)? (valutar|bnr)|curs bnr|bnr)\b|\b(usd|eur|euro|gbp|ron|lei|chf|jpy|dollar|pound|bitcoin|btc)\b.*\b(to|in|vs|=)\b.*\b(usd|eur|euro|gbp|ron|lei|chf|jpy|dollars?|pounds?|btc)\b|\b(curs)\b.*\b(euro|eur|usd|dolar)\b/,
  ],
  ['weather', /\b(weather|forecast|temperature|rain|snow|vremea|meteo|prognoza)\b/],
  ['time', /\b(what time|time in|time zone|timezone|current time|ora exacta)\b/],
  ['definition', /^(define|definition of|meaning of|what does .+ mean)\b|\b(definition|meaning|synonym|antonym)\b/],
  ['how_to', /^(how (to|do|can|should) )|\b(tutorial|step by step|guide to|cum sa)\b/],
  [
    'code',
    /\b(error|exception|traceback|stack ?trace|typeerror|segfault|npm|pip|cargo|api|sdk|regex|function|compile|python|javascript|typescript|rust|golang|java|c\+\+|sql|bash|docker|kubernetes|git)\b/,
  ],
  ['news', /\b(news|latest|today|breaking|azi|stiri|headlines|announced|release notes)\b/],
  // a bare domain or "<site> login/homepage/official site"
  ['navigational', /^(www\.)?[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}(\/\S*)?$|\b(login|sign in|homepage|official site|website)\b/],
  ['question', /^(who|what|when|where|why|which|how|is|are|can|does|do|did|should|will)\b|\?$/],
];

export function classifyIntent(query: string): SearchIntent {
  const q = query.normalize('NFKC').trim().toLowerCase().replace(/\s+/g, ' ');
  for (const [intent, rule] of RULES) if (rule.test(q)) return intent;
  return 'general';
}
