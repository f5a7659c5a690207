// The devtools panel (task-projection/devtools/dom) in headless Chromium (Debian's, via
// playwright-core), on tests/js/browser/devtools.html: the development build and the panel served
// from /pkg/ as an app gets them. Keyboard only (Tab, Enter, Space, arrows, Escape, with a visible
// focus), a 390×844 phone (a full-width sheet, no horizontal overflow, the explanation in place of
// the list), the page's styles kept out and the panel's kept in (real CSS), and a store of 10,000
// sessions: opening, scrolling, paging and filtering timed (printed, with the machine's load).
// Screenshots: tests/artifacts/devtools/ (docs/devtools.png is devtools-panel.png, the panel at 1280×800).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startStaticServer } from '../../scripts/serve.mjs';
import { launchChromium, watchPage } from './browser.mjs';

const artifacts = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../artifacts/devtools');
fs.mkdirSync(artifacts, { recursive: true });
let server;
let browser;

before(async () => {
  server = await startStaticServer();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** A fresh page of the panel at `viewport`, with `query`; checks it reported no problem at the end. */
async function openPage(viewport, query = '', file = 'devtools.html') {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(`${server.url}/tests/js/browser/${file}${query}`);
  await page.waitForFunction(() => window.ready === true, null, { timeout: 60_000 });
  return {
    page,
    async close() {
      assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
      await context.close();
    },
  };
}

/** What has the focus: `{ tag, id, testid, text }` of the shadow root's active element. */
const focused = (page) => page.evaluate(() => {
  const host = document.activeElement;
  const el = host?.shadowRoot?.activeElement ?? host;
  return el ? { tag: el.localName, id: el.dataset?.id ?? el.id ?? '', testid: el.dataset?.testid ?? '', role: el.getAttribute('role') ?? '', outline: getComputedStyle(el).outlineStyle } : null;
});

describe('keyboard', () => {
  test('Tab to the toggle, Enter opens; arrows move between tabs and rows; Enter or Space opens a row; Escape closes the row, then the panel', async () => {
    const { page, close } = await openPage({ width: 1280, height: 800 });
    await page.keyboard.press('Tab'); // the page's own button
    await page.keyboard.press('Tab');
    assert.deepEqual(await focused(page).then((f) => f.tag + f.outline), 'buttonsolid', 'the toggle, with a visible focus');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => window.devtools.panel.isOpen()), true);
    let f = await focused(page);
    assert.deepEqual([f.role, f.id], ['tab', 'tp-tab-sessions']);
    await page.keyboard.press('ArrowRight');
    assert.equal((await focused(page)).id, 'tp-tab-tasks');
    assert.equal(await page.evaluate(() => window.devtools.panel.host.shadowRoot.querySelector('button.row').dataset.id), 'task-1');
    await page.keyboard.press('ArrowLeft');
    assert.equal((await focused(page)).id, 'tp-tab-sessions');
    await page.keyboard.press('Tab');
    assert.equal((await focused(page)).testid, 'filter');
    await page.keyboard.press('Tab');
    f = await focused(page);
    assert.deepEqual([f.id, f.outline], ['sess-1', 'solid'], 'the first row, with a visible focus');
    await page.keyboard.press('ArrowDown');
    assert.equal((await focused(page)).id, 'sess-2');
    await page.keyboard.press('Enter');
    f = await focused(page);
    assert.deepEqual([f.tag, f.id], ['h3', 'sess-2'], 'Enter opened the row; its explanation has the focus');
    await page.keyboard.press('Escape');
    assert.equal((await focused(page)).id, 'sess-2', 'Escape: back on the row');
    assert.match(await page.evaluate(() => window.devtools.panel.host.shadowRoot.querySelector('[data-testid="detail"]').textContent), /^Choose a session/);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press(' ');
    f = await focused(page);
    assert.deepEqual([f.tag, f.id], ['h3', 'sess-3'], 'Space opens a row too');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Escape');
    assert.equal(await page.evaluate(() => window.devtools.panel.isOpen()), false);
    f = await focused(page);
    assert.equal(f.testid + f.tag, 'button', 'the focus is back on the toggle');
    assert.equal(await page.evaluate(() => window.devtools.panel.host.shadowRoot.activeElement?.className), 'toggle');
    await close();
  });
});

describe('layout', () => {
  test('1280×800: the panel beside the toggle, list and explanation side by side (screenshot)', async () => {
    const { page, close } = await openPage({ width: 1280, height: 800 }, '?trace');
    await page.evaluate(() => window.devtools.panel.open());
    await page.locator('button.row[data-id="sess-1"]').click(); // a mouse click (playwright pierces the open shadow root)
    assert.equal(await page.evaluate(() => window.devtools.panel.host.shadowRoot.querySelector('[data-testid="detail"] h3').dataset.id), 'sess-1');
    const box = await page.evaluate(() => {
      const r = window.devtools.panel.host.shadowRoot.querySelector('.panel').getBoundingClientRect();
      const list = window.devtools.panel.host.shadowRoot.querySelector('.list-pane').getBoundingClientRect();
      const detail = window.devtools.panel.host.shadowRoot.querySelector('.detail').getBoundingClientRect();
      return { left: r.left, right: r.right, bottom: r.bottom, listRight: list.right, detailLeft: detail.left, detailWidth: detail.width };
    });
    assert.ok(box.right <= 1280 - 8 && box.left >= 8 && box.bottom <= 800 - 8, JSON.stringify(box));
    assert.ok(box.detailLeft >= box.listRight - 1 && box.detailWidth > 200, `side by side: ${JSON.stringify(box)}`);
    await page.screenshot({ path: path.join(artifacts, 'devtools-1280x800.png') });
    // The panel and its toggle alone (docs/devtools.png is a copy of it).
    const x = Math.floor(box.left) - 16;
    const y = Math.floor(await page.evaluate(() => window.devtools.panel.host.shadowRoot.querySelector('.panel').getBoundingClientRect().top)) - 16;
    await page.screenshot({ path: path.join(artifacts, 'devtools-panel.png'), clip: { x, y, width: 1280 - x, height: 800 - y } });
    await close();
  });

  test('390×844: a full-width sheet, no horizontal overflow; the explanation replaces the list, and back (screenshots)', async () => {
    const { page, close } = await openPage({ width: 390, height: 844 }, '?trace');
    await page.evaluate(() => window.devtools.panel.host.shadowRoot.querySelector('.toggle').click());
    const sheet = () => page.evaluate(() => {
      const shadow = window.devtools.panel.host.shadowRoot;
      const p = shadow.querySelector('.panel');
      const r = p.getBoundingClientRect();
      const visible = (sel) => {
        const el = shadow.querySelector(sel);
        return el !== null && el.getClientRects().length > 0;
      };
      const overflowing = [...shadow.querySelectorAll('.panel *')].filter((el) => el.getBoundingClientRect().right > 390.5).map((el) => el.className || el.localName);
      return { left: r.left, width: r.width, bottom: r.bottom, top: r.top, scroll: p.scrollWidth - p.clientWidth, overflowing, list: visible('.list-pane'), detail: visible('.detail'), toggle: visible('.toggle'), back: visible('.back') };
    });
    let s = await sheet();
    assert.deepEqual([s.left, s.width, s.bottom], [0, 390, 844], JSON.stringify(s));
    assert.ok(s.top > 844 * 0.1 && s.top < 844 * 0.2, `88% of the height: top ${s.top}`);
    assert.equal(s.scroll, 0, 'no horizontal scroll');
    assert.deepEqual(s.overflowing, [], 'nothing past the right edge');
    assert.deepEqual([s.list, s.detail, s.toggle], [true, false, false], 'the list; the toggle hidden under the sheet');
    await page.screenshot({ path: path.join(artifacts, 'devtools-390x844-list.png') });
    await page.evaluate(() => window.devtools.panel.host.shadowRoot.querySelector('button.row[data-id="sess-1"]').click());
    s = await sheet();
    assert.deepEqual([s.list, s.detail, s.back], [false, true, true], 'the explanation in place of the list');
    assert.deepEqual(s.overflowing, [], 'nothing past the right edge');
    await page.screenshot({ path: path.join(artifacts, 'devtools-390x844-explanation.png') });
    await page.evaluate(() => window.devtools.panel.host.shadowRoot.querySelector('.back').click());
    s = await sheet();
    assert.deepEqual([s.list, s.detail], [true, false]);
    await close();
  });
});

describe('isolation (real CSS)', () => {
  test('the page\'s styles do not reach the panel, the panel\'s do not reach the page', async () => {
    const { page, close } = await openPage({ width: 1280, height: 800 }, '?hostile');
    await page.evaluate(() => window.devtools.panel.open());
    const styles = await page.evaluate(() => {
      const shadow = window.devtools.panel.host.shadowRoot;
      const css = (el) => {
        const c = getComputedStyle(el);
        return { display: c.display, color: c.color, fontSize: c.fontSize, position: c.position, fontFamily: c.fontFamily };
      };
      return {
        toggle: css(shadow.querySelector('.toggle')),
        row: css(shadow.querySelector('button.row')),
        pagePanel: css(document.getElementById('page-panel')),
        pageToggle: css(document.getElementById('page-toggle')),
        pageText: css(document.querySelector('h1')),
      };
    });
    assert.equal(styles.pageText.color, 'rgb(255, 0, 0)', 'the hostile styles apply to the page');
    assert.equal(styles.pageToggle.display, 'none');
    for (const el of [styles.toggle, styles.row]) {
      assert.notEqual(el.display, 'none');
      assert.notEqual(el.color, 'rgb(255, 0, 0)');
      assert.notEqual(el.fontSize, '30px');
      assert.doesNotMatch(el.fontFamily, /^serif$/);
    }
    assert.equal(styles.toggle.position, 'fixed');
    assert.equal(styles.pagePanel.position, 'static', 'the panel\'s .panel rule stays in its shadow root');
    await close();
  });
});

describe('a Content-Security-Policy without inline styles', () => {
  test('the panel is styled (a constructed stylesheet, styles set through the CSSOM), and nothing is refused', async () => {
    const { page, close } = await openPage({ width: 1280, height: 800 }, '', 'devtools-csp.html');
    const refused = [];
    await page.exposeFunction('refused', (what) => refused.push(what));
    await page.evaluate(() => document.addEventListener('securitypolicyviolation', (e) => window.refused(`${e.violatedDirective}: ${e.sample}`)));
    await page.evaluate(() => window.devtools.open());
    const styles = await page.evaluate(() => {
      const { host } = window.devtools.panel;
      const shadow = host.shadowRoot;
      const css = (el) => {
        const c = getComputedStyle(el);
        return { position: c.position, radius: c.borderTopLeftRadius, top: c.top };
      };
      return { host: css(host), toggle: css(shadow.querySelector('.toggle')), panel: css(shadow.querySelector('.panel')), row: css(shadow.querySelector('ul.rows > li:nth-child(2)')) };
    });
    assert.equal(styles.host.position, 'fixed', 'the host\'s own style');
    assert.equal(styles.toggle.position, 'fixed', 'the shadow root\'s stylesheet');
    assert.equal(styles.panel.position, 'fixed');
    assert.equal(styles.panel.radius, '10px');
    assert.equal(styles.row.position, 'absolute');
    assert.equal(styles.row.top, '52px', 'a row\'s place, set through the CSSOM');
    assert.deepEqual(refused, [], 'the browser refused no style');
    await page.screenshot({ path: path.join(artifacts, 'devtools-csp.png') });
    await close(); // (and no console error: a refused style logs one)
  });
});

describe('10,000 sessions', () => {
  test('opening, scrolling, paging and filtering stay responsive (timed)', async () => {
    const { page, close } = await openPage({ width: 1280, height: 800 }, '?sessions=10000');
    const opened = await page.evaluate(() => window.devtools.open());
    assert.equal(await page.evaluate(() => window.devtools.panel.host.shadowRoot.querySelector('[data-testid="count"]').textContent), '10,004 sessions');
    assert.ok(opened.rows > 5 && opened.rows < 60, `${opened.rows} rows in the DOM`);
    const scrolls = [];
    for (const index of [5000, 9990, 120, 7777, 2500, 10_003, 0, 4321, 8888, 333]) {
      const r = await page.evaluate((i) => window.devtools.scrollTo(i), index);
      assert.ok(r.drawn, `row ${index} drawn after the scroll`);
      scrolls.push(r.ms);
    }
    const domRows = await page.evaluate(() => window.devtools.panel.host.shadowRoot.querySelectorAll('button.row').length);
    assert.ok(domRows < 60, `${domRows} rows in the DOM after scrolling`);
    // Paging with the keyboard: PageDown 20 times from the first row.
    const paged = await page.evaluate(async () => {
      const shadow = window.devtools.panel.host.shadowRoot;
      shadow.querySelector('.scroller').scrollTop = 0;
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      shadow.querySelector('button.row').focus();
      const t0 = performance.now();
      for (let i = 0; i < 20; i++) shadow.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key: 'PageDown', bubbles: true }));
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      return { ms: (performance.now() - t0) / 20, at: Number(shadow.activeElement.dataset.index) };
    });
    assert.ok(paged.at > 100, `paged down to row ${paged.at}`);
    const filtered = await page.evaluate(() => window.devtools.filter('sess-0999'));
    assert.equal(filtered.count, '10 of 10,004 sessions');
    const cleared = await page.evaluate(() => window.devtools.filter(''));
    // The once-a-second refresh of an open panel on this store.
    const tick = await page.evaluate(async () => {
      const t0 = performance.now();
      window.devtools.panel.open();
      return performance.now() - t0;
    });
    const sorted = [...scrolls].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    const line = `open ${opened.call.toFixed(1)} ms (call) / ${opened.frame.toFixed(1)} ms (to the next frame); scroll to a row: median ${median.toFixed(1)} ms, max ${sorted.at(-1).toFixed(1)} ms (a frame included); PageDown ${paged.ms.toFixed(1)} ms each; filter ${filtered.ms.toFixed(1)} ms, cleared ${cleared.ms.toFixed(1)} ms; a refresh ${tick.toFixed(1)} ms`;
    console.log(`# devtools, 10,004 sessions in Chromium: ${line}; ${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    fs.writeFileSync(path.join(artifacts, 'timings.txt'), `${new Date().toISOString()} ${line}; ${os.cpus().length} cores (${os.cpus()[0]?.model}), load ${os.loadavg().join(' ')}\n`);
    // Generous bounds (a loaded CI machine), each far below what a non-virtualized list takes.
    assert.ok(opened.frame < 2000, `open took ${opened.frame} ms`);
    assert.ok(median < 200 && sorted.at(-1) < 1000, `scrolls ${sorted.join(', ')}`);
    assert.ok(filtered.ms < 1000, `filter took ${filtered.ms} ms`);
    await close();
  });
});
