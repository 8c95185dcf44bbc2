/**
 * Streaming multipart/form-data reader for firmware pushes. Field parts are kept whole (they are
 * small JSON); file parts are counted and only their first `keepFileBytes` are kept, so a 200 MB
 * image never sits in memory.
 */
export interface MultipartFile {
  filename: string;
  size: number;
  head: Buffer;
}

export interface MultipartResult {
  fields: Map<string, string>;
  files: Map<string, MultipartFile>;
}

export interface MultipartLimits {
  keepFileBytes: number;
  maxFieldBytes: number;
  maxTotalBytes: number;
}

export class MultipartError extends Error {
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
  }
}

export function boundaryOf(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data/i.test(contentType)) return undefined;
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return m?.[1] ?? m?.[2];
}

type Part = { name: string; filename?: string; chunks: Buffer[]; size: number };

export async function readMultipart(
  body: AsyncIterable<Buffer>,
  boundary: string,
  limits: MultipartLimits,
): Promise<MultipartResult> {
  // Treat the body as if it began with CRLF so the first boundary looks like every later one.
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const result: MultipartResult = { fields: new Map(), files: new Map() };
  let pending: Buffer = Buffer.from('\r\n');
  let state: 'preamble' | 'headers' | 'body' | 'done' = 'preamble';
  let part: Part | undefined;
  let total = 0;

  const emit = (bytes: Buffer) => {
    if (!part || bytes.length === 0) return;
    part.size += bytes.length;
    if (part.filename !== undefined) {
      const kept = part.chunks.reduce((n, c) => n + c.length, 0);
      if (kept < limits.keepFileBytes) part.chunks.push(Buffer.from(bytes.subarray(0, limits.keepFileBytes - kept)));
    } else {
      if (part.size > limits.maxFieldBytes)
        throw new MultipartError(`multipart field ${part.name} exceeds ${limits.maxFieldBytes} bytes`);
      part.chunks.push(Buffer.from(bytes));
    }
  };
  const finish = () => {
    if (!part) return;
    const data = Buffer.concat(part.chunks);
    if (part.filename !== undefined)
      result.files.set(part.name, { filename: part.filename, size: part.size, head: data });
    else result.fields.set(part.name, data.toString('utf8'));
    part = undefined;
  };

  for await (const chunk of body) {
    total += chunk.length;
    if (total > limits.maxTotalBytes) throw new MultipartError('multipart body exceeds the maximum image size', true);
    if (state === 'done') continue; // epilogue: drain and ignore
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      if (state === 'preamble' || state === 'body') {
        const at = pending.indexOf(delimiter);
        if (at < 0) {
          // Keep a tail that may hold the start of a delimiter split across chunks.
          const safe = Math.max(0, pending.length - delimiter.length + 1);
          if (state === 'body') emit(pending.subarray(0, safe));
          pending = pending.subarray(safe);
          break;
        }
        if (state === 'body') {
          emit(pending.subarray(0, at));
          finish();
        }
        pending = pending.subarray(at + delimiter.length);
        state = 'headers';
      }
      if (state === 'headers') {
        if (pending.length < 2) break;
        if (pending[0] === 0x2d && pending[1] === 0x2d) {
          state = 'done';
          pending = Buffer.alloc(0);
          break;
        }
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) {
          if (pending.length > 16 * 1024) throw new MultipartError('multipart part headers too long');
          break;
        }
        part = parsePartHeaders(pending.subarray(0, end).toString('latin1'));
        pending = pending.subarray(end + 4);
        state = 'body';
        continue;
      }
      break;
    }
  }
  if (state !== 'done') throw new MultipartError('multipart body ended before the closing boundary');
  return result;
}

function parsePartHeaders(block: string): Part {
  const disposition = block
    .split('\r\n')
    .map((l) => l.trim())
    .find((l) => /^content-disposition:/i.test(l));
  const name = disposition && /\bname="([^"]*)"/i.exec(disposition)?.[1];
  if (!name) throw new MultipartError('multipart part without a Content-Disposition name');
  const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
  return { name, ...(filename !== undefined ? { filename } : {}), chunks: [], size: 0 };
}
