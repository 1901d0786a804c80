// @ts-check
/**
 * What the library's modules know about a `PanesClient` that applications do not: its
 * connection. The entry point does not export this module, and the package's `exports` map
 * keeps it from being imported by path.
 *
 * @module internal
 */

/** @typedef {import('./connection.js').Connection} Connection */
/** @typedef {import('../types/panes-client.js').PendingStore} PendingStore */

/** @type {WeakMap<object, Connection>} */
const connections = new WeakMap();

/**
 * @param {object} client
 * @param {Connection} connection
 */
export function registerConnection(client, connection) {
  connections.set(client, connection);
}

/**
 * The connection behind a `PanesClient`.
 * @param {object} client
 * @returns {Connection}
 */
export function connectionOf(client) {
  const connection = connections.get(client);
  if (!connection) throw new TypeError('panes-client: expected a PanesClient');
  return connection;
}

/** @type {WeakMap<object, PendingStore>} */
const pendingStores = new WeakMap();

/**
 * @param {object} client
 * @param {PendingStore} store
 */
export function registerPendingStore(client, store) {
  pendingStores.set(client, store);
}

/**
 * Where a `PanesClient`'s windows keep their unsent edits (`pendingStore` option).
 * @param {object} client
 * @returns {PendingStore}
 */
export function pendingStoreOf(client) {
  const store = pendingStores.get(client);
  if (!store) throw new TypeError('panes-client: expected a PanesClient');
  return store;
}
