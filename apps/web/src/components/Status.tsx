import { ApiError } from '@fleet/client';

/** A labelled progress indicator: screen readers announce what is loading. */
export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      <span className="spinner" aria-hidden="true" />
      Loading {what}…
    </p>
  );
}

/** An API error with its code, message and the fields it names; any other error with its message. */
export function ErrorView({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const apiError = error instanceof ApiError ? error : undefined;
  return (
    <div className="error" role="alert">
      <strong>{title ?? 'The request failed'}</strong>
      {apiError && (
        <span className="code">
          {' '}
          {apiError.status} {apiError.code}
        </span>
      )}
      <p>{error instanceof Error ? error.message : String(error)}</p>
      {apiError && apiError.details.length > 0 && (
        <ul aria-label="Fields">
          {apiError.details.map((d, i) => (
            <li key={i}>
              {d.field && <code>{d.field}</code>} {d.issue}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

const tones: Record<string, string> = {
  On: 'ok',
  Off: 'off',
  PoweringOn: 'busy',
  PoweringOff: 'busy',
  Paused: 'warn',
  Unknown: 'unknown',
  queued: 'unknown',
  running: 'busy',
  cancelling: 'busy',
  succeeded: 'ok',
  completed: 'ok',
  updated: 'ok',
  compliant: 'ok',
  active: 'ok',
  failed: 'bad',
  outdated: 'warn',
  cancelled: 'off',
  skipped: 'off',
  no_manifest: 'unknown',
  accepted: 'ok',
  rejected: 'bad',
  unknown: 'unknown',
  // Fleet's device lifecycle
  discovered: 'unknown',
  enrolling: 'busy',
  enrolled: 'ok',
  burning_in: 'busy',
  certified: 'ok',
  in_service: 'ok',
  quarantined: 'warn',
  remediating: 'busy',
  rma: 'bad',
  decommissioned: 'off',
  // Health readings, facility events and SLA breaches
  healthy: 'ok',
  faulty: 'bad',
  Warning: 'warn',
  Critical: 'bad',
  info: 'unknown',
  warning: 'warn',
  critical: 'bad',
  recorded: 'ok',
  awaiting_approval: 'warn',
  powering_off: 'busy',
  done: 'ok',
  open: 'warn',
  resolved: 'ok',
  // RMA cases (open as above)
  shipped: 'busy',
  replaced: 'busy',
  revalidating: 'busy',
  closed: 'ok',
  // Sites and their satellites
  connected: 'ok',
  disconnected: 'bad',
  draining: 'warn',
  // Condition statuses (every condition type is stated positively: True is good)
  True: 'ok',
  False: 'bad',
};

export const toneOf = (value: string | null | undefined) => (value ? (tones[value] ?? 'unknown') : 'unknown');

/** A state as text with a colour; the text carries the meaning, the colour only repeats it. */
export function Badge({ value }: { value: string | null | undefined }) {
  return <span className={`badge tone-${toneOf(value)}`}>{value ?? '—'}</span>;
}
