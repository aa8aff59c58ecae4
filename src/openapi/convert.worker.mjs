// Entry of the description worker when the service runs from its TypeScript sources (tsx, vitest):
// a worker thread inherits no loader that vitest set up, so it registers tsx, then loads the
// TypeScript entry. The compiled service (dist/) starts convert.worker.js directly instead.
import { URL } from 'node:url';
import { register } from 'tsx/esm/api';

register();
await import(new URL('./convert.worker.ts', import.meta.url).href);
