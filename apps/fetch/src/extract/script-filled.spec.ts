import { describe, expect, it } from 'vitest';
import { awaitsScript } from './script-filled.js';

describe('awaitsScript', () => {
  it.each([
    ['an empty React mount point', '<body><header>Site</header><div id="root"></div></body>'],
    ['a mount point holding a skeleton and "Loading…"', '<body><div id="__next"><div class="skeleton"></div><p>Loading article…</p></div></body>'],
    ['a hydration marker', '<body><main><h1>Title</h1><section data-hydrate="story"></section></main></body>'],
    ['an empty body slot in the main content', '<body><article><h1>Title</h1><p>A standfirst of some length.</p><div id="article-body"></div></article></body>'],
    ['an empty content slot named by class', '<body><main><div class="post-content"></div></main></body>'],
  ])('%s: yes', (_name, html) => {
    expect(awaitsScript(html)).toBe(true);
  });

  it.each([
    ['a mount point the server filled', `<body><div id="root"><article><p>${'Server-rendered text. '.repeat(10)}</p></article></div></body>`],
    ['a mount point holding a picture', '<body><div id="app"><img src="/chart.png" alt="chart"></div></body>'],
    ['an ordinary article', '<body><article><h1>T</h1><div class="article-body"><p>Text that is there.</p></div></article></body>'],
    ['an empty div outside the main content', '<body><div id="content"></div><article><p>Text.</p></article></body>'],
    ['an empty element not named as a body', '<body><main><div class="ad-slot"></div><p>Text.</p></main></body>'],
  ])('%s: no', (_name, html) => {
    expect(awaitsScript(html)).toBe(false);
  });
});
