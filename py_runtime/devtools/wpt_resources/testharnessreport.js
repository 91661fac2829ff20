// Reports testharness.js results to the automation as plain JSON.
//
// Once the harness completes, `window.__wptResults` is set and logged with
// console.debug('__wptresults__' + JSON):
//   {status, message, tests: [{name, status, message}]}
// with statuses as strings (PASS/FAIL/TIMEOUT/NOTRUN/PRECONDITION_FAILED;
// harness: OK/ERROR/TIMEOUT/PRECONDITION_FAILED). If the harness never
// completes, `window.__wptSnapshot()` gives the subtests known so far.
(() => {
  'use strict';

  const TEST_STATUS = ['PASS', 'FAIL', 'TIMEOUT', 'NOTRUN', 'PRECONDITION_FAILED'];
  const HARNESS_STATUS = ['OK', 'ERROR', 'TIMEOUT', 'PRECONDITION_FAILED'];

  const text = (value) => (value === undefined || value === null ? '' : String(value));

  const summarizeTest = (test) => ({
    name: text(test.name),
    status: TEST_STATUS[test.status] ?? `UNKNOWN(${test.status})`,
    message: text(test.message),
  });

  const known = [];
  add_test_state_callback((test) => {
    if (!known.includes(test)) {
      known.push(test);
    }
  });

  window.__wptSnapshot = () => known.map((test) => {
    if (test.phase >= test.phases.HAS_RESULT) {
      return summarizeTest(test);
    }
    const started = test.phase >= test.phases.STARTED;
    return {
      name: text(test.name),
      status: started ? 'TIMEOUT' : 'NOTRUN',
      message: 'the harness did not complete',
    };
  });

  add_completion_callback((tests, harnessStatus) => {
    window.__wptResults = {
      status: HARNESS_STATUS[harnessStatus.status] ?? `UNKNOWN(${harnessStatus.status})`,
      message: text(harnessStatus.message),
      tests: tests.map(summarizeTest),
    };
    // Read by py_runtime.wpt without evaluating script in the page.
    console.debug('__wptresults__' + JSON.stringify({ ...window.__wptResults, url: location.href }));
  });
})();
