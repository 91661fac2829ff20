// A small stand-in for WPT's /resources/testdriver.js.
//
// Only user-activation helpers are provided. The actual input comes from
// `window.test_driver_internal`, set up by testdriver-vendor.js.
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

  window.test_driver_internal = window.test_driver_internal ?? {
    in_automation: false,
    click() {
      return Promise.reject(new Error('test_driver_internal.click is not implemented'));
    },
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
