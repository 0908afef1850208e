// Key names and script SHA-1s are hashed with @noble/hashes (audited, pure JS) rather than
// node:crypto, so core runs on every JavaScript runtime (workerd, Deno, Bun, browsers) without a
// Node compatibility layer. The digests are the same bytes, so existing key names do not change.
import { sha1 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/** SHA-1 of the UTF-8 bytes of `text`, as lowercase hex: the name Redis gives a loaded script. */
export function sha1Hex(text: string): string {
  return bytesToHex(sha1(utf8ToBytes(text)));
}

/** SHA-256 of the UTF-8 bytes of `text`, as unpadded base64url. */
export function sha256Base64url(text: string): string {
  const digest = sha256(utf8ToBytes(text));
  let binary = '';
  for (const byte of digest) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * The UTF-8 length of `text`, counted without encoding it. A lone surrogate counts 3 bytes, as
 * the U+FFFD an encoder writes for it.
 */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code <= 0xdbff && code >= 0xd800 && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 2; // a pair: 2 units, 4 bytes
      i++;
    } else bytes += 2;
  }
  return bytes;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
