import type { ByteRange } from './blob-store.js';

/**
 * The one range a `Range: bytes=...` header asks of a `size`-byte blob (RFC 9110 §14):
 * `N-`, `N-M` (M clamped to the end) or the suffix `-N`. Undefined means "send it all": no
 * header, a malformed one or several ranges, which a server may ignore. 'unsatisfiable'
 * (416) when the range starts past the end.
 */
export function parseByteRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  const m = header === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    return suffix === 0 || size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const last = m[2] === '' ? Infinity : Number(m[2]);
  if (last < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(last, size - 1) };
}
