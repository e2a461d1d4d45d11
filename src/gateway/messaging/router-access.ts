/**
 * Who may talk to the gateway, decided per message: the platform's allowlists from the
 * environment (re-read through `authEnv`, so `.env` edits count at once), `unauthorized_dm_behavior`,
 * and the users approved through pairing, read afresh from the pairing store (any backend) before
 * each message. The adapters' synchronous checks use the approvals last read.
 */

import { authorize, unauthorizedDmBehavior } from "../../state/gateway/allowlist.js";
import type { MessageSource } from "../platforms/types.js";
import type { RouterOptions } from "./router-types.js";

export class RouterAccess {
  private readonly approvedSeen = new Map<string, ReadonlySet<string>>();

  constructor(private readonly options: Pick<RouterOptions, "pairing" | "authEnv" | "env" | "config">) {}

  /** Users approved through pairing on `platform`, read afresh (and kept for the adapters' checks). */
  async approvedOn(platform: string): Promise<ReadonlySet<string>> {
    const ids = await this.options.pairing.approvedIds(platform);
    this.approvedSeen.set(platform, ids);
    return ids;
  }

  /** The decision for `source`; `approved` defaults to the pairing approvals last read. */
  authorized(source: MessageSource, approved = this.approvedSeen.get(source.platform) ?? new Set<string>()) {
    const { platform, userId, userName } = source;
    const env = this.options.authEnv?.() ?? this.options.env;
    const unauthorizedDm = unauthorizedDmBehavior(platform, this.options.config, env);
    const who = { platform, userId, userName, isDm: source.chatType === "dm" };
    return authorize(who, { env, approved, unauthorizedDm });
  }
}
