import { useId, useRef, useState, type ReactNode } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ErrorView } from './Status';

interface Props<T> {
  /** The button's text. */
  label: string;
  /** The dialog's question, naming the device or rack it acts on. */
  title: string;
  children?: ReactNode;
  /** For destructive actions: the text (the device name) the user must type to enable the confirm button. */
  typed?: string;
  danger?: boolean;
  /** False while the dialog's own fields are not complete (e.g. a required reason): the confirm button waits. */
  ready?: boolean;
  run: () => Promise<T>;
  onDone?: (result: T) => void;
}

/** A button that asks before acting, shows the hub's error in the dialog, and refreshes what the action changes. */
export function ConfirmAction<T>({ label, title, children, typed, danger, ready = true, run, onDone }: Props<T>) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [typedText, setTypedText] = useState('');
  const queryClient = useQueryClient();
  const titleId = useId();
  const inputId = useId();
  const mutation = useMutation({
    mutationFn: run,
    onSuccess: (result) => {
      dialog.current?.close();
      void queryClient.invalidateQueries();
      onDone?.(result);
    },
  });
  const open = () => {
    mutation.reset();
    setTypedText('');
    dialog.current?.showModal();
  };
  const confirmable = ready && (!typed || typedText === typed);
  return (
    <>
      <button type="button" className={danger ? 'danger' : undefined} onClick={open}>
        {label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId} className="confirm">
        <form
          method="dialog"
          onSubmit={(e) => {
            e.preventDefault();
            if (confirmable) mutation.mutate();
          }}
        >
          <h2 id={titleId}>{title}</h2>
          {children}
          {typed && (
            <p>
              <label htmlFor={inputId}>
                Type <strong>{typed}</strong> to confirm
              </label>
              <input id={inputId} autoComplete="off" value={typedText} onChange={(e) => setTypedText(e.target.value)} />
            </p>
          )}
          <ErrorView error={mutation.error} title={`${label} was refused`} />
          <div className="buttons">
            <button type="button" onClick={() => dialog.current?.close()}>
              Cancel
            </button>
            <button
              type="submit"
              className={danger ? 'danger' : 'primary'}
              disabled={!confirmable || mutation.isPending}
            >
              {mutation.isPending ? `${label}…` : label}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}
