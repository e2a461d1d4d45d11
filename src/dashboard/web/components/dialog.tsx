/**
 * Confirmations in a native modal `<dialog>` (focus moves into it, Escape cancels, focus returns
 * afterwards): `await confirmAction({ title, body, confirm: "Delete", danger: true })`.
 */
import { render } from "preact";
import { useEffect, useRef } from "preact/hooks";

export interface ConfirmOptions {
  title: string;
  body?: string;
  confirm?: string;
  danger?: boolean;
}

function ConfirmDialog({ options, done }: { options: ConfirmOptions; done: (ok: boolean) => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    dialog.showModal();
    const onClose = () => done(dialog.returnValue === "yes");
    dialog.addEventListener("close", onClose);
    return () => dialog.removeEventListener("close", onClose);
  }, [done]);
  return (
    <dialog ref={ref} class="dialog" aria-labelledby="confirm-title">
      <form method="dialog">
        <h2 id="confirm-title">{options.title}</h2>
        {options.body ? <p>{options.body}</p> : null}
        <div class="actions">
          <button type="submit" value="no" class="btn" autofocus>
            Cancel
          </button>
          <button type="submit" value="yes" class={`btn ${options.danger ? "danger" : "primary"}`}>
            {options.confirm ?? "OK"}
          </button>
        </div>
      </form>
    </dialog>
  );
}

export function confirmAction(options: ConfirmOptions): Promise<boolean> {
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const host = document.createElement("div");
  document.body.append(host);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      render(null, host);
      host.remove();
      opener?.focus();
      resolve(ok);
    };
    render(<ConfirmDialog options={options} done={done} />, host);
  });
}
