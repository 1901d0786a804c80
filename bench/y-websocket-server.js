// y-websocket as a peer for scripts/bench (issue 7): Debian's node-y-websocket
// server code (setupWSConnection from bin/utils.js), listening on loopback.
// Usage: NODE_PATH=/usr/share/nodejs node bench/y-websocket-server.js PORT
// Prints "listening on http://127.0.0.1:PORT" once it accepts connections.
// Documents live in memory only (no YPERSISTENCE), as in y-websocket's default.
'use strict'

const http = require('http')
const WebSocket = require('ws')
const { setupWSConnection } = require('y-websocket/bin/utils')

const host = '127.0.0.1'
const port = Number(process.argv[2] || 0)

const wss = new WebSocket.Server({ noServer: true })
wss.on('connection', setupWSConnection)

const server = http.createServer((request, response) => {
  response.writeHead(200, { 'Content-Type': 'text/plain' })
  response.end('okay')
})
server.on('upgrade', (request, socket, head) => {
  wss.handleUpgrade(request, socket, head, ws => wss.emit('connection', ws, request))
})
server.listen({ host, port, backlog: 4096 }, () => {
  console.log(`listening on http://${host}:${server.address().port}`)
})

const stop = () => { server.close(); process.exit(0) }
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
