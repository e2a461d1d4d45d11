/**
 * Text that is still streaming (a reply shown by editing one message as it grows): redacted, and
 * cut before a tail that may be the first half of a secret, which is shown once it is complete
 * (and then redacted) or when the stream ends.
 */
import { processRedactor, type Redactor } from "../../util/redact.js";
import { holdBackLength } from "../../util/redact-stream.js";

export function redactGrowingText(text: string, redactor: Redactor = processRedactor()): string {
  const redacted = redactor.redact(text);
  if (!redactor.enabled) return redacted;
  const hold = holdBackLength(redacted, redactor.knownSpellings());
  return hold > 0 ? redacted.slice(0, redacted.length - hold).trimEnd() : redacted;
}
