import { readFileSync } from 'node:fs';
import { UsageError } from '../exit-codes.js';
import type { FleetContext } from './config-file.js';

/**
 * The context's API token, read from its file or environment variable. Returns undefined when the context names
 * no source (the hub then answers 401); a named source that is empty or unreadable is a usage error that says
 * where it looked, never what it found.
 */
export function resolveToken(context: FleetContext, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (context.tokenEnv) {
    const token = env[context.tokenEnv]?.trim();
    if (!token) throw new UsageError(`the context reads its token from $${context.tokenEnv}, which is not set`);
    return token;
  }
  if (context.tokenFile) {
    let text: string;
    try {
      text = readFileSync(context.tokenFile, 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read token file ${context.tokenFile}: ${(err as NodeJS.ErrnoException).code}`);
    }
    const token = text.split('\n')[0]!.trim();
    if (!token) throw new UsageError(`token file ${context.tokenFile} is empty`);
    return token;
  }
  return undefined;
}
