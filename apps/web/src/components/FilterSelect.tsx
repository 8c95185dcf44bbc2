import { useId } from 'react';

/** One filter of a list as a labelled select: "Any" clears it. Options are values, or [value, text] pairs. */
export function FilterSelect({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string | undefined;
  options: readonly (string | readonly [string, string])[];
  onChange: (value: string | undefined) => void;
}) {
  const id = useId();
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value ?? ''} onChange={(e) => onChange(e.target.value || undefined)}>
        <option value="">Any</option>
        {options.map((o) => {
          const [v, text] = typeof o === 'string' ? [o, o] : o;
          return (
            <option key={v} value={v}>
              {text}
            </option>
          );
        })}
      </select>
    </>
  );
}

/** "Load more" while the hub has older items. */
export function LoadMore({ more, loading, load }: { more: boolean; loading: boolean; load: () => void }) {
  if (!more) return null;
  return (
    <p>
      <button type="button" onClick={load} disabled={loading}>
        {loading ? 'Loading more…' : 'Load more'}
      </button>
    </p>
  );
}
