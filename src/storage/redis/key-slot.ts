/**
 * The Redis Cluster slot of a key or channel name: CRC16 (XMODEM) of its hash tag — the text
 * between the first `{` and the next `}` when that is not empty — or of the whole name, modulo
 * 16,384. Used to send a wake-up channel's `SUBSCRIBE` to the node that serves its key
 * (docs/decisions/137).
 *
 * @module
 */

/** The number of slots of a Redis Cluster. */
export const CLUSTER_SLOTS = 16_384;

const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[byte] = crc;
  }
  return table;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc;
}

const encoder = new TextEncoder();

/** The cluster slot of `name` (a key or a channel), by its hash tag when it has one. */
export function keySlot(name: string): number {
  const open = name.indexOf('{');
  if (open >= 0) {
    const close = name.indexOf('}', open + 1);
    if (close > open + 1) name = name.slice(open + 1, close);
  }
  return crc16(encoder.encode(name)) % CLUSTER_SLOTS;
}
