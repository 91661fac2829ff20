// Main-thread tasks over 50 ms, for the whole life of the page: loaded first, as a
// classic script, by every benchmark page; the harness reads window.longTasks.
window.longTasks = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.longTasks.push(entry.duration);
}).observe({ type: 'longtask', buffered: true });
