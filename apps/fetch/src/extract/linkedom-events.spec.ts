import { parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';

// patches/linkedom@0.18.15.patch also makes each node's listener map lazy (made by the first
// addEventListener instead of in every node's constructor; bench/fetch measures the gain). Nothing
// in the extractor listens to a parsed page, so this pins that events still behave as before.
describe('linkedom events (patched: listener maps made on first use)', () => {
  it('a listener added to a parsed node hears its events and those bubbling from below, until removed', () => {
    const { document, Event } = parseHTML('<html><body><main id=m><p id=p>x</p></main></body></html>');
    const main = document.getElementById('m')!;
    const p = document.getElementById('p')!;
    const heard: string[] = [];
    const onMain = (e: Event) => heard.push(`main:${e.type}:${(e.target as Element).id}`);
    main.addEventListener('ping', onMain);
    p.addEventListener('ping', (e: Event) => heard.push(`p:${e.type}`), { once: true });

    p.dispatchEvent(new Event('ping', { bubbles: true }));
    p.dispatchEvent(new Event('ping', { bubbles: true }));
    main.removeEventListener('ping', onMain);
    p.dispatchEvent(new Event('ping', { bubbles: true }));

    expect(heard).toEqual(['p:ping', 'main:ping:p', 'main:ping:p']);
  });

  it('removing or dispatching on a node that never had a listener is a no-op', () => {
    const { document, Event } = parseHTML('<html><body><p id=p>x</p></body></html>');
    const p = document.getElementById('p')!;
    expect(() => p.removeEventListener('ping', () => undefined)).not.toThrow();
    expect(p.dispatchEvent(new Event('ping', { bubbles: true }))).toBe(true);
  });
});
