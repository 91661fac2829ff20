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

// A small stand-in for WPT's /resources/testdriver.js.
//
// Only user-activation helpers are provided. The actual input comes from
// `window.test_driver_internal`, set up first (some tests load this file
// without testdriver-vendor.js, which is therefore empty).
(() => {
  'use strict';

  const whenBodyReady = () => {
    if (document.body) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      document.addEventListener('DOMContentLoaded', () => resolve(), { once: true });
    });
  };

  window.test_driver = {
    /**
     * Gives the page real (transient) user activation by having the
     * automation click a temporary button; `action` runs inside its click
     * handler and the returned promise settles with its result.
     */
    async bless(intent, action, context = null) {
      await whenBodyReady();
      const button = document.createElement('button');
      button.textContent = `Bless: ${intent ?? 'user activation'}`;
      button.style.cssText = [
        'position: fixed', 'top: 0', 'left: 0', 'z-index: 2147483647',
        'width: 200px', 'height: 40px', 'margin: 0', 'display: block',
      ].join(';');
      let settle;
      const clicked = new Promise((resolve, reject) => {
        settle = { resolve, reject };
      });
      button.addEventListener('click', () => {
        try {
          settle.resolve(typeof action === 'function' ? action() : undefined);
        } catch (e) {
          settle.reject(e);
        }
      }, { once: true });
      document.body.appendChild(button);
      try {
        // A failed click rejects `done`; otherwise the handler settles first.
        const done = test_driver_internal.click(button);
        done.catch(() => {});
        await Promise.race([clicked, done]);
        return await clicked;
      } finally {
        button.remove();
      }
    },

    /** Clicks `element` with real input from the automation. */
    async click(element) {
      await whenBodyReady();
      return test_driver_internal.click(element);
    },

    /** No-op: there is only one browsing context under test. */
    set_test_context(context) {},
  };
})();
