// Tabs: a product's "Specifications", a docs page's "Yarn" and "pnpm" install commands. A reader
// sees an inactive panel by clicking its tab, so its content is the page's; but pages hide it
// (the hidden attribute, aria-hidden, display:none) and Readability drops what is hidden, and the
// tab labels, a short link-like list, were dropped as navigation, so a panel that survived lost
// the name that said what it was. Each panel found through its tab (ARIA role=tab with
// aria-controls, Bootstrap's data-bs-toggle / data-toggle with a target or #href) or marked
// role=tabpanel is shown and headed by its tab's label, and the tab list goes. Only panels are
// shown: a hidden modal, cookie banner or template is not a tab's and stays hidden.

const TAB_TOGGLE = /^(?:tab|pill)$/i;
// The markup of a tab, on the raw HTML: a page without any is spared the walk (most pages).
const TAB_HINT = /\brole\s*=\s*["']?tab|\bdata-(?:bs-)?toggle\s*=\s*["']?(?:tab|pill)\b/i;

/** Whether `html` has tabs or tab panels at all (one scan of the text). */
export const mayHoldTabs = (html: string): boolean => TAB_HINT.test(html);
// A panel's heading level when the page gives nothing better: below a section's h2.
const PANEL_HEADING = 'h3';

interface Tab {
  tab: Element;
  label: string;
  panelId: string | null;
}

/** Shows the tab panels among `elements` (one walk's list, in page order) under their labels, and removes the tab lists. */
export function revealTabPanels(elements: Element[]): void {
  const tabs: Tab[] = [];
  const panels: Element[] = [];
  for (const el of elements) {
    const role = el.getAttribute('role');
    if (role === 'tabpanel') panels.push(el);
    const toggle = el.getAttribute('data-bs-toggle') ?? el.getAttribute('data-toggle');
    if (role === 'tab' || (toggle && TAB_TOGGLE.test(toggle))) {
      const target = el.getAttribute('aria-controls') ?? idOf(el.getAttribute('data-bs-target') ?? el.getAttribute('data-target') ?? el.getAttribute('href'));
      tabs.push({ tab: el, label: squash(el.textContent ?? ''), panelId: target });
    }
  }
  if (tabs.length === 0 && panels.length === 0) return;
  const byId = new Map<string, Element>();
  for (const el of elements) {
    const id = el.getAttribute('id');
    if (id) byId.set(id, el);
  }
  // Each panel's label: its tab's, else what aria-labelledby or aria-label names.
  const labels = new Map<Element, string>();
  for (const { label, panelId } of tabs) {
    const panel = panelId ? byId.get(panelId) : undefined;
    if (panel && label) labels.set(panel, label);
  }
  for (const panel of [...panels, ...labels.keys()]) {
    if (!labels.has(panel)) {
      const by = panel.getAttribute('aria-labelledby');
      const label = by ? squash(byId.get(by)?.textContent ?? '') : squash(panel.getAttribute('aria-label') ?? '');
      if (label) labels.set(panel, label);
    }
  }
  const shown = new Set<Element>([...panels, ...labels.keys()]);
  if (shown.size < 2) return;
  for (const panel of shown) {
    show(panel);
    const label = labels.get(panel);
    if (label && !startsWithHeading(panel, label)) {
      const heading = panel.ownerDocument.createElement(PANEL_HEADING);
      heading.textContent = label;
      panel.insertBefore(heading, panel.firstChild);
    }
  }
  // The labels now head their panels: the tab strips are said once, and only if all their tabs
  // lead to a panel (a strip of tabs that navigate to other pages stays as it is).
  const strips = new Map<Element, boolean>();
  for (const { tab, panelId } of tabs) {
    const strip = tab.closest('[role="tablist"]') ?? tab.closest('ul, ol') ?? tab;
    const leads = !!panelId && byId.has(panelId) && shown.has(byId.get(panelId)!);
    strips.set(strip, (strips.get(strip) ?? true) && leads);
  }
  for (const [strip, allLead] of strips) if (allLead && ![...shown].some((panel) => strip.contains(panel))) strip.remove();
}

function idOf(ref: string | null): string | null {
  const m = ref ? /^#([^\s#]+)$/.exec(ref.trim()) : null;
  return m ? m[1]! : null;
}

/** Undoes what hides the panel itself: the hidden attribute, aria-hidden, and display:none or visibility:hidden in its style. */
function show(panel: Element): void {
  panel.removeAttribute('hidden');
  if (panel.getAttribute('aria-hidden') === 'true') panel.removeAttribute('aria-hidden');
  const style = panel.getAttribute('style');
  if (style && /display\s*:\s*none|visibility\s*:\s*hidden/i.test(style)) panel.removeAttribute('style');
}

function startsWithHeading(panel: Element, label: string): boolean {
  const first = panel.firstElementChild;
  return !!first && /^h[1-6]$/.test(first.localName) && squash(first.textContent ?? '').toLowerCase() === label.toLowerCase();
}

function squash(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
