// Loads the runtime, /language-model.js, with the script tag's data- attributes taken
// from the page's query string (?data-model=/_model/&data-dtype=q8&data-boot=lazy), so
// that the pages stay static files. Load it as a classic script where the runtime's
// own tag would be: the tag goes in right after it.
{
  const runtime = document.createElement('script');
  runtime.src = '/language-model.js';
  for (const [name, value] of new URLSearchParams(location.search)) {
    if (name.startsWith('data-')) runtime.setAttribute(name, value);
  }
  runtime.async = false;
  document.currentScript.after(runtime);
}
