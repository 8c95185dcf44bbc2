import { useId, useState, type ReactNode } from 'react';
import { ConfirmAction } from './ConfirmAction';

interface Props<T> {
  label: string;
  title: string;
  danger?: boolean;
  /** What the reason is kept with, for the field's label. */
  keptIn: string;
  children?: ReactNode;
  /** Further fields of the dialog; false while they are not complete. */
  ready?: boolean;
  run: (reason: string) => Promise<T>;
  onDone?: (result: T) => void;
}

/** A ConfirmAction whose dialog asks for the reason the hub requires: the confirm button waits for one. */
export function ReasonAction<T>({ label, title, danger, keptIn, children, ready = true, run, onDone }: Props<T>) {
  const [reason, setReason] = useState('');
  const reasonId = useId();
  return (
    <ConfirmAction
      label={label}
      title={title}
      danger={danger}
      ready={ready && reason.trim() !== ''}
      run={() => run(reason.trim())}
      onDone={(result) => {
        setReason('');
        onDone?.(result);
      }}
    >
      {children}
      <p>
        <label htmlFor={reasonId}>Reason (required; kept in {keptIn})</label>
        <textarea
          id={reasonId}
          required
          maxLength={2000}
          rows={3}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
        />
      </p>
    </ConfirmAction>
  );
}
