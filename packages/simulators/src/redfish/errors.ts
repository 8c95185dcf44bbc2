import { message, type MessageKey, type RedfishMessage } from './messages.js';

/** A Redfish error reply (DSP0266 §9.6): thrown by handlers, written by the server. */
export interface RedfishErrorReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Error body whose code is a Base registry MessageId; `extra` adds more ExtendedInfo entries. */
export function redfishError(
  status: number,
  key: MessageKey<'Base'>,
  args: string[] = [],
  headers?: Record<string, string>,
  extra: RedfishMessage[] = [],
): RedfishErrorReply {
  const first = message('Base', key, args);
  return {
    status,
    ...(headers ? { headers } : {}),
    body: { error: { code: first.MessageId, message: first.Message, '@Message.ExtendedInfo': [first, ...extra] } },
  };
}

export const isErrorReply = (v: unknown): v is RedfishErrorReply =>
  typeof v === 'object' && v !== null && typeof (v as { status?: unknown }).status === 'number' && 'body' in v;

export const notFound = (path: string): RedfishErrorReply =>
  redfishError(404, 'ResourceNotFound', [typeFromPath(path), path]);

export const methodNotAllowed = (allow: string): RedfishErrorReply =>
  redfishError(405, 'OperationNotAllowed', [], { Allow: allow });

function typeFromPath(path: string): string {
  const parts = path.split('/').filter(Boolean);
  return parts.length > 2 ? parts[2]! : 'Resource';
}
