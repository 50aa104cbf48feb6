// tsx's register() for bin/tesync.js when register.mjs already loads the TypeScript.
export function register() {
  return async () => {};
}
