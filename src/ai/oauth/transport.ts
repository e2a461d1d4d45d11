/**
 * A transport over an OAuth login: before each model call it asks the login for its current
 * credential (renewed when about to expire) and rebuilds the wire client when the bearer changed;
 * when the provider answers 401 before anything streamed, it renews the login once and repeats the
 * call. A login that cannot be renewed ends the call with a 401 `ProviderError` whose message
 * names the command that logs in again.
 */

import type { ApiMode } from "../types.js";
import { type ChatRequest, ProviderError, type StreamEvent, type Transport } from "../types.js";
import type { OAuthSource } from "./source.js";
import { type OAuthCredential, OAuthError } from "./types.js";

export interface OAuthTransportOptions {
  apiMode: ApiMode;
  /** Where bearers come from: a stored login, or anything that renews the same way (Entra ID). */
  source: Pick<OAuthSource, "current">;
  /** A wire transport sending `credential` (its bearer, base URL and headers). */
  build: (credential: OAuthCredential) => Promise<Transport>;
  /** The endpoint named in errors raised here. */
  baseUrl: string;
}

export function createOAuthTransport(options: OAuthTransportOptions): Transport {
  let built: { token: string; transport: Transport } | undefined;

  const transportFor = async (force: boolean, stale?: string): Promise<Transport> => {
    let credential: OAuthCredential;
    try {
      credential = await options.source.current(force ? { force, ...(stale ? { stale } : {}) } : {});
    } catch (error) {
      throw asProviderError(error, options.baseUrl);
    }
    if (built?.token !== credential.accessToken) {
      built = { token: credential.accessToken, transport: await options.build(credential) };
    }
    return built.transport;
  };

  return {
    apiMode: options.apiMode,
    stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
      return streamRenewingOnce(
        () => transportFor(false),
        () => transportFor(true, built?.token),
        request,
        signal,
      );
    },
  };
}

/**
 * Streams `request` through the transport `first` gives; when the provider answers 401 before
 * anything streamed, through the one `renew` gives (a fresh bearer), once. Any other provider
 * failure, or a second 401, ends the call through `explain` (default: as it is); an abort or a
 * failure after events were yielded is never retried.
 */
export async function* streamRenewingOnce(
  first: () => Promise<Transport>,
  renew: () => Promise<Transport>,
  request: ChatRequest,
  signal: AbortSignal | undefined,
  explain: (error: ProviderError) => unknown = (error) => error,
): AsyncIterable<StreamEvent> {
  let transport = await first();
  let renewed = false;
  for (;;) {
    let started = false;
    try {
      for await (const event of transport.stream(request, signal)) {
        started = true;
        yield event;
      }
      return;
    } catch (error) {
      if (!(error instanceof ProviderError) || started || signal?.aborted) throw error;
      if (error.status === 401 && !renewed) {
        renewed = true;
        transport = await renew();
        continue;
      }
      throw explain(error);
    }
  }
}

/** An `OAuthError` as the 401 the error classifier and the user understand; others unchanged. */
function asProviderError(error: unknown, baseUrl: string): unknown {
  if (!(error instanceof OAuthError)) return error;
  return new ProviderError(`${error.provider} login: ${error.message}`, {
    status: error.relogin ? 401 : undefined,
    transport: !error.relogin,
    baseUrl,
    cause: error,
  });
}
