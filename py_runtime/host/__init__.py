"""Host-side helpers for browser tests: static server, Chromium launch, WPT."""
