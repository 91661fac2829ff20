// Vendor part of the test driver: clicks are done by the automation with
// real input (Playwright's `page.click()`).
//
// Protocol. The page announces a request `{id, selector}` in two ways:
// it pushes `{id, selector, taken: false}` onto `window.__testdriverQueue`
// (for automations that poll) and logs `__testdriver__` + JSON with
// `console.debug` with `url: location.href` (what py_runtime.wpt reads: unlike evaluating script
// in the page, which Playwright does with a user gesture, reading the
// console gives the page no activation). The request succeeds when the
// element receives the click; the automation reports a failed click with
// `window.__testdriverDone(id, message)`.
(() => {
  'use strict';

  const PREFIX = '__testdriver__';
  const queue = (window.__testdriverQueue = window.__testdriverQueue ?? []);
  const pending = new Map();
  let nextId = 1;

  const finish = (id, error) => {
    const entry = pending.get(id);
    if (!entry) {
      return;
    }
    pending.delete(id);
    entry.element.removeEventListener('click', entry.onClick, { capture: true });
    entry.element.removeAttribute('data-testdriver-target');
    if (error) {
      entry.reject(new Error(`test_driver click failed: ${error}`));
    } else {
      entry.resolve();
    }
  };

  window.__testdriverDone = (id, error = null) => finish(id, error);

  window.test_driver_internal = {
    in_automation: true,
    click(element) {
      if (!(element instanceof Element) || !element.isConnected) {
        return Promise.reject(new Error('test_driver.click needs an element in the document'));
      }
      const id = nextId++;
      const selector = `[data-testdriver-target="${id}"]`;
      element.setAttribute('data-testdriver-target', String(id));
      return new Promise((resolve, reject) => {
        // Capture on the target runs before the page's own click handlers;
        // settle in a later task so that those have run by then.
        const onClick = () => setTimeout(() => finish(id, null), 0);
        element.addEventListener('click', onClick, { capture: true });
        pending.set(id, { element, onClick, resolve, reject });
        queue.push({ id, selector, taken: false });
        console.debug(PREFIX + JSON.stringify({ type: 'click', id, selector, url: location.href }));
      });
    },
  };
})();
