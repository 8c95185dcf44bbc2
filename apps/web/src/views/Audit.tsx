import { useId, useState, type FormEvent } from 'react';
import { getRouteApi } from '@tanstack/react-router';
import type { AuditFilter } from '../api/audit-queries';
import { AuditLog } from '../components/AuditLog';
import type { AuditSearch } from '../routes';

const route = getRouteApi('/audit');

/** An instant as a datetime-local value (the browser's time zone, to the minute). */
export function toLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/**
 * A datetime-local value (local time) as an instant; `end` makes it the last millisecond of that minute, so "until
 * 12:05" keeps the rows written during 12:05.
 */
export function fromLocalInput(value: string, end = false): string | undefined {
  if (!value) return undefined;
  const t = new Date(value).getTime();
  if (Number.isNaN(t)) return undefined;
  return new Date(end ? t + 59_999 : t).toISOString();
}

function toFilter(s: AuditSearch): AuditFilter {
  return {
    ...(s.actor ? { actor: [s.actor] } : {}),
    ...(s.action ? { action: [s.action] } : {}),
    ...(s.target ? { target: [s.target] } : {}),
    ...(s.since ? { since: s.since } : {}),
    ...(s.until ? { until: s.until } : {}),
  };
}

export function Audit() {
  const search = route.useSearch();
  return (
    <>
      <h1>Audit log</h1>
      <p className="muted">
        Every mutating request, accepted or refused, newest first. Filters match exactly (a target is written like{' '}
        <code>device/&lt;id&gt;</code>).
      </p>
      {/* Keyed by the applied search: going back in history resets the inputs to what is shown. */}
      <Filters key={JSON.stringify(search)} search={search} />
      <section aria-labelledby="audit-rows" className="card">
        <h2 id="audit-rows">Rows</h2>
        <AuditLog filter={toFilter(search)} caption="Audit log, newest first" empty="No audit row matches." />
      </section>
    </>
  );
}

function Filters({ search }: { search: AuditSearch }) {
  const navigate = route.useNavigate();
  const id = useId();
  const [draft, setDraft] = useState({
    actor: search.actor ?? '',
    action: search.action ?? '',
    target: search.target ?? '',
    since: toLocalInput(search.since),
    until: toLocalInput(search.until),
  });
  const apply = (e: FormEvent) => {
    e.preventDefault();
    const text = (v: string) => v.trim() || undefined;
    void navigate({
      search: {
        actor: text(draft.actor),
        action: text(draft.action),
        target: text(draft.target),
        since: fromLocalInput(draft.since),
        until: fromLocalInput(draft.until, true),
      },
    });
  };
  const field = (key: keyof typeof draft, label: string, type: 'text' | 'datetime-local' = 'text') => (
    <p>
      <label htmlFor={`${id}-${key}`}>{label}</label>
      <input
        id={`${id}-${key}`}
        type={type}
        value={draft[key]}
        onChange={(e) => setDraft((d) => ({ ...d, [key]: e.target.value }))}
      />
    </p>
  );
  return (
    <form className="card audit-filters" role="search" aria-label="Filter the audit log" onSubmit={apply}>
      {field('actor', 'Actor (token name)')}
      {field('action', 'Action')}
      {field('target', 'Target')}
      {field('since', 'Since (local time)', 'datetime-local')}
      {field('until', 'Until (local time)', 'datetime-local')}
      <div className="buttons">
        <button
          type="button"
          onClick={() => {
            setDraft({ actor: '', action: '', target: '', since: '', until: '' });
            void navigate({ search: {} });
          }}
        >
          Clear
        </button>
        <button type="submit" className="primary">
          Apply filters
        </button>
      </div>
    </form>
  );
}
