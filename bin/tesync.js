#!/usr/bin/env node
// The installed command: runs the TypeScript sources through tsx's loader, so that
// `npm ci && npx tesync ...` works with no build step to remember.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
