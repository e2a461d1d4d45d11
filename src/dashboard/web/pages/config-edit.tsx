/**
 * Editing config on the Config page: one key at a time through `PUT /api/config` (the writer and
 * checks of `hermes config set`). A refusal is shown next to the field it is about, with the
 * did-you-mean as a button that puts the meant key in place; nothing is written on a refusal.
 */
import { useEffect, useState } from "preact/hooks";
import { ApiFailure, apiSend } from "../api.js";
import { notify } from "../components/toast.js";

export interface SaveAnswer {
  key: string;
  target: "config" | "env";
  value: unknown;
  hint?: string;
}

/** What went wrong with a save, and which field it belongs to. */
export interface SaveProblem {
  field: "key" | "value";
  message: string;
  /** The whole key the server thinks was meant (`model.default` for `modle.default`). */
  meant?: string;
  /** A word the value probably meant. */
  word?: string;
}

export function problemOf(error: unknown): SaveProblem {
  if (error instanceof ApiFailure) {
    const body = error.body;
    const meant = typeof body["did_you_mean"] === "string" ? body["did_you_mean"] : undefined;
    const suggestion = typeof body["suggestion"] === "string" ? body["suggestion"] : undefined;
    if (error.status === 403) {
      return { field: "key", message: `The dashboard may not change this key: ${error.message}` };
    }
    if (body["kind"] === "bad_value") {
      return { field: "value", message: error.message, ...(suggestion ? { word: suggestion } : {}) };
    }
    if (body["kind"] === "unknown_key") {
      return { field: "key", message: error.message, ...(meant ? { meant } : {}) };
    }
    return { field: "value", message: error.message };
  }
  return { field: "value", message: error instanceof Error ? error.message : String(error) };
}

export async function saveSetting(key: string, value: string): Promise<SaveAnswer> {
  const answer = await apiSend<SaveAnswer>("PUT", "config", { key, value });
  const where = answer.target === "env" ? ".env" : "config.yaml";
  notify(`Saved ${answer.key} to ${where}${answer.hint ? ` (${answer.hint})` : ""}`);
  return answer;
}

function FieldProblem({
  id,
  problem,
  onUse,
}: {
  id: string;
  problem: SaveProblem;
  onUse: (text: string) => void;
}) {
  const offer = problem.meant ?? problem.word;
  return (
    <div class="field-problem" id={id} role="alert">
      <span>{problem.message}</span>
      {offer ? (
        <button type="button" class="btn small" onClick={() => onUse(offer)}>
          Use {offer}
        </button>
      ) : null}
    </div>
  );
}

/** The "set any key" form: a key (with the known keys offered), a value, Save. */
export function SetKeyForm({
  knownKeys,
  onSaved,
  initialKey = "",
}: {
  knownKeys: string[];
  onSaved: () => void;
  initialKey?: string;
}) {
  const [key, setKey] = useState(initialKey);
  const [value, setValue] = useState("");
  const [problem, setProblem] = useState<SaveProblem | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      await saveSetting(key.trim(), value);
      setValue("");
      onSaved();
    } catch (error) {
      setProblem(problemOf(error));
    } finally {
      setBusy(false);
    }
  };
  const keyProblem = problem?.field === "key" ? problem : null;
  const valueProblem = problem?.field === "value" ? problem : null;
  return (
    <form class="card set-key" onSubmit={submit} aria-labelledby="set-key-title">
      <h2 id="set-key-title">Set a value</h2>
      <p class="muted">
        As <code>hermes config set KEY VALUE</code>: unknown keys and words are refused and nothing is
        written. Lists and mappings take JSON (<code>["a","b"]</code>).
      </p>
      <div class="set-key-row">
        <div class="field">
          <label class="field-label" for="set-key-name">
            Key
          </label>
          <input
            id="set-key-name"
            name="key"
            list="config-known-keys"
            value={key}
            required
            autocomplete="off"
            spellcheck={false}
            placeholder="agent.max_turns"
            aria-invalid={keyProblem ? true : undefined}
            aria-describedby={keyProblem ? "set-key-name-problem" : undefined}
            onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)}
          />
          {keyProblem ? (
            <FieldProblem
              id="set-key-name-problem"
              problem={keyProblem}
              onUse={(text) => {
                setKey(text);
                setProblem(null);
              }}
            />
          ) : null}
        </div>
        <div class="field">
          <label class="field-label" for="set-key-value">
            Value
          </label>
          <input
            id="set-key-value"
            name="value"
            value={value}
            autocomplete="off"
            spellcheck={false}
            aria-invalid={valueProblem ? true : undefined}
            aria-describedby={valueProblem ? "set-key-value-problem" : undefined}
            onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
          />
          {valueProblem ? (
            <FieldProblem
              id="set-key-value-problem"
              problem={valueProblem}
              onUse={(text) => {
                setValue(text);
                setProblem(null);
              }}
            />
          ) : null}
        </div>
        <button type="submit" class="btn primary" disabled={busy || key.trim() === ""}>
          Save
        </button>
      </div>
      <datalist id="config-known-keys">
        {knownKeys.map((k) => (
          <option key={k} value={k} />
        ))}
      </datalist>
    </form>
  );
}

/** An inline editor for one setting row. */
export function RowEditor({
  settingKey,
  initial,
  secret,
  choices,
  onDone,
}: {
  settingKey: string;
  initial: string;
  secret: boolean;
  choices: string[] | undefined;
  onDone: (saved: boolean) => void;
}) {
  const [value, setValue] = useState(secret ? "" : initial);
  const [problem, setProblem] = useState<SaveProblem | null>(null);
  const [busy, setBusy] = useState(false);
  const id = `edit-${settingKey.replace(/[^\w-]/g, "_")}`;
  // The person just pressed Edit on this row: the new value's field takes the focus.
  useEffect(() => document.getElementById(id)?.focus(), [id]);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      await saveSetting(settingKey, value);
      onDone(true);
    } catch (error) {
      setProblem(problemOf(error));
      setBusy(false);
    }
  };
  const isBool = initial === "true" || initial === "false";
  return (
    <form class="row-editor" onSubmit={submit}>
      <label class="sr-only" for={id}>
        New value for {settingKey}
      </label>
      {isBool && !choices ? (
        <select
          id={id}
          value={value}
          onChange={(e) => setValue((e.currentTarget as HTMLSelectElement).value)}
        >
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      ) : secret ? (
        <input
          id={id}
          value={value}
          type="password"
          autocomplete="off"
          placeholder="hidden: type a new value"
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? `${id}-problem` : undefined}
          onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
        />
      ) : (
        <input
          id={id}
          value={value}
          type="text"
          autocomplete="off"
          spellcheck={false}
          list={choices ? `${id}-choices` : undefined}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? `${id}-problem` : undefined}
          onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
        />
      )}
      {choices ? (
        <datalist id={`${id}-choices`}>
          {choices
            .filter((c) => c !== "")
            .map((c) => (
              <option key={c} value={c} />
            ))}
        </datalist>
      ) : null}
      <button type="submit" class="btn primary small" disabled={busy}>
        Save
      </button>
      <button type="button" class="btn small" onClick={() => onDone(false)}>
        Cancel
      </button>
      {problem ? (
        <FieldProblem
          id={`${id}-problem`}
          problem={problem}
          onUse={(text) => {
            setValue(text);
            setProblem(null);
          }}
        />
      ) : null}
    </form>
  );
}

/** Sets an allowlist or credential variable in `.env`; the value is never shown back. */
export function EnvForm({ onSaved }: { onSaved: () => void }) {
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const [problem, setProblem] = useState<SaveProblem | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setProblem(null);
    try {
      await saveSetting(name.trim(), value);
      setName("");
      setValue("");
      onSaved();
    } catch (error) {
      setProblem(problemOf(error));
    }
  };
  return (
    <form class="set-key-row" onSubmit={submit}>
      <div class="field">
        <label class="field-label" for="env-name">
          Variable
        </label>
        <input
          id="env-name"
          value={name}
          required
          autocomplete="off"
          spellcheck={false}
          placeholder="OPENROUTER_API_KEY"
          pattern="[A-Z][A-Z0-9_]*"
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? "env-name-problem" : undefined}
          onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
        />
        {problem ? <FieldProblem id="env-name-problem" problem={problem} onUse={setName} /> : null}
      </div>
      <div class="field">
        <label class="field-label" for="env-value">
          Value
        </label>
        <input
          id="env-value"
          type="password"
          value={value}
          autocomplete="off"
          onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
        />
      </div>
      <button type="submit" class="btn primary" disabled={name.trim() === ""}>
        Save to .env
      </button>
    </form>
  );
}
