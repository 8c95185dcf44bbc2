/**
 * The hub keeps an enrolment's hardware record as the workflow wrote it and serves it untyped (DeviceHardware.record):
 * this reads the fields the console shows, leaving out any that are missing or of another type.
 */

export interface HardwarePart {
  id: string;
  kind: string;
  model?: string;
  partNumber?: string;
  serialNumber?: string;
}

/** How the hardware differs from its node type's expected profile (the profile check's findings). */
export interface ProfileDifference {
  code: string;
  subject: string;
  expected?: string;
  actual?: string;
  message: string;
}

export interface HardwareSummary {
  manufacturer?: string;
  model?: string;
  sku?: string;
  partNumber?: string;
  biosVersion?: string;
  cpuCount?: number;
  gpuCount?: number;
  memoryGiB?: number;
  gpuMemoryGiB?: number;
  parts: HardwarePart[];
  differences: ProfileDifference[];
}

type Fields = Record<string, unknown>;

const isFields = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function part(v: unknown): HardwarePart | undefined {
  if (!isFields(v)) return undefined;
  const id = text(v['id']);
  if (id === undefined) return undefined;
  const kind = text(v['kind']) ?? 'part';
  return {
    id,
    kind,
    model: text(v['model']),
    partNumber: text(v['partNumber']),
    serialNumber: text(v['serialNumber']),
  };
}

function difference(v: unknown): ProfileDifference | undefined {
  if (!isFields(v)) return undefined;
  const [code, message] = [text(v['code']), text(v['message'])];
  if (code === undefined || message === undefined) return undefined;
  return { code, subject: text(v['subject']) ?? '', expected: text(v['expected']), actual: text(v['actual']), message };
}

const listOf = <T>(v: unknown, item: (x: unknown) => T | undefined): T[] =>
  Array.isArray(v) ? v.flatMap((x) => item(x) ?? []) : [];

export function hardwareSummary(record: Fields): HardwareSummary {
  return {
    manufacturer: text(record['manufacturer']),
    model: text(record['model']),
    sku: text(record['sku']),
    partNumber: text(record['partNumber']),
    biosVersion: text(record['biosVersion']),
    cpuCount: count(record['cpuCount']),
    gpuCount: count(record['gpuCount']),
    memoryGiB: count(record['memoryGiB']),
    gpuMemoryGiB: count(record['gpuMemoryGiB']),
    parts: listOf(record['parts'], part),
    differences: listOf(record['differences'], difference),
  };
}
