// Loaded with `--import` into every `tesync` process a test starts (childEnv in ../cli.ts puts
// it in NODE_OPTIONS): TypeScript compiled once per file content and kept, in place of the tsx
// loader that bin/tesync.js registers. The tests start hundreds of these processes, and each
// spent 1.2 s of CPU loading the sources through tsx against 0.75 s through this loader
// (docs/performance.md, "Issue 57"). Source maps on, as tsx has them: stack traces name the
// TypeScript lines.
import { register } from 'node:module';

process.setSourceMapsEnabled(true);
register(new URL('./hooks.mjs', import.meta.url), { data: { bin: new URL('../../../bin/tesync.js', import.meta.url).href } });
