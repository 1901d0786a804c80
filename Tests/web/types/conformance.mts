// The package's shipped types (web/types/panes-client.d.ts) against its implementation (the
// JavaScript behind web/panes-client.js, type-checked from its JSDoc): `tsc -p Tests/web`
// fails when either has something the other lacks, or when their types disagree. Each check
// is a constant named after what it forbids; its error names the offending exports or members
// ("Property 'x' is missing in type '{}'…").
import * as implementation from '../../../web/panes-client.js';
import type * as declared from '../../../web/types/panes-client.js';

type Implementation = typeof implementation;
type Declared = typeof declared;

/** `{}` fits it only when `Keys` is empty. */
type None<Keys extends PropertyKey> = { [K in Keys]: 'not allowed' };
type Extra<A, B> = Exclude<keyof A, keyof B>;

// Every export is declared, and every declared value is exported.
export const exportedButNotDeclared: None<Extra<Implementation, Declared>> = {};
export const declaredButNotExported: None<Extra<Declared, Implementation>> = {};
export const otExportedButNotDeclared: None<Extra<Implementation['ot'], Declared['ot']>> = {};

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
export const exportsWithoutTheirDeclaredType: None<Mismatched> = {};

// Public classes have no public members beyond the declared ones: internals are #private.
type Instance<K extends keyof Implementation> = Implementation[K] extends abstract new (...args: any) => infer I ? I : never;
export const undeclaredMembersOfPanesClient: None<Extra<Instance<'PanesClient'>, declared.PanesClient>> = {};
export const undeclaredMembersOfDocumentSession: None<Extra<Instance<'DocumentSession'>, declared.DocumentSession>> = {};
export const undeclaredMembersOfDocumentList: None<Extra<Instance<'DocumentList'>, declared.DocumentList>> = {};
export const undeclaredMembersOfTextBinding: None<Extra<Instance<'TextBinding'>, declared.TextBinding>> = {};
export const undeclaredMembersOfPanesError: None<Extra<Instance<'PanesError'>, declared.PanesError>> = {};

// Nothing "private by convention" (an `_underscored` name) in the public surface.
type Underscored<T> = Extract<keyof T, `_${string}`>;
export const underscoredExports: None<Underscored<Declared>> = {};
export const underscoredMembers: None<
  | Underscored<declared.PanesClient>
  | Underscored<declared.DocumentSession>
  | Underscored<declared.DocumentList>
  | Underscored<declared.TextBinding>
  | Underscored<declared.PanesError>
> = {};
