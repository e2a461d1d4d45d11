/** The error a configuration that names no usable provider raises (resolve.ts and the provider modules). */
/**
 * The configuration names no usable provider: none at all, an unknown one, or one missing its key
 * or URL. The message is two lines: what is wrong, then what to do. A configuration error (exit 2).
 */
export class NoProviderError extends Error {
  /** What is missing, when it is the provider's endpoint (its catalog id in `provider`). */
  readonly missing: "base_url" | undefined;
  readonly provider: string | undefined;
  constructor(message: string, detail?: { missing: "base_url"; provider: string }) {
    super(message);
    this.name = "NoProviderError";
    this.missing = detail?.missing;
    this.provider = detail?.provider;
  }
}
