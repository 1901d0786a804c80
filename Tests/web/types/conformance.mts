// The package's shipped types (web/types/panes-client.d.ts) against its implementation (the
// JavaScript behind web/panes-client.js, type-checked from its JSDoc): `tsc -p Tests/web`
// fails when either has something the other lacks, or when their types disagree.
import * as implementation from '../../../web/panes-client.js';
import type * as declared from '../../../web/types/panes-client.js';

type Implementation = typeof implementation;
type Declared = typeof declared;

/** Compiles only when `T` is `never`: names the keys in the error when it is not. */
function none<T extends never>(): T | undefined {
  return undefined;
}

// Every export is declared, and every declared value is exported.
none<Exclude<keyof Implementation, keyof Declared>>();
none<Exclude<keyof Declared, keyof Implementation>>();
none<Exclude<keyof Implementation['ot'], keyof Declared['ot']>>();

// Every export has its declared type: constants and namespaces as they are; functions and
// classes by their parameters (compared both ways: a declared class and its implementation
// differ in their #private fields, which make classes nominal) and their result or instance
// type (every declared member, with its type).
type Loose<T> = T extends abstract new (...args: infer A) => infer I
  ? { check(...args: A): I }['check']
  : T extends (...args: infer A) => infer R
    ? { check(...args: A): R }['check']
    : T;
type Mismatched = {
  [K in keyof Declared & keyof Implementation]: [Loose<Implementation[K]>] extends [Loose<Declared[K]>] ? never : K;
}[keyof Declared & keyof Implementation];
none<Mismatched>();

// Public classes have no public members beyond the declared ones: internals are #private.
none<Exclude<keyof InstanceType<Implementation['PanesClient']>, keyof declared.PanesClient>>();
none<Exclude<keyof InstanceType<Implementation['DocumentSession']>, keyof declared.DocumentSession>>();
none<Exclude<keyof InstanceType<Implementation['DocumentList']>, keyof declared.DocumentList>>();
none<Exclude<keyof InstanceType<Implementation['TextBinding']>, keyof declared.TextBinding>>();
none<Exclude<keyof InstanceType<Implementation['PanesError']>, keyof declared.PanesError>>();

// No declared member starts with `_` (nothing "private by convention" in the public surface).
type Underscored<T> = Extract<keyof T, `_${string}`>;
none<Underscored<declared.PanesClient>>();
none<Underscored<declared.DocumentSession>>();
none<Underscored<declared.DocumentList>>();
none<Underscored<declared.TextBinding>>();
none<Underscored<Declared>>();
