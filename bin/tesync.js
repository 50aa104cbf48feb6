#!/usr/bin/env node
// The installed command: runs the TypeScript sources through tsx's loader, so that
// `npm ci && npx tesync ...` works with no build step to remember.
import { register } from 'tsx/esm/api';

register();
// Started by npm (npx, npm exec, npm run: npm sets npm_lifecycle_event for what it runs): end
// with the npm process, which passes a signal on to its shell only (src/cli/parent-watch.ts).
// A direct run (a supervisor, a container) is not watched.
if (process.env.npm_lifecycle_event !== undefined) (await import('../src/cli/parent-watch.ts')).watchLauncher();
(await import('../src/cli/main.ts')).runProcess();
