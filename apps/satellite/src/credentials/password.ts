import { randomInt } from 'node:crypto';

const classes = ['ABCDEFGHJKLMNPQRSTUVWXYZ', 'abcdefghijkmnopqrstuvwxyz', '23456789', '!#%+-.:=@^_~'];
const alphabet = classes.join('');

/**
 * A strong password for a switch system user: `length` characters drawn uniformly from
 * letters, digits and punctuation that need no quoting in a shell or JSON, with at least one
 * of each class, since NVOS password policies can require every class.
 */
export function generatePassword(length = 32): string {
  const chars = [
    ...classes.map((c) => c[randomInt(c.length)]!),
    ...Array.from({ length: length - classes.length }, () => alphabet[randomInt(alphabet.length)]!),
  ];
  // Fisher–Yates, so the guaranteed characters are not always in front.
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j]!, chars[i]!];
  }
  return chars.join('');
}
