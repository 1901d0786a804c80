// The few Node APIs the typed example uses, for the type check only: Debian ships no
// @types/node, and nothing may be downloaded. Projects with @types/node use the real ones.
declare const process: { argv: string[]; env: Record<string, string | undefined>; exitCode?: number };
declare module 'node:module' {
  export function createRequire(path: string | URL): (id: string) => any;
}
