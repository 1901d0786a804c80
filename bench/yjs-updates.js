// Writes a sequence of y-websocket update messages for panes-load's yjs
// protocol (issue 7): each one inserts CHARS characters at the end of a
// Y.Text in one document, so replayed in order every message really changes
// the document and the server broadcasts it.
//
// Usage: NODE_PATH=/usr/share/nodejs node bench/yjs-updates.js COUNT CHARS OUT
// Output: repeated [u32 little-endian length][message], where a message is
// varUint(0: sync) varUint(2: update) varUint8Array(Yjs update), the frame
// y-websocket's own clients send.
'use strict'

const fs = require('fs')
const Y = require('yjs')
const encoding = require('lib0/dist/encoding.cjs')

const count = Number(process.argv[2] || 1000)
const chars = Number(process.argv[3] || 64)
const out = process.argv[4]
if (!out || !(count > 0) || !(chars > 0)) {
  console.error('usage: yjs-updates.js COUNT CHARS OUT')
  process.exit(1)
}

const doc = new Y.Doc()
const text = doc.getText('text')
const messages = []
doc.on('update', update => {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, 0) // messageSync
  encoding.writeVarUint(encoder, 2) // messageYjsUpdate
  encoding.writeVarUint8Array(encoder, update)
  messages.push(encoding.toUint8Array(encoder))
})
for (let i = 0; i < count; i++) {
  const s = String(i % 10).repeat(chars)
  text.insert(text.length, s)
}

const parts = []
for (const m of messages) {
  const len = Buffer.alloc(4)
  len.writeUInt32LE(m.length)
  parts.push(len, Buffer.from(m))
}
fs.writeFileSync(out, Buffer.concat(parts))
const sizes = messages.map(m => m.length)
console.log(JSON.stringify({ count: messages.length, chars, min_bytes: Math.min(...sizes), max_bytes: Math.max(...sizes) }))
