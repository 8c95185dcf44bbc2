/** History as text with every payload's bytes decoded, so a secret cannot hide in base64. */
export function historyText(value: unknown): string {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (Array.isArray(value)) return value.map(historyText).join(' ');
  if (value && typeof value === 'object')
    return Object.entries(value)
      .map(([k, v]) => `${k}=${historyText(v)}`)
      .join(' ');
  return String(value);
}
