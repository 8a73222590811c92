// The facts a page declares in schema.org JSON-LD that its visible text may not show: a product's
// price and availability (often written into the page by a script), a recipe's ingredients, steps
// and times (a recipe card rendered client-side, or dropped by Readability beside the story), an
// article's author and date, an FAQ's questions and answers. Studied from how trafilatura and
// extruct read JSON-LD (@graph, arrays, nested mainEntity); what is read here is only ever added
// where the extracted text lacks it, in a short block after it, and every step is bounded: the
// JSON-LD is the page author's, and so possibly hostile (megabytes, deep nesting, not JSON).

// A script above this size is skipped unread, and no more than this is parsed per page.
const MAX_SCRIPT_CHARS = 512 * 1024;
const MAX_TOTAL_CHARS = 2 * 1024 * 1024;
const MAX_SCRIPTS = 32;
// How deep and how many nodes the walk looks at in all (a @graph of 100,000 items is cut here).
const MAX_DEPTH = 10;
const MAX_NODES = 5_000;
// Output bounds: a value, a list, and the whole block.
const MAX_VALUE_CHARS = 400;
const MAX_ITEMS = 50;
const MAX_BLOCK_CHARS = 6_000;

/** JSON-LD scripts among `scripts`, parsed; a malformed or oversized one is skipped. */
export function parseLdScripts(scripts: Element[]): unknown[] {
  const out: unknown[] = [];
  let budget = MAX_TOTAL_CHARS;
  for (const script of scripts) {
    if (out.length >= MAX_SCRIPTS) break;
    if (!/^\s*application\/ld\+json\s*$/i.test(script.getAttribute('type') ?? '')) continue;
    const text = script.textContent ?? '';
    if (text.length > MAX_SCRIPT_CHARS || text.length > budget) continue;
    budget -= text.length;
    try {
      out.push(JSON.parse(text));
    } catch {
      // Not JSON (or nested past the parser's stack): nothing declared.
    }
  }
  return out;
}

type LdNode = Record<string, unknown>;

/** Every object node of the JSON-LD documents, breadth first, within the depth and node bounds. */
function ldNodes(docs: unknown[]): LdNode[] {
  const out: LdNode[] = [];
  const queue: [unknown, number][] = docs.map((d) => [d, 0]);
  let visited = 0;
  for (let i = 0; i < queue.length && visited < MAX_NODES; i++) {
    const [value, depth] = queue[i]!;
    if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) continue;
    visited++;
    if (Array.isArray(value)) {
      for (const v of value.slice(0, MAX_NODES)) queue.push([v, depth + 1]);
      continue;
    }
    const node = value as LdNode;
    out.push(node);
    for (const key of ['@graph', 'mainEntity', 'mainEntityOfPage', 'itemListElement', 'hasPart', 'about']) if (node[key] !== undefined) queue.push([node[key], depth + 1]);
  }
  return out;
}

const typesOf = (node: LdNode): string[] => {
  const t = node['@type'];
  const list = Array.isArray(t) ? t : [t];
  return list.filter((x): x is string => typeof x === 'string').map((x) => x.replace(/^.*[/#:]/, '').toLowerCase());
};
const isType = (node: LdNode, test: (type: string) => boolean) => typesOf(node).some(test);

/** A value as one line of text: strings, numbers, or a node's name/text; HTML tags and entities the page left in taken out. */
function textOf(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'string') {
    const text = value
      .replace(/<[^>]{0,200}>/g, ' ')
      .replace(/&nbsp;/g, ' ')
      .replace(/&amp;/g, '&')
      .replace(/\s+/g, ' ')
      .trim();
    return text ? text.slice(0, MAX_VALUE_CHARS) : null;
  }
  if (Array.isArray(value)) return textOf(value[0]);
  if (value && typeof value === 'object') {
    const node = value as LdNode;
    return textOf(node.name ?? node.text ?? node['@value']);
  }
  return null;
}

const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value.slice(0, MAX_ITEMS) : value === undefined || value === null ? [] : [value]);

/** "PT1H30M" → "1 h 30 min"; anything else as written. */
export function readableDuration(value: unknown): string | null {
  const text = textOf(value);
  if (!text) return null;
  const m = /^P(?:(\d+)D)?T?(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$/i.exec(text);
  if (!m || !m.slice(1).some(Boolean)) return text;
  const [, d, h, min] = m;
  const parts = [d && Number(d) ? `${Number(d)} d` : '', h && Number(h) ? `${Number(h)} h` : '', min && Number(min) ? `${Number(min)} min` : ''].filter(Boolean);
  return parts.length ? parts.join(' ') : null;
}

/** "https://schema.org/InStock" → "in stock". */
function readableEnum(value: unknown): string | null {
  const text = textOf(value);
  if (!text) return null;
  return text
    .replace(/^.*[/#:]/, '')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
}

function authorNames(value: unknown): string | null {
  const names = listOf(value)
    .map((a) => textOf(a))
    .filter((n): n is string => !!n);
  return names.length ? names.join(', ') : null;
}

export interface LdFacts {
  /** Lines of the facts block, in markdown, each a fact the visible text lacks. */
  lines: string[];
  /** An article's author, for the result's byline when the page gives none elsewhere. */
  author: string | null;
}

/**
 * The facts of the JSON-LD `docs` that `visibleText` (the extracted markdown) does not already
 * hold, as markdown lines. A fact counts as shown when its value appears in the text (a price's
 * amount, an ingredient, a question), compared with spaces squashed and case folded.
 */
export function factsNotShown(docs: unknown[], visibleText: string): LdFacts {
  const shown = fold(visibleText);
  const has = (value: string) => shown.includes(fold(value));
  const lines: string[] = [];
  let author: string | null = null;
  const seen = new Set<string>();
  const add = (line: string) => {
    if (!seen.has(line)) lines.push(line);
    seen.add(line);
  };
  for (const node of ldNodes(docs)) {
    if (isType(node, (t) => t === 'product' || t === 'productgroup' || t === 'individualproduct' || t === 'vehicle' || t === 'book')) productFacts(node, has, shown, add);
    else if (isType(node, (t) => t === 'recipe')) recipeFacts(node, has, add);
    else if (isType(node, (t) => t.endsWith('article') || t === 'blogposting' || t === 'report' || t === 'discussionforumposting')) {
      author ??= authorNames(node.author);
      const date = textOf(node.datePublished);
      if (date && !has(date) && /^\d{4}-\d\d-\d\d/.test(date)) add(`- Published: ${date.slice(0, 10)}`);
    } else if (isType(node, (t) => t === 'faqpage')) faqFacts(node, has, add);
  }
  return { lines: capped(lines), author };
}

type Has = (value: string) => boolean;
type Add = (line: string) => void;

function productFacts(node: LdNode, has: Has, shown: string, add: Add): void {
  for (const offer of listOf(node.offers).slice(0, 3)) {
    if (!offer || typeof offer !== 'object') continue;
    const o = offer as LdNode;
    const spec = (o.priceSpecification && typeof o.priceSpecification === 'object' ? o.priceSpecification : {}) as LdNode;
    const currency = textOf(o.priceCurrency ?? spec.priceCurrency) ?? '';
    const price = textOf(o.price ?? spec.price);
    const low = textOf(o.lowPrice);
    const high = textOf(o.highPrice);
    const amount = price ?? (low && high ? `${low}–${high}` : low);
    if (amount && !amountShown(amount, shown)) add(`- Price: ${amount}${currency ? ` ${currency}` : ''}`);
    const availability = readableEnum(o.availability);
    if (availability && !has(availability)) add(`- Availability: ${availability}`);
  }
  const brand = textOf(node.brand);
  if (brand && !has(brand)) add(`- Brand: ${brand}`);
  const rating = node.aggregateRating as LdNode | undefined;
  if (rating && typeof rating === 'object') {
    const value = textOf(rating.ratingValue);
    const best = textOf(rating.bestRating) ?? '5';
    const count = textOf(rating.reviewCount ?? rating.ratingCount);
    if (value && !has(`${value} out of`) && !has(`${value}/${best}`) && !has(`${value} / ${best}`)) add(`- Rating: ${value} / ${best}${count ? ` (${count} reviews)` : ''}`);
  }
}

/**
 * A price is shown when its amount is in the text as a number of its own, as written or with its
 * decimals (129 / 129.00 / 129,00), not as part of another ("1" in "100% merino").
 */
function amountShown(amount: string, shown: string): boolean {
  // Anything but a plain number ("Free", a range) is looked for as written.
  if (!/^\d+(?:[.,]\d+)?$/.test(amount)) return shown.includes(fold(amount));
  const whole = amount.replace(/[.,]0+$/, '');
  const digits = whole.replace(/[.,]/g, '[.,]');
  return new RegExp(`(?<![\\d.,])${digits}(?:[.,]0+)?(?![\\d])`).test(shown);
}

function recipeFacts(node: LdNode, has: Has, add: Add): void {
  for (const [label, key] of [
    ['Prep time', 'prepTime'],
    ['Cook time', 'cookTime'],
    ['Total time', 'totalTime'],
  ] as const) {
    const time = readableDuration(node[key]);
    if (time && !has(`${label}: ${time}`)) add(`- ${label}: ${time}`);
  }
  // A yield given twice ("4", "4 servings"): the one with words.
  const yields = textOf(listOf(node.recipeYield).find((y) => typeof y === 'string' && /\p{L}/u.test(y)) ?? node.recipeYield);
  if (yields && !has(yields)) add(`- Yield: ${yields}`);
  const ingredients = listOf(node.recipeIngredient ?? node.ingredients)
    .map(textOf)
    .filter((t): t is string => !!t);
  // The list as a whole: when most of it is in the text, the text has it.
  if (ingredients.length && ingredients.filter(has).length < ingredients.length * 0.6) {
    add('- Ingredients:');
    for (const ingredient of ingredients) add(`  - ${ingredient}`);
  }
  const steps = recipeSteps(node.recipeInstructions);
  if (steps.length && steps.filter((s) => has(s.slice(0, 60))).length < steps.length * 0.6) {
    add('- Steps:');
    steps.forEach((step, i) => add(`  ${i + 1}. ${step}`));
  }
}

/** Instructions as steps: a string (one or several lines), HowToStep texts, or HowToSections of them. */
function recipeSteps(value: unknown): string[] {
  const out: string[] = [];
  const visit = (v: unknown, depth: number) => {
    if (out.length >= MAX_ITEMS || depth > 3) return;
    if (typeof v === 'string') {
      for (const line of v.split(/\n+|<\/?(?:p|li|br)\s*\/?>/i)) {
        const text = textOf(line);
        if (text) out.push(text);
      }
    } else if (Array.isArray(v)) {
      for (const x of v.slice(0, MAX_ITEMS)) visit(x, depth + 1);
    } else if (v && typeof v === 'object') {
      const node = v as LdNode;
      if (node.itemListElement !== undefined) visit(node.itemListElement, depth + 1);
      else {
        const text = textOf(node.text ?? node.name);
        if (text) out.push(text);
      }
    }
  };
  visit(value, 0);
  return out;
}

function faqFacts(node: LdNode, has: Has, add: Add): void {
  for (const q of listOf(node.mainEntity)) {
    if (!q || typeof q !== 'object') continue;
    const question = textOf((q as LdNode).name);
    const answer = textOf((q as LdNode).acceptedAnswer);
    if (question && answer && !has(question)) add(`- **${question}** ${answer}`);
  }
}

function capped(lines: string[]): string[] {
  const out: string[] = [];
  let used = 0;
  for (const line of lines) {
    if (used + line.length > MAX_BLOCK_CHARS) {
      out.push('- (more structured data on the page, cut here)');
      break;
    }
    out.push(line);
    used += line.length + 1;
  }
  return out;
}

function fold(s: string): string {
  return s.replace(/[\s\u00a0]+/g, ' ').toLowerCase();
}
