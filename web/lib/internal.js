// @ts-check
/**
 * What the library's modules know about a `PanesClient` that applications do not: its
 * connection. The entry point does not export this module, and the package's `exports` map
 * keeps it from being imported by path.
 *
 * @module internal
 */

/** @typedef {import('./connection.js').Connection} Connection */

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
