// Writes E editors' own y-websocket update messages for panes-load's `docs`
// workload over the yjs protocol (issue 5): editor i has a Y.Doc with client
// id i+1 and types K characters into the shared Y.Text "text", each after its
// own previous one. Each update therefore depends only on the same editor's
// earlier updates, so the server can integrate the editors' streams in any
// interleaving, as it would real concurrent typists'. A received update names
// its author and edit by its first struct's client id and clock.
//
// Usage: NODE_PATH=/usr/share/nodejs node scripts/bench_lib/yjs_editors.js E K OUT
// Output: editor after editor, K messages each, every one as
// [u32 little-endian length][varUint(0: sync) varUint(2: update) varUint8Array(update)].
'use strict'

const fs = require('fs')
const Y = require('yjs')
const encoding = require('lib0/dist/encoding.cjs')

const editors = Number(process.argv[2])
const per = Number(process.argv[3])
const out = process.argv[4]
if (!out || !(editors > 0) || !(per > 0)) {
  console.error('usage: yjs_editors.js EDITORS UPDATES_PER_EDITOR OUT')
  process.exit(1)
}

const parts = []
let bytes = 0
for (let e = 0; e < editors; e++) {
  const doc = new Y.Doc()
  doc.clientID = e + 1
  const text = doc.getText('text')
  const mine = []
  doc.on('update', update => {
    const encoder = encoding.createEncoder()
    encoding.writeVarUint(encoder, 0) // messageSync
    encoding.writeVarUint(encoder, 2) // messageYjsUpdate
    encoding.writeVarUint8Array(encoder, update)
    mine.push(encoding.toUint8Array(encoder))
  })
  const ch = String.fromCharCode(97 + (e % 26))
  for (let k = 0; k < per; k++) text.insert(text.length, ch)
  if (mine.length !== per) {
    console.error(`editor ${e}: ${mine.length} updates, expected ${per}`)
    process.exit(1)
  }
  for (const m of mine) {
    const len = Buffer.alloc(4)
    len.writeUInt32LE(m.length)
    parts.push(len, Buffer.from(m))
    bytes += m.length
  }
}
fs.writeFileSync(out, Buffer.concat(parts))
console.log(JSON.stringify({ editors, per_editor: per, mean_bytes: Math.round(bytes / (editors * per)) }))
